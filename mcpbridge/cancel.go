package mcpbridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP specification says a server SHOULD NOT answer a request the client cancelled
// (notifications/cancelled): the client has forgotten the id, may reuse it, and a late
// answer shows up as an error ("response for an unknown message ID"). The Go SDK stops the
// handler but still writes an error response, so the bridge filters its own connection:
// quietTransport drops the response to a request the client cancelled while it ran.

// quietTransport wraps a transport so that responses to cancelled requests are dropped.
//
// The wrapper hides the connection's unexported hooks from the SDK; for stdio that only
// means JSON-RPC batches are no longer refused in protocol revisions that dropped them
// (they are still answered correctly).
type quietTransport struct {
	mcp.Transport
	logger *slog.Logger
}

func (t quietTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &quietConn{Connection: c, logger: t.logger, inflight: map[jsonrpc.ID]bool{}}, nil
}

// quietConn tracks the client's requests from their arrival to their answer.
type quietConn struct {
	mcp.Connection
	logger *slog.Logger

	mu sync.Mutex
	// inflight holds the ids of the client's requests not answered yet: true once the
	// client cancelled it. Bounded by the requests the client has in flight.
	inflight map[jsonrpc.ID]bool
}

func (c *quietConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil {
		c.mu.Lock()
		switch {
		case req.IsCall():
			// A new request under an id clears whatever a stale cancellation left.
			c.inflight[req.ID] = false
		case req.Method == "notifications/cancelled":
			var p mcp.CancelledParams
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					if _, ok := c.inflight[id]; ok {
						c.inflight[id] = true // a cancellation of an answered request is ignored
					}
				}
			}
		}
		c.mu.Unlock()
	}
	return msg, err
}

func (c *quietConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		cancelled := c.inflight[resp.ID]
		delete(c.inflight, resp.ID)
		c.mu.Unlock()
		if cancelled {
			c.logger.Debug("mcp: the client cancelled the request: no response sent", "id", resp.ID.Raw())
			return nil
		}
	}
	return c.Connection.Write(ctx, msg)
}
