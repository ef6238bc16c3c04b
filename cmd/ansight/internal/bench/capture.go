package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// The floor echoes the bytes a measured operation really sent and received. The local
// host wraps its sessions' connections in a tapConn (host.Options.WrapConn), which copies
// one request and its answer while a capture is armed and otherwise only loads a nil
// pointer per message.

// tap arms captures on the connections it wraps.
type tap struct {
	armed atomic.Pointer[capture]
}

// capture is one armed capture: the first tool request written on any tapped connection
// and the text message read that answers it.
type capture struct {
	mu       sync.Mutex
	request  []byte
	id       string
	answer   []byte
	answered chan struct{}
}

func (t *tap) wrap(c transport.Conn) transport.Conn { return &tapConn{Conn: c, tap: t} }

// tapConn is a session's connection as the local host sees it.
type tapConn struct {
	transport.Conn
	tap *tap
}

// Abort forwards to the wrapped connection (transport.Aborter), as wrappers must.
func (c *tapConn) Abort() error { return transport.Abort(c.Conn) }

func (c *tapConn) Write(ctx context.Context, typ transport.MessageType, data []byte) error {
	if cp := c.tap.armed.Load(); cp != nil && typ == transport.MessageText {
		cp.sawRequest(data)
	}
	return c.Conn.Write(ctx, typ, data)
}

func (c *tapConn) Read(ctx context.Context) (transport.MessageType, []byte, error) {
	typ, data, err := c.Conn.Read(ctx)
	if err == nil && typ == transport.MessageText {
		if cp := c.tap.armed.Load(); cp != nil {
			cp.sawAnswer(data)
		}
	}
	return typ, data, err
}

func (cp *capture) sawRequest(data []byte) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.request != nil {
		return
	}
	env, err := wire.DecodeEnvelope(data)
	if err != nil || (env.Type != wire.TypeCall && env.Type != wire.TypeQuery && env.Type != wire.TypeBatch) {
		return
	}
	cp.request, cp.id = bytes.Clone(data), env.ID // the host reuses its buffer
}

func (cp *capture) sawAnswer(data []byte) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.request == nil || cp.answer != nil {
		return
	}
	if env, err := wire.DecodeEnvelope(data); err == nil && env.ReplyTo == cp.id {
		cp.answer = bytes.Clone(data)
		close(cp.answered)
	}
}

// exchangeOf runs op once with a capture armed and returns the request it sent and the
// answer it got, as bytes. Only op may use the host's sessions meanwhile.
func (t *tap) exchangeOf(ctx context.Context, op func(context.Context) error) (*exchange, error) {
	cp := &capture{answered: make(chan struct{})}
	if !t.armed.CompareAndSwap(nil, cp) {
		return nil, errors.New("bench: a capture is already armed")
	}
	defer t.armed.Store(nil)
	if err := op(ctx); err != nil {
		return nil, err
	}
	// The host reads the answer before the caller gets it, so it is here by now; the wait
	// is only a guard.
	wait := time.NewTimer(5 * time.Second)
	defer wait.Stop()
	select {
	case <-cp.answered:
	case <-wait.C:
		return nil, errors.New("bench: captured no request and answer of the operation")
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return newExchange(cp.request, cp.answer, cp.id)
}

// synthExchange writes a request carrying payload and its answer carrying result with the
// protocol's codec, as the host's client and an app write them (the answer compressed when
// the codec would compress it): the floor's bytes when no local host can capture them.
func synthExchange(sessionID, reqType, respType string, payload any, result []byte) (*exchange, error) {
	body, err := wire.Marshal(payload)
	if err != nil {
		return nil, err
	}
	const id = "0123456789abcdef0123456789abcdef"
	now := time.Now().UTC()
	reqEnv := wire.Envelope{Type: reqType, ID: id, SessionID: sessionID, SentAt: now, Capability: wire.CapabilityToolExec, Payload: body}
	reqMsg, err := wire.AppendEnvelope(nil, &reqEnv)
	if err != nil {
		return nil, err
	}
	wrapped, err := wire.EncodePayload(result)
	if err != nil {
		return nil, err
	}
	respMsg, err := wire.AppendEnvelope(nil, wire.NewResponse(&reqEnv, respType, wrapped, now))
	if err != nil {
		return nil, err
	}
	ex, err := newExchange(reqMsg, respMsg, id)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", reqType, err)
	}
	return ex, nil
}
