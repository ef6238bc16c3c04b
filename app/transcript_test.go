package app

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/internal/transcript"
	"github.com/ansight-go/ansight/wire"
)

var update = flag.Bool("update", false, "rewrite the expected output of the transcripts in testdata/transcripts")

// Conformance transcripts (testdata/transcripts/*.txtar) replay a host→app message
// sequence against the fixture app and compare every app→host message byte for byte. The
// clock and the id source are pinned, so responses are reproducible.
//
// Sections, in order:
//
//	-- setup --   lines: "guard <disabled|readonly|readwrite|fullaccess|discovery-only>",
//	              "set <key>=<value>" (fixture state, e.g. map.loaded=false)
//	-- send --    one message, sent as written (it may span lines)
//	-- expect --  the app's messages, one per line, rendered by package internal/transcript
//	              ("text <json>", "binary ASFT …")
//
// go test -run TestTranscripts -update rewrites the expect sections.
func TestTranscripts(t *testing.T) {
	transcript.Check(t, "testdata/transcripts/*.txtar", *update, func(t *testing.T, ar transcript.Archive) []string {
		var got []string
		// synctest: after.delayMilliseconds passes in fake time.
		synctest.Test(t, func(t *testing.T) { got = replay(t, ar) })
		return got
	})
}

// replay runs the transcript and returns, for each expect section (by index), the
// rendered messages of the send before it.
func replay(t *testing.T, ar transcript.Archive) []string {
	f := newFixture(t, Options{})
	got := make([]string, len(ar.Files))
	var last []transcript.Message
	for i, sec := range ar.Files {
		switch sec.Name {
		case "setup":
			for _, l := range transcript.Lines(string(sec.Data)) {
				setup(t, f, l)
			}
		case "send":
			r := &recorder{}
			ok, err := f.app.Handle(context.Background(), bytes.TrimSpace(sec.Data), r)
			if err != nil {
				t.Fatalf("section %d: Handle: %v", i, err)
			}
			if !ok {
				r.msgs = append(r.msgs, message{typ: 0, data: []byte("(not a tool request)")})
			}
			last = last[:0]
			for _, m := range r.take() {
				last = append(last, transcript.Message{Type: m.typ, Data: m.data})
			}
		case "expect":
			got[i] = transcript.Render(t, last)
			last = nil
		default:
			t.Fatalf("unknown section %q", sec.Name)
		}
	}
	return got
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
