package connect

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/ansight-go/ansight/transport"
)

// keepAlive pings the host so that a vanished host (no FIN, e.g. a sleeping laptop) is
// noticed and the app reconnects. Both the official host and ours answer pings.
var keepAlive = transport.KeepAlive{Interval: 30 * time.Second, Timeout: 30 * time.Second}

// client is one configured app's connector: how to serve a connection and how to dial one.
// Run and Dial build it; tests give it fakes.
type client struct {
	cfg   *config
	serve serveFunc
	dial  dialFunc
	// rand overrides the backoff's jitter source in tests.
	rand func(n int64) int64
}

// directHTTP dials hosts directly: the host was just found by enrollment on this machine or
// the LAN, and an HTTP_PROXY meant for the internet must not carry its token elsewhere.
var directHTTP = &http.Client{Transport: &http.Transport{Proxy: nil, ForceAttemptHTTP2: false}}

// webSocketDial dials with transport.Dial.
func webSocketDial(handshake time.Duration) dialFunc {
	return func(ctx context.Context, rawURL string, header http.Header) (transport.Conn, error) {
		return transport.Dial(ctx, rawURL, transport.DialOptions{Header: header, HandshakeTimeout: handshake, KeepAlive: keepAlive, HTTPClient: directHTTP})
	}
}

// connect makes one session: enrollment (unless direct), upgrade, handshake.
func (cl *client) connect(ctx context.Context) (*Session, error) {
	c := cl.cfg
	ep := c.direct
	if c.enrollment != nil {
		var err error
		if ep, err = enroll(ctx, c.enrollment, c.log); err != nil {
			return nil, err
		}
	}
	c.log.Debug("ansight: opening WebSocket", "endpoint", redactURL(ep.url), "host", ep.hostName)
	dctx, cancel := context.WithTimeout(ctx, c.DialTimeout)
	conn, err := upgrade(dctx, ep, cl.dial)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if c.WrapConn != nil {
		conn = c.WrapConn(conn)
	}
	s := startSession(ctx, c, conn, redactURL(ep.url), cl.serve)
	if err := s.handshake(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return s, nil
}

// run keeps a session up until ctx ends; see Run.
func (cl *client) run(ctx context.Context) error {
	c := cl.cfg
	b := newBackoff(c.ReconnectDelay, c.MaxReconnectDelay)
	if cl.rand != nil {
		b.rand = cl.rand
	}
	streak := 0 // failed attempts in a row, to log the first one loudly and the rest quietly
	for {
		cl.report(StateConnecting, "", nil)
		s, err := cl.connect(ctx)
		if err == nil {
			streak = 0
			start := time.Now()
			c.log.Info("ansight: connected", "endpoint", s.Endpoint())
			cl.report(StateConnected, s.Endpoint(), nil)
			select {
			case <-ctx.Done():
				s.Close()
				c.log.Info("ansight: disconnected", "endpoint", s.Endpoint())
				cl.report(StateDisconnected, s.Endpoint(), nil)
				return nil
			case <-s.Done():
			}
			err = s.Err()
			// Only a session that lasted resets the delays: a host that accepts and then
			// drops every connection at once must not be hammered.
			if time.Since(start) >= c.MaxReconnectDelay {
				b.reset()
			}
			c.log.Warn("ansight: connection lost; reconnecting", "endpoint", s.Endpoint(), "err", err)
			cl.report(StateDisconnected, s.Endpoint(), err)
		} else {
			if ctx.Err() != nil {
				cl.report(StateDisconnected, "", nil)
				return nil
			}
			cl.report(StateDisconnected, "", err)
			if permanent(c, err) {
				c.log.Error("ansight: cannot connect", "err", err)
				return err
			}
			if streak == 0 {
				c.log.Info("ansight: cannot connect yet; will keep trying", "err", err)
			} else {
				c.log.Debug("ansight: connect attempt failed", "attempt", streak+1, "err", err)
			}
			streak++
		}
		t := time.NewTimer(b.next())
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// permanent reports whether retrying err cannot help: a definitive enrollment refusal, or a
// direct-mode endpoint that refuses its fixed token or path.
func permanent(c *config, err error) bool {
	if ee, ok := errors.AsType[*EnrollmentError](err); ok {
		return !ee.Temporary()
	}
	if he, ok := errors.AsType[*transport.HandshakeError](err); ok && c.enrollment == nil {
		return he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusNotFound || he.StatusCode == http.StatusForbidden
	}
	return false
}

func (cl *client) report(st State, endpoint string, err error) {
	if cl.cfg.OnState != nil {
		cl.cfg.OnState(StateChange{State: st, ProcessSessionID: ProcessSessionID(), Endpoint: endpoint, Err: err})
	}
}
