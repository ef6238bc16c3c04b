package files_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/app/internal/transcript"
	"github.com/ansight-go/ansight/catalog"
)

// The transcripts in testdata/transcripts replay the official host's exact requests for the
// file and artifact tools — `app push-file` (AppFilePush's argument order, root last),
// its binary download manager (tool.download.<guid> ids, chunkBytes, downloadId, no
// "after"), the artifacts.query it sends when a session opens, an agent's
// artifacts.request — against the tools over the test sandbox, and compare every answer
// byte for byte. The sandbox's directory is written $SANDBOX in requests and answers; the
// clock, the modification times of the sandbox and the ids are pinned; the modification
// time of a file pushed during the replay is written <now>.
//
// go test ./app/files -run TestTranscripts -update rewrites the expect sections.
// modified matches a file's modification time and version.
var modified = regexp.MustCompile(`"lastModifiedUtc":"([^"]*)","version":"(\d+):\d+"`)

// unpin writes the modification time of a file changed during the replay as <now>.
func unpin(s string) string {
	return modified.ReplaceAllStringFunc(s, func(m string) string {
		sub := modified.FindStringSubmatch(m)
		if sub[1] == pinnedNow.Format(time.RFC3339Nano) {
			return m
		}
		return `"lastModifiedUtc":"<now>","version":"` + sub[2] + `:<now>"`
	})
}

func TestTranscripts(t *testing.T) {
	t.Parallel()
	transcript.Check(t, "testdata/transcripts/*.txtar", func(t *testing.T, ar transcript.Archive) []string {
		s := newSandbox(t)
		// Critical tools are exposed (files.delete_file).
		a := app.New(app.Options{Clock: func() time.Time { return pinnedNow }, IDs: transcript.CountingIDs(), Guard: catalog.GuardFullAccess})
		if err := files.Register(a, s.options()); err != nil {
			t.Fatal(err)
		}
		if err := files.RegisterArtifacts(a, exportProvider(new(atomic.Int32))); err != nil {
			t.Fatal(err)
		}
		return transcript.Replayer{
			Handle: func(msg []byte, rec *transcript.Recorder) (bool, error) {
				return a.Handle(context.Background(), bytes.ReplaceAll(msg, []byte("$SANDBOX"), []byte(s.dir)), rec)
			},
			Fix: func(rendered string) string { return unpin(strings.ReplaceAll(rendered, s.dir, "$SANDBOX")) },
		}.Replay(t, ar)
	})
}
