package conformance_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ansight-go/ansight/conformance"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

func TestTapTargetFeed(t *testing.T) {
	var sent [][]byte
	tap := conformance.NewTapTarget("s-1", func(ctx context.Context, typ transport.MessageType, data []byte) error {
		sent = append(sent, data)
		return nil
	})
	frame, err := wire.AppendFrame(nil, wire.Frame{Type: wire.FrameComplete, TransferID: wire.NewTransferID()})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		typ  transport.MessageType
		data string
		take bool
	}{
		{"catalog", transport.MessageText, `{"type":"tool.catalog","id":"a.response","replyTo":"a","payload":{}}`, true},
		{"error without replyTo", transport.MessageText, `{"type":"tool.error","id":"tool.error.1","replyTo":null,"payload":{}}`, true},
		{"malformed response", transport.MessageText, `{"type":"tool.result","id":"x","id":"y"}`, true},
		{"control request", transport.MessageText, `{"type":"CONTROL_REQ","id":"c1","action":"session.open","payload":{"note":"tool.result"}}`, false},
		{"request echoed back", transport.MessageText, `{"type":"tool.query","id":"q"}`, false},
		{"telemetry", transport.MessageText, `{"type":"CLIENT_LOG","message":"hello"}`, false},
		{"asft", transport.MessageBinary, string(frame), true},
		{"asjp", transport.MessageBinary, "ASJP\x01", false},
	}
	for _, c := range cases { // in order: the taken messages queue up for Receive below
		t.Run(c.name, func(t *testing.T) {
			if got := tap.Feed(c.typ, []byte(c.data)); got != c.take {
				t.Errorf("Feed = %v, want %v", got, c.take)
			}
		})
	}
	for _, c := range cases {
		if !c.take {
			continue
		}
		m, err := tap.Receive(context.Background())
		if err != nil || string(m.Data) != c.data || m.Type != c.typ {
			t.Fatalf("%s: Receive = %q, %v", c.name, m.Data, err)
		}
	}
	if err := tap.Send(context.Background(), []byte("x")); err != nil || len(sent) != 1 {
		t.Fatalf("Send: %v, %d sent", err, len(sent))
	}
	tap.Close()
	if tap.Feed(transport.MessageText, []byte(cases[0].data)) {
		t.Error("Feed takes messages after Close")
	}
	if _, err := tap.Receive(context.Background()); !errors.Is(err, conformance.ErrTargetClosed) {
		t.Errorf("Receive after Close: %v", err)
	}
	if err := tap.Send(context.Background(), []byte("x")); !errors.Is(err, conformance.ErrTargetClosed) {
		t.Errorf("Send after Close: %v", err)
	}
}

// A target whose app is gone ends the run quickly: the checks after the loss are skipped.
func TestTargetGone(t *testing.T) {
	appEnd, hostEnd := transport.Pipe(transport.PipeOptions{})
	appEnd.Close(transport.StatusGoingAway, "gone")
	target := conformance.NewConnTarget(hostEnd, "")
	defer target.Close()
	rep := conformance.Run(context.Background(), target, conformance.Options{})
	if rep.OK() {
		t.Fatal("a run against a closed connection passes")
	}
	if r := rep.Results[len(rep.Results)-1]; r.Status != conformance.StatusSkip {
		t.Errorf("last check %s: %s (%s), want skip", r.Name, r.Status, r.Reason)
	}
}
