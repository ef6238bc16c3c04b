package connect

import (
	"context"
	"sync"

	"github.com/ansight-go/ansight/transport"
)

// writeOrder puts a session's tool responses, transfers and control requests ahead of its
// telemetry on the one connection they share. Telemetry (Session.Send: network requests,
// metric samples, screen frames) is written one message at a time, and only while no
// other write is in progress or waiting, so a response waits for at most the one
// telemetry message already on its way, never for the frames and samples queued behind
// it. A long transfer holds telemetry back for its duration; the senders' own timeouts
// then drop it, counted (app/telemetry).
type writeOrder struct {
	conn transport.Conn
	bulk chan struct{} // held by the telemetry write in progress

	mu     sync.Mutex
	urgent int // other writes in progress or waiting
	// idle is closed when urgent falls to 0. It is made only when a telemetry write
	// waits for that, not for every response: nil while nobody waits.
	idle chan struct{}
}

func newWriteOrder(conn transport.Conn) *writeOrder {
	return &writeOrder{conn: conn, bulk: make(chan struct{}, 1)}
}

// first is the connection as the app's runtime and the control channel write to it.
func (o *writeOrder) first() transport.Conn { return firstConn{o.conn, o} }

// firstConn is a connection whose writes go before telemetry.
type firstConn struct {
	transport.Conn
	o *writeOrder
}

func (c firstConn) Write(ctx context.Context, typ transport.MessageType, data []byte) error {
	c.o.mu.Lock()
	c.o.urgent++
	c.o.mu.Unlock()
	defer func() {
		c.o.mu.Lock()
		if c.o.urgent--; c.o.urgent == 0 && c.o.idle != nil {
			close(c.o.idle)
			c.o.idle = nil
		}
		c.o.mu.Unlock()
	}()
	return c.Conn.Write(ctx, typ, data)
}

// ReadBuffer forwards transport.ReadBuffer, which the app's runtime reads requests with.
func (c firstConn) ReadBuffer(ctx context.Context, buf []byte) (transport.MessageType, []byte, error) {
	return transport.ReadBuffer(ctx, c.Conn, buf)
}

// Abort forwards transport.Abort, which the app's runtime uses to end its reads.
func (c firstConn) Abort() error { return transport.Abort(c.Conn) }

// send writes one telemetry message once no other write is in progress or waiting.
func (o *writeOrder) send(ctx context.Context, typ transport.MessageType, data []byte) error {
	select {
	case o.bulk <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-o.bulk }()
	for {
		o.mu.Lock()
		free := o.urgent == 0
		if !free && o.idle == nil {
			o.idle = make(chan struct{})
		}
		idle := o.idle
		o.mu.Unlock()
		if free {
			return o.conn.Write(ctx, typ, data)
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
