package tools

import (
	"context"
	"testing"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// nopConn accepts writes and never delivers anything.
type nopConn struct{}

func (nopConn) Read(ctx context.Context) (transport.MessageType, []byte, error) {
	<-ctx.Done()
	return 0, nil, ctx.Err()
}
func (nopConn) Write(context.Context, transport.MessageType, []byte) error { return nil }
func (nopConn) Close(transport.StatusCode, string) error                   { return nil }

// FuzzHandleMessage feeds arbitrary messages to a client that has one call in flight
// (id "p1") and one transfer registered (id1): HandleMessage must never panic, whatever
// arrives, and Close must leave no file behind.
func FuzzHandleMessage(f *testing.F) {
	f.Add([]byte(`{"type":"tool.result","id":"p1.response","replyTo":"p1","payload":{"toolId":"t","success":true,"result":`+
		desc(id2, "../x", 3)+`}}`), false)
	f.Add([]byte(`{"type":"tool.error","id":"e","replyTo":"p1","payload":{"code":"tool_not_found","message":"m","retryable":false}}`), false)
	f.Add([]byte(`{"type":"tool.result"}`), false)
	f.Add([]byte(`{"type":"tool.resultx","type":"tool.result"}`), false)
	f.Add([]byte(`{"type":"tool.result"`), false)
	f.Add(frame(frameChunk, id1, 0, 0, []byte("abc")).data, true)
	f.Add(frame(frameComplete, id1, 0, 0, nil).data, true)
	f.Add(frame(frameError, id1, 0, 0, []byte("boom")).data, true)
	f.Fuzz(func(t *testing.T, data []byte, binary bool) {
		dir := t.TempDir()
		c := NewClient(nopConn{}, Options{ArtifactDir: dir})
		p := &pending{id: "p1", op: wire.TypeCall, ch: make(chan response, 1)}
		c.pending[p.id] = p
		c.transfers.register([]descriptor{{transferID: id1, fileName: "f", size: -1}}, nil)
		if got, want := peekType(data), peekHead(data, false).typ; got != want {
			t.Fatalf("peekType read %q, peekHead %q", got, want)
		}
		typ := transport.MessageText
		if binary {
			typ = transport.MessageBinary
		}
		c.HandleMessage(typ, data)
		c.HandleMessage(typ, data) // duplicates, and frames after a registration
		select {
		case r := <-p.ch:
			if r.err == nil {
				if r.result == nil {
					t.Fatal("success without a result")
				}
				if _, _, err := c.settleNow(r); err != nil {
					t.Fatalf("rewrite failed on a decoded payload: %v", err)
				}
			}
		default:
		}
		c.Close(nil)
		if names := dirEntries(t, dir); len(names) > 0 {
			// Only completed transfers may leave files.
			if s := c.Stats(); s.TransfersCompleted == 0 {
				t.Fatalf("files left: %v (%+v)", names, s)
			}
		}
	})
}

// settleNow rewrites r's descriptors with the transfers' current state, without waiting.
func (c *Client) settleNow(r response) ([]byte, []Artifact, error) {
	c.transfers.abortEach(r.transfers, ErrSessionClosed)
	return c.settle(context.Background(), &r, Limit{Timeout: c.opts.Timeout}, "")
}
