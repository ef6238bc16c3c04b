package connect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire/session"
)

// serveFunc runs the app's tool runtime on conn until the connection fails or ctx ends,
// handing every message that is not a tool request to onMessage. (*app.App).Serve in
// production; a fake in tests.
type serveFunc func(ctx context.Context, conn transport.Conn, onMessage func(transport.MessageType, []byte)) error

// dialFunc opens the WebSocket. transport.Dial in production.
type dialFunc func(ctx context.Context, rawURL string, header http.Header) (transport.Conn, error)

// clientCloseReason is the close reason of a clean stop, as the .NET SDK sends it.
const clientCloseReason = "Client session closed."

// Session is one live, authenticated connection to a host: enrolled (unless direct),
// upgraded, and past the control handshake. The app's runtime serves tool requests on it
// until the connection drops or Close is called.
type Session struct {
	cfg      *config
	conn     transport.Conn
	writes   *writeOrder
	ctl      *controlChannel
	endpoint string // redacted URL
	cancel   context.CancelFunc

	done      chan struct{} // closed once the reader has stopped and the connection is closed
	closeOnce sync.Once

	mu     sync.Mutex
	cause  error  // why the session ends; set once
	clean  bool   // ended by Close
	detach func() // stops Options.Telemetry on this session
}

// startSession starts the app's reader on conn at once (a host may send tool.query before
// it has seen session.open), then returns; the handshake is the caller's next step.
func startSession(ctx context.Context, c *config, conn transport.Conn, endpoint string, serve serveFunc) *Session {
	done := make(chan struct{})
	s := &Session{cfg: c, conn: conn, writes: newWriteOrder(conn), endpoint: endpoint, done: done}
	s.ctl = newControlChannel(s.writes.first(), c.log, done)
	// The reader outlives the dial context: only Close, a failure or the peer end it.
	serveCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	go func() {
		err := serve(serveCtx, s.writes.first(), s.ctl.handle)
		if err == nil {
			err = errors.New("connect: app runtime stopped serving")
		}
		s.end(err)
		s.stopTelemetry()
		// The runtime does not own the connection; close it whatever stopped the reader.
		s.conn.Close(transport.StatusNormalClosure, clientCloseReason)
		cancel()
		close(done)
	}()
	return s
}

// end records why the session ended; the first reason wins.
func (s *Session) end(err error) {
	s.mu.Lock()
	if s.cause == nil {
		s.cause = err
	}
	s.mu.Unlock()
}

// abort ends the session for err, closing the connection with code.
func (s *Session) abort(code transport.StatusCode, err error) {
	s.end(err)
	reason := err.Error()
	s.conn.Close(code, reason)
	s.cancel()
}

// handshake sends session.open, device.profile and app.state in turn, each acknowledged
// before the next, as the official SDKs do. Any failure ends the session.
func (s *Session) handshake(ctx context.Context) error {
	c := s.cfg
	now := time.Now()
	steps := []struct {
		action  string
		payload any
	}{
		{session.ActionSessionOpen, session.SessionOpen{ClientName: c.DeviceName, ConfigID: c.configID, AppID: c.AppID, OpenedAtUTC: utcNow(now),
			Extensions: []string{session.ExtensionToolCancel}}},
		{session.ActionDeviceProfile, newDeviceProfile(c, now)},
		{session.ActionAppState, session.AppState{State: session.AppStateForeground, ChangedAtUTC: utcNow(now)}},
	}
	var capture session.JpegCapturePolicy
	for _, st := range steps {
		resp, err := s.ctl.mustSucceed(ctx, st.action, st.payload, c.ControlTimeout)
		if err != nil {
			code := transport.StatusPolicyViolation
			if ctx.Err() != nil {
				code = transport.StatusGoingAway
			}
			s.abort(code, err)
			return s.Wait()
		}
		if st.action == session.ActionDeviceProfile && len(resp.Payload) > 0 {
			var reply session.DeviceProfileReply
			if resp.DecodePayload(&reply) == nil {
				capture = reply.SessionJpegCapture
			}
		}
	}
	if c.Telemetry != nil {
		detach := c.Telemetry.Attach(s, capture)
		s.mu.Lock()
		s.detach = detach
		s.mu.Unlock()
		select {
		case <-s.done: // ended while attaching: the reader's stop may have run before
			s.stopTelemetry()
		default:
		}
	}
	return nil
}

