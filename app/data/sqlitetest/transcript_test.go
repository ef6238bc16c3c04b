package sqlitetest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/data"
	"github.com/ansight-go/ansight/app/internal/transcript"
	"github.com/ansight-go/ansight/catalog"
)

// fileFacts matches the size and time of the database file in a listing, which depend on
// SQLite's page layout and the test's clock.
var fileFacts = regexp.MustCompile(`"sizeBytes":\d+,"lastModifiedUtc":"[^"]*"`)

// The transcripts in testdata/transcripts replay the official host's requests for the data
// tools against the test database and compare every answer byte for byte.
//
// go test ./app/data -run TestTranscripts -update rewrites the expect sections.
func TestTranscripts(t *testing.T) {
	t.Parallel()
	transcript.Check(t, "testdata/transcripts/*.txtar", func(t *testing.T, ar transcript.Archive) []string {
		dir := t.TempDir()
		db := notesDB(t, dir, 3)
		if err := os.Chtimes(filepath.Join(dir, "notes.db"), pinnedNow, pinnedNow); err != nil {
			t.Fatal(err)
		}
		a := app.New(app.Options{Clock: func() time.Time { return pinnedNow }, IDs: transcript.CountingIDs(), Guard: catalog.GuardFullAccess})
		if err := data.Register(a, data.Options{QueryTimeout: time.Hour, Databases: []data.Database{{Name: "notes", DB: db, Description: "the app's notes"}}}); err != nil {
			t.Fatal(err)
		}
		return transcript.Replayer{
			Handle: func(msg []byte, rec *transcript.Recorder) (bool, error) {
				return a.Handle(context.Background(), bytes.ReplaceAll(msg, []byte("$DB"), []byte(dir)), rec)
			},
			Fix: func(rendered string) string {
				return fileFacts.ReplaceAllString(strings.ReplaceAll(rendered, dir, "$DB"), `"sizeBytes":<size>,"lastModifiedUtc":"<pinned>"`)
			},
		}.Replay(t, ar)
	})
}
