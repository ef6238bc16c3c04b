package connect

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
	"github.com/go-json-experiment/json"
)

// controlHost plays the host side of one connection: it may send messages first (preamble),
// then answers each CONTROL_REQ with respond's envelope (nil: no answer), records what it
// got, and ends when the connection closes.
type controlHost struct {
	conn     transport.Conn
	preamble [][]byte
	// awaitTool holds control responses back until the app has answered a tool request.
	awaitTool bool
	respond   func(h *controlHost, req *session.ControlEnvelope) *session.ControlEnvelope

	mu       sync.Mutex
	requests []*session.ControlEnvelope
	others   [][]byte // other text messages (tool responses)
	closeErr error    // how the connection ended
	done     chan struct{}
}

// answerAll acknowledges every request, as the official host does for these actions.
func answerAll(_ *controlHost, req *session.ControlEnvelope) *session.ControlEnvelope {
	return req.Reply(true, "ok", nil)
}

func (h *controlHost) run() {
	defer close(h.done)
	ctx := context.Background()
	for _, m := range h.preamble {
		if err := h.conn.Write(ctx, transport.MessageText, m); err != nil {
			h.closeErr = err
			return
		}
	}
	var held []*session.ControlEnvelope
	for {
		typ, data, err := h.conn.Read(ctx)
		if err != nil {
			h.mu.Lock()
			h.closeErr = err
			h.mu.Unlock()
			h.conn.Close(transport.StatusNormalClosure, "")
			return
		}
		if typ != transport.MessageText {
			continue
		}
		env, err := session.ParseControl(data)
		if err != nil || env.Type != session.TypeControlRequest {
			h.mu.Lock()
			h.others = append(h.others, data)
			h.mu.Unlock()
			if h.awaitTool {
				h.awaitTool = false
				for _, q := range held {
					h.answer(ctx, q)
				}
			}
			continue
		}
		h.mu.Lock()
		h.requests = append(h.requests, env)
		h.mu.Unlock()
		if h.awaitTool {
			held = append(held, env)
			continue
		}
		h.answer(ctx, env)
	}
}

func (h *controlHost) answer(ctx context.Context, req *session.ControlEnvelope) {
	resp := h.respond(h, req)
	if resp == nil {
		return
	}
	b, _ := resp.Marshal()
	h.conn.Write(ctx, transport.MessageText, b)
	if req.Action == session.ActionSessionComplete {
		// The official host leaves its loop and closes with 1000 after the ack.
		h.conn.Close(transport.StatusNormalClosure, "WebSocket session complete.")
	}
}

func (h *controlHost) actions() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.requests {
		out = append(out, r.Action)
	}
	return out
}

func (h *controlHost) request(action string) *session.ControlEnvelope {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.requests {
		if r.Action == action {
			return r
		}
	}
	return nil
}

// pipeDialer hands out in-memory connections, each served by a new controlHost built by
// newHost; it records the dialled URLs and headers.
type pipeDialer struct {
	newHost func(n int) *controlHost // n counts dials from 1; nil host: refuse with err
	err     error

	mu      sync.Mutex
	urls    []string
	headers []http.Header
	hosts   []*controlHost
	times   []time.Time
}

func (d *pipeDialer) dial(ctx context.Context, rawURL string, header http.Header) (transport.Conn, error) {
	d.mu.Lock()
	d.urls = append(d.urls, rawURL)
	d.headers = append(d.headers, header)
	d.times = append(d.times, time.Now())
	n := len(d.urls)
	d.mu.Unlock()
	h := d.newHost(n)
	if h == nil {
		return nil, d.err
	}
	app, host := transport.Pipe(transport.PipeOptions{})
	h.conn = host
	h.done = make(chan struct{})
	d.mu.Lock()
	d.hosts = append(d.hosts, h)
	d.mu.Unlock()
	go h.run()
	return app, nil
}

func (d *pipeDialer) host(i int) *controlHost {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hosts[i]
}

func (d *pipeDialer) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.urls)
}

// fakeServe stands in for (*app.App).Serve: it answers tool.query with an empty catalog and
// hands everything else to onMessage.
func fakeServe(ctx context.Context, conn transport.Conn, onMessage func(transport.MessageType, []byte)) error {
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return err
		}
		if typ == transport.MessageText {
			if env, err := wire.DecodeEnvelope(data); err == nil && env.Type == wire.TypeQuery {
				resp, _ := json.Marshal(map[string]any{"type": wire.TypeCatalog, "id": wire.ResponseID(env.ID),
					"replyTo": env.ID, "sessionId": env.SessionID, "payload": map[string]any{}})
				if err := conn.Write(ctx, transport.MessageText, resp); err != nil {
					return err
				}
				continue
			}
		}
		onMessage(typ, data)
	}
}

func directConfig(t *testing.T, o Options) *config {
	t.Helper()
	o.AppID = testAppID
	c, err := newConfig(Direct{URL: "ws://127.0.0.1:56500/ws", Token: "direct-secret-token"}, o, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