// stopTelemetry detaches Options.Telemetry from the session, once.
func (s *Session) stopTelemetry() {
	s.mu.Lock()
	detach := s.detach
	s.detach = nil
	s.mu.Unlock()
	if detach != nil {
		detach()
	}
}

// Send writes one message on the session's connection (telemetry's Link), after the tool
// responses, transfers and control requests waiting to be written: telemetry never holds
// up a tool call (see writeOrder).
func (s *Session) Send(ctx context.Context, typ transport.MessageType, data []byte) error {
	return s.writes.send(ctx, typ, data)
}

// Control sends a control request and waits for the host's answer (telemetry's Link).
func (s *Session) Control(ctx context.Context, action string, payload any) (ok bool, message string, err error) {
	timeout := s.cfg.ControlTimeout
	if d, has := ctx.Deadline(); has {
		timeout = min(timeout, time.Until(d))
	}
	resp, err := s.ctl.request(ctx, action, payload, timeout)
	if err != nil {
		return false, "", err
	}
	return resp.Success, peerText(resp.Message), nil
}

// Endpoint returns the WebSocket URL of the session with its token redacted.
func (s *Session) Endpoint() string { return s.endpoint }

// Done is closed when the session has ended: the connection is closed and the app's reader
// has returned.
func (s *Session) Done() <-chan struct{} { return s.done }

// Wait blocks until the session ends and returns why: nil after Close, otherwise the error
// that ended it (the host closed or the connection dropped, an unanswered control request).
func (s *Session) Wait() error {
	<-s.done
	return s.Err()
}

// Err returns nil while the session is live or after Close, otherwise why it ended.
func (s *Session) Err() error {
	select {
	case <-s.done:
	default:
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clean {
		return nil
	}
	return s.cause
}

// Close ends the session cleanly: it sends session.complete, waits briefly for the host's
// acknowledgement, closes the connection with 1000 and waits for the app's reader to return.
// Close is safe to call more than once and after the session ended by itself.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		select {
		case <-s.done:
			return // already over; keep its error
		default:
		}
		s.mu.Lock()
		s.clean = s.cause == nil
		s.mu.Unlock()
		s.stopTelemetry() // nothing more is sent once session.complete is
		timeout := min(completeTimeout, s.cfg.ControlTimeout)
		resp, err := s.ctl.request(context.Background(), session.ActionSessionComplete,
			session.SessionComplete{Reason: "client session complete"}, timeout)
		switch {
		case err != nil:
			s.cfg.log.Debug("ansight: session.complete not acknowledged", "err", err)
		case !resp.Success:
			s.cfg.log.Debug("ansight: host refused session.complete", "message", resp.Message)
		}
		s.end(errors.New("connect: session closed"))
		s.conn.Close(transport.StatusNormalClosure, clientCloseReason)
		s.cancel()
	})
	<-s.done
	return nil
}

// upgrade opens the WebSocket at ep. The token travels twice: as the token query parameter,
// which the official host requires, and as "Authorization: Bearer", which our host prefers;
// neither appears in logs or errors.
func upgrade(ctx context.Context, ep endpoint, dial dialFunc) (transport.Conn, error) {
	u := *ep.url
	q := u.Query()
	q.Set("token", ep.token)
	u.RawQuery = q.Encode()
	h := http.Header{"Authorization": {"Bearer " + ep.token}}
	conn, err := dial(ctx, u.String(), h)
	if err != nil {
		return nil, fmt.Errorf("connect: WebSocket upgrade at %s: %w", redactURL(&u), redactError(err, ep.token))
	}
	return conn, nil
}
