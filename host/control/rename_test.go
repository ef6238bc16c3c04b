package control

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/wire"
)

// Rename over the socket: the label is kept by the recorder, shown by Session and
// Recordings, announced to Events as an update; an unknown session and a host that
// records nothing are refused with the API's codes.
func TestRenameOverTheSocket(t *testing.T) { // not parallel: Listen sets the process umask for a moment
	rec, err := recording.Open(recording.Options{Dir: t.TempDir(), MinFrameInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	srv, err := host.New(host.Options{Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	b := New(srv, Options{Version: "test", Recorder: rec})
	c := serve(t, b)
	ctx := t.Context()
	const id = "com-example-app-001"
	rec.RecordSession(id, "disconnected", time.Now(), []byte(`{"id":"`+id+`","appId":"com.example.app"}`))
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	events := make(chan hostapi.Event, 1)
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	subscribed := make(chan struct{})
	go b.Events(ectx, func(ev hostapi.Event) error { events <- ev; return nil })
	// Events subscribes before it reads; a rename published earlier would be missed, so
	// rename until one is seen (each rename publishes one).
	go func() {
		defer close(subscribed)
		for ectx.Err() == nil {
			if _, err := c.Rename(ctx, id, hostapi.RenameRequest{Label: "checkout run"}); err != nil {
				t.Error(err)
				return
			}
			select {
			case ev := <-events:
				if ev != (hostapi.Event{Kind: hostapi.EventUpdated, SessionID: id}) {
					t.Errorf("event %+v", ev)
				}
				return
			case <-time.After(10 * time.Millisecond): // not a threshold: how often to try again
			}
		}
	}()
	<-subscribed

	s, err := c.Session(ctx, id)
	if err != nil || s.Label != "checkout run" {
		t.Fatalf("Session = %+v, %v", s, err)
	}
	list, err := c.Recordings(ctx)
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].Label != "checkout run" {
		t.Fatalf("Recordings = %+v, %v", list, err)
	}
	if _, err := c.Rename(ctx, "no-such-session", hostapi.RenameRequest{Label: "x"}); wire.CodeOf(err) != wire.CodeSessionNotFound {
		t.Errorf("an unknown session: %v", err)
	}

	off := New(srv, Options{Version: "test"})
	if _, err := off.Rename(ctx, id, hostapi.RenameRequest{Label: "x"}); !errors.Is(err, hostapi.ErrRecordingOff) {
		t.Errorf("a host that records nothing: %v, want ErrRecordingOff", err)
	}
}
