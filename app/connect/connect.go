package connect

import (
	"context"
	"errors"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/transport"
)

// Run connects a to a host, found and authenticated as mode says ([Local], [Invite] or
// [Direct]), and keeps it connected until ctx ends. Each attempt enrolls (unless direct),
// opens the WebSocket, starts a's runtime on it and performs the control handshake; when
// the connection drops, Run reconnects after an exponential, jittered, capped delay,
// presenting the same [ProcessSessionID] so that the host resumes the same session. When
// ctx ends, Run sends session.complete, closes the connection with 1000 and returns nil.
//
// Run returns an error without retrying for an invalid mode or Options, unusable state
// files, and a refusal that only a person can fix (an *EnrollmentError that is not
// Temporary, such as a consumed invite; a direct-mode endpoint answering 401 or 404).
func Run(ctx context.Context, a *app.App, mode Mode, opts Options) error {
	cl, err := newClient(a, mode, opts)
	if err != nil {
		return err
	}
	return cl.run(ctx)
}

// Dial makes one session with the host mode says: it enrolls (unless direct), opens the
// WebSocket, starts a's runtime on it and completes the control handshake. ctx bounds only
// these steps; the session then lasts until the connection drops or [Session.Close] is
// called. Dial does not retry: a refusal, a silent host or a failed handshake is its error.
func Dial(ctx context.Context, a *app.App, mode Mode, opts Options) (*Session, error) {
	cl, err := newClient(a, mode, opts)
	if err != nil {
		return nil, err
	}
	return cl.connect(ctx)
}

func newClient(a *app.App, mode Mode, opts Options) (*client, error) {
	if a == nil {
		return nil, errors.New("connect: nil *app.App")
	}
	c, err := newConfig(mode, opts, time.Now())
	if err != nil {
		return nil, err
	}
	serve := func(ctx context.Context, conn transport.Conn, onMessage func(transport.MessageType, []byte)) error {
		return a.Serve(ctx, conn, app.ServeOptions{OnMessage: onMessage})
	}
	return &client{cfg: c, serve: serve, dial: webSocketDial(c.DialTimeout)}, nil
}
