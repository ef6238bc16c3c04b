package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire/session"
	"github.com/go-json-experiment/json"
)

// ErrControlTimeout is wrapped by the error of a control request the host left unanswered
// for Options.ControlTimeout; the session is dropped, as the official SDKs do.
var ErrControlTimeout = errors.New("connect: control request unanswered")

// ControlError is a host's CONTROL_RESP with success:false to a request the session cannot
// go on without (session.open, device.profile, the first app.state).
type ControlError struct {
	Action  string
	Message string
}

// Error returns "connect: host refused <action>: <message>".
func (e *ControlError) Error() string {
	if e.Message == "" {
		return "connect: host refused " + e.Action
	}
	return "connect: host refused " + e.Action + ": " + e.Message
}

// controlChannel sends CONTROL_REQs and matches the host's CONTROL_RESPs to them by replyTo.
// Responses arrive through handle, called by the app runtime's reader for every message that
// is not a tool request.
type controlChannel struct {
	conn transport.Conn
	log  *slog.Logger
	done <-chan struct{} // closed when the connection's reader has stopped

	mu      sync.Mutex
	pending map[string]chan *session.ControlEnvelope
}

func newControlChannel(conn transport.Conn, log *slog.Logger, done <-chan struct{}) *controlChannel {
	return &controlChannel{conn: conn, log: log, done: done, pending: map[string]chan *session.ControlEnvelope{}}
}

// handle takes one inbound non-tool message. It never blocks: the reader must go on.
func (c *controlChannel) handle(typ transport.MessageType, data []byte) {
	if typ != transport.MessageText {
		c.log.Debug("ansight: ignoring binary message from host", "bytes", len(data))
		return
	}
	env, err := session.ParseControl(data)
	if err != nil || env.Type != session.TypeControlResponse {
		// The host sends only tool requests and control responses; anything else is
		// ignored, as the official SDKs do.
		c.log.Debug("ansight: ignoring unexpected message from host", "bytes", len(data))
		return
	}
	c.mu.Lock()
	ch := c.pending[env.ReplyTo]
	delete(c.pending, env.ReplyTo)
	c.mu.Unlock()
	if ch == nil {
		c.log.Debug("ansight: ignoring control response to no pending request", "action", env.Action)
		return
	}
	ch <- env // buffered; each channel receives at most once
}

// request sends one control request and waits for its response, at most timeout. A
// timeout, a lost connection and ctx's end are errors; a response with success:false is
// returned as is, for the caller to judge.
func (c *controlChannel) request(ctx context.Context, action string, payload any, timeout time.Duration) (*session.ControlEnvelope, error) {
	raw, err := json.Marshal(payload, json.Deterministic(true))
	if err != nil {
		return nil, fmt.Errorf("connect: encode %s payload: %w", action, err)
	}
	req := session.NewControlRequest(action, raw)
	data, err := req.Marshal()
	if err != nil {
		return nil, fmt.Errorf("connect: encode %s: %w", action, err)
	}
	ch := make(chan *session.ControlEnvelope, 1)
	c.mu.Lock()
	c.pending[req.ID] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, req.ID)
		c.mu.Unlock()
	}()

	// Every outcome but success ends the session, so the write may share the request's
	// deadline even though a write cut short tears the connection down.
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, ErrControlTimeout)
	defer cancel()
	if err := c.conn.Write(ctx, transport.MessageText, data); err != nil {
		if context.Cause(ctx) == ErrControlTimeout {
			return nil, fmt.Errorf("%w: %s could not be sent within %v", ErrControlTimeout, action, timeout)
		}
		return nil, fmt.Errorf("connect: send %s: %w", action, err)
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-c.done:
		return nil, fmt.Errorf("connect: connection lost while waiting for the %s response", action)
	case <-ctx.Done():
		if context.Cause(ctx) == ErrControlTimeout {
			return nil, fmt.Errorf("%w: %s got no response within %v", ErrControlTimeout, action, timeout)
		}
		return nil, ctx.Err()
	}
}

// mustSucceed sends a request the session depends on: success:false is a *ControlError.
func (c *controlChannel) mustSucceed(ctx context.Context, action string, payload any, timeout time.Duration) (*session.ControlEnvelope, error) {
	resp, err := c.request(ctx, action, payload, timeout)
	if err != nil {
		return nil, err
	}
	if !resp.Success {
		return nil, &ControlError{Action: action, Message: peerText(resp.Message)}
	}
	return resp, nil
}
