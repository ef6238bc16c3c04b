package app

import (
	"context"
	"strings"
	"testing"

	"github.com/ansight-go/ansight/app/internal/transcript"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// Conformance transcripts (testdata/transcripts/*.txtar) replay a host→app message
// sequence against the fixture app and compare every app→host message byte for byte. The
// clock and the id source are pinned, so responses are reproducible.
//
// Sections, in order:
//
//	-- setup --   lines: "guard <disabled|readonly|readwrite|fullaccess|discovery-only>",
//	              "set <key>=<value>" (fixture state, e.g. map.loaded=false)
//	-- send --    one message, sent as written (it may span lines)
//	-- expect --  the app's messages, one per line, rendered by package app/internal/transcript
//	              ("text <json>", "binary ASFT …")
//
// go test -run TestTranscripts -update rewrites the expect sections.
func TestTranscripts(t *testing.T) {
	t.Parallel()
	transcript.Check(t, "testdata/transcripts/*.txtar", replay)
}

// replay runs the transcript against a fresh fixture.
func replay(t *testing.T, ar transcript.Archive) []string {
	f := newFixture(t, Options{})
	return transcript.Replayer{
		Handle: func(msg []byte, rec *transcript.Recorder) (bool, error) {
			return f.app.Handle(context.Background(), msg, rec)
		},
		Setup: func(line string) { setup(t, f, line) },
	}.Replay(t, ar)
}

func setup(t *testing.T, f *fixture, line string) {
	verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch verb {
	case "guard":
		g, ok := map[string]catalog.Guard{
			"disabled":       catalog.GuardDisabled,
			"readonly":       catalog.GuardReadOnly,
			"readwrite":      catalog.GuardReadWrite,
			"fullaccess":     catalog.GuardFullAccess,
			"discovery-only": {DiscoveryEnabled: true, ExecutionEnabled: false, MaxPolicy: wire.PolicyCritical},
		}[arg]
		if !ok {
			t.Fatalf("unknown guard %q", arg)
		}
		if err := f.app.SetGuard(g); err != nil {
			t.Fatal(err)
		}
	case "set":
		k, v, _ := strings.Cut(arg, "=")
		f.set(k, v)
	default:
		t.Fatalf("unknown setup line %q", line)
	}
}
