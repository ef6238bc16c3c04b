package app

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/go-json-experiment/json/jsontext"

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

// TestToolCancelLate: a goroutine of Serve answers its requests with one context for as
// long as nothing cancels it (callContext), so a tool.cancel of a request that was already
// answered, or of one cancelled before, must not reach the requests answered after it, and
// a request after a cancelled one gets a live context that a tool.cancel cancels again.
func TestToolCancelLate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{MaxConcurrent: 1})
		causes := make(chan error, 4)
		live := make(chan error, 16)
		d := def("test.wait", "Wait", "test", wire.PolicyRead)
		d.ArgumentsSchema = []byte(`{"type":"object"}`)
		d.ResultSchema = []byte(`{"type":"object"}`)
		l := def("test.live", "Live", "test", wire.PolicyRead)
		l.ArgumentsSchema = d.ArgumentsSchema
		l.ResultSchema = d.ResultSchema
		if err := errors.Join(
			a.Register(Tool{Definition: d, Handler: func(ctx context.Context, c *Call) (any, error) {
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return nil, ctx.Err()
			}}),
			a.Register(Tool{Definition: l, Handler: func(ctx context.Context, c *Call) (any, error) {
				live <- context.Cause(ctx)
				return jsontext.Value(`{}`), nil
			}}),
		); err != nil {
			t.Fatal(err)
		}
		host, _, stop := serving(t, a)
		cancelled := func(id string) {
			t.Helper()
			send(t, host, callMsg(id, `{"toolId":"test.wait"}`))
			synctest.Wait()
			send(t, host, cancelMsg(id))
			if cause := <-causes; !errors.Is(cause, ErrCancelled) {
				t.Fatalf("%s: the handler's cause: %v", id, cause)
			}
		}
		cancelled("w1")
		for i := range 6 {
			id := fmt.Sprintf("l%d", i)
			send(t, host, callMsg(id, `{"toolId":"test.live"}`))
			if got := readResponses(t, host, 1); got[id] == nil || got[id].Type != wire.TypeResult {
				t.Fatalf("%s: responses %v", id, got)
			}
			if cause := <-live; cause != nil {
				t.Fatalf("%s: the handler's context was done at its start: %v", id, cause)
			}
			synctest.Wait() // the request is forgotten: these cancels come late
			send(t, host, cancelMsg(id))
			send(t, host, cancelMsg("w1"))
			synctest.Wait()
		}
		cancelled("w2")
		send(t, host, callMsg("l6", `{"toolId":"test.live"}`))
		if got := readResponses(t, host, 1); got["l6"] == nil || got["l6"].Type != wire.TypeResult {
			t.Fatalf("l6: responses %v", got)
		}
		if cause := <-live; cause != nil {
			t.Fatalf("l6: the handler's context was done at its start: %v", cause)
		}
		if err := stop(); !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve: %v", err)
		}
	})
}
