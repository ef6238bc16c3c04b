package app

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/ansight-go/ansight/wire"
)

// cancelMsg is a host's tool.cancel of request id.
func cancelMsg(id string) string {
	return `{"type":"tool.cancel","id":"x-` + id + `","sessionId":"s","sentAt":"2026-01-01T00:00:00Z","capability":"tool.exec","payload":{"requestId":"` + id + `","reason":"the caller gave up"}}`
}

// TestToolCancel: a tool.cancel cancels the named call's handler context (cause
// ErrCancelled) and the call gets no answer; the other requests in flight, and later ones,
// are untouched; a cancel of no request in flight changes nothing, and no tool.cancel,
// usable or not, reaches the session layer.
func TestToolCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{})
		causes := make(chan error, 4)
		d := def("test.wait", "Wait", "test", wire.PolicyRead)
		d.ArgumentsSchema = []byte(`{"type":"object"}`)
		d.ResultSchema = []byte(`{"type":"object"}`)
		if err := a.Register(Tool{Definition: d, Handler: func(ctx context.Context, c *Call) (any, error) {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil, ctx.Err()
		}}); err != nil {
			t.Fatal(err)
		}
		g := newGate()
		registerGate(t, a, "test.gate", g, false)
		host, other, stop := serving(t, a)
		send(t, host, callMsg("c1", `{"toolId":"test.wait"}`))
		send(t, host, callMsg("c2", `{"toolId":"test.gate"}`))
		synctest.Wait()
		send(t, host, cancelMsg("nobody"))
		send(t, host, cancelMsg("c1"))
		send(t, host, `{"type":"tool.cancel","id":"bad","capability":"tool.exec","payload":{"requestId":5}}`)
		if cause := <-causes; !errors.Is(cause, ErrCancelled) {
			t.Fatalf("the handler's cause: %v", cause)
		}
		close(g.release)
		send(t, host, callMsg("c3", `{"toolId":"test.gate"}`))
		got := readResponses(t, host, 2) // c2's and c3's: none for c1
		if _, ok := got["c1"]; ok || got["c2"].Type != wire.TypeResult || got["c3"].Type != wire.TypeResult {
			t.Fatalf("responses %v", got)
		}
		synctest.Wait()
		if msgs := other(); len(msgs) != 0 {
			t.Errorf("the session layer got %q", msgs)
		}
		if err := stop(); !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve: %v", err)
		}
	})
}
