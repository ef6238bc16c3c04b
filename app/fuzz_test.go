package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/ansight-go/ansight/app/internal/transcript"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// FuzzHandle feeds arbitrary messages to the dispatcher (the app's network parser): it
// must never panic, must answer every message it claims with exactly one valid response
// envelope (followed only by well-formed ASFT frames), and must not write anything for a
// message it does not claim. Seeds: the committed corpus plus every message of the
// conformance transcripts.
func FuzzHandle(f *testing.F) {
	files, _ := filepath.Glob("testdata/transcripts/*.txtar")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, sec := range transcript.Parse(data).Files {
			if sec.Name == "send" {
				f.Add(sec.Data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		synctest.Test(t, func(t *testing.T) { // after delays pass in fake time
			fx := newFixture(t, Options{})
			rec := &recorder{}
			claimed, err := fx.app.Handle(context.Background(), msg, rec)
			if err != nil {
				t.Fatal(err)
			}
			msgs := rec.take()
			if !claimed {
				if len(msgs) != 0 {
					t.Fatalf("wrote %d messages for an unclaimed message", len(msgs))
				}
				return
			}
			if len(msgs) == 0 || msgs[0].typ != transport.MessageText {
				t.Fatal("no response")
			}
			env, err := wire.DecodeEnvelope(msgs[0].data)
			if err != nil {
				t.Fatalf("invalid response %q: %v", msgs[0].data, err)
			}
			if !wire.IsResponse(env.Type) {
				t.Fatalf("response type %q", env.Type)
			}
			if _, err := wire.DecodePayload(env.Payload, wire.DefaultMaxInflatedBytes); err != nil {
				t.Fatalf("response payload: %v", err)
			}
			for _, m := range msgs[1:] {
				if m.typ != transport.MessageBinary {
					t.Fatal("a second text message")
				}
				if _, err := wire.ParseFrame(m.data); err != nil {
					t.Fatalf("invalid frame: %v", err)
				}
			}
		})
	})
}
