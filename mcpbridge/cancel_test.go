package mcpbridge

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawClient speaks JSON-RPC on the client end of an in-memory transport.
type rawClient struct {
	t    *testing.T
	conn mcp.Connection
}

func (c rawClient) send(raw string) {
	c.t.Helper()
	msg, err := jsonrpc.DecodeMessage([]byte(raw))
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.conn.Write(c.t.Context(), msg); err != nil {
		c.t.Fatal(err)
	}
}

// next reads the next message the server sent, and its id (nil for a notification).
func (c rawClient) next() (jsonrpc.Message, any) {
	c.t.Helper()
	msg, err := c.conn.Read(c.t.Context())
	if err != nil {
		c.t.Fatal(err)
	}
	switch m := msg.(type) {
	case *jsonrpc.Response:
		return m, m.ID.Raw()
	case *jsonrpc.Request:
		return m, m.ID.Raw()
	}
	return msg, nil
}

// TestNoResponseAfterCancel: a request the client cancels while it runs is stopped and
// gets no response (the MCP specification's SHOULD NOT); the session goes on.
func TestNoResponseAfterCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := oneSession(t)
		f.catalogs["s1"].hold["notes.list"] = true
		br := New(f, Options{})
		ct, st := mcp.NewInMemoryTransports()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- br.Run(ctx, st) }()
		conn, err := ct.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := rawClient{t, conn}
		c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		if _, id := c.next(); id != int64(1) {
			t.Fatalf("initialize answered with id %v", id)
		}
		c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ansight_call_app_tool","arguments":{"toolId":"notes.list"}}}`)
		synctest.Wait() // the call is running in the "app"
		c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user pressed stop"}}`)
		synctest.Wait() // the call stopped; an answer, if any, is on its way
		// A cancellation of a request that is not running changes nothing.
		c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`)
		// The id may be reused at once.
		c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		msg, id := c.next()
		if resp, ok := msg.(*jsonrpc.Response); !ok || id != int64(2) || resp.Error != nil || string(resp.Result) != "{}" {
			b, _ := json.Marshal(msg)
			t.Fatalf("after the cancellation the client got %s, want only the ping's answer", b)
		}
		conn.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		cancel()
	})
}

// fakeConn is a scripted mcp.Connection: Read returns in, Write records.
type fakeConn struct {
	in      []string
	written []jsonrpc.Message
}

func (c *fakeConn) Read(context.Context) (jsonrpc.Message, error) {
	raw := c.in[0]
	c.in = c.in[1:]
	return jsonrpc.DecodeMessage([]byte(raw))
}

func (c *fakeConn) Write(_ context.Context, m jsonrpc.Message) error {
	c.written = append(c.written, m)
	return nil
}
func (c *fakeConn) Close() error      { return nil }
func (c *fakeConn) SessionID() string { return "" }

// TestQuietConn walks the filter through the races the specification allows: a
// cancellation that arrives after the answer, for an unknown id, or before an id is reused.
func TestQuietConn(t *testing.T) {
	t.Parallel()
	response := func(id int64) jsonrpc.Message {
		rid, _ := jsonrpc.MakeID(float64(id))
		return &jsonrpc.Response{ID: rid, Result: json.RawMessage(`{}`)}
	}
	for _, tc := range []struct {
		name    string
		in      []string // read in order, before the responses are written
		answer  []int64
		written int
	}{
		{"cancelled while running", []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`}, []int64{1}, 0},
		{"string ids", []string{`{"jsonrpc":"2.0","id":"a","method":"tools/call"}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`}, nil, 0},
		{"not cancelled", []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`}, []int64{1}, 1},
		{"another id cancelled", []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`}, []int64{1}, 1},
		{"reused after a stale cancellation", []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, `{"jsonrpc":"2.0","id":1,"method":"ping"}`}, []int64{1}, 1},
		{"malformed cancellation", []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}`}, []int64{1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := &fakeConn{in: tc.in}
			q := &quietConn{Connection: fc, logger: New(nil, Options{}).opts.Logger, inflight: map[jsonrpc.ID]bool{}}
			for range tc.in {
				if _, err := q.Read(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range tc.answer {
				q.Write(t.Context(), response(id))
			}
			if tc.name == "string ids" {
				rid, _ := jsonrpc.MakeID("a")
				q.Write(t.Context(), &jsonrpc.Response{ID: rid, Result: json.RawMessage(`{}`)})
			}
			if len(fc.written) != tc.written {
				t.Fatalf("%d responses written, want %d", len(fc.written), tc.written)
			}
			if len(q.inflight) != 0 {
				t.Fatalf("left behind: %v", q.inflight)
			}
		})
	}
}
