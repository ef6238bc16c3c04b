package transporttest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// MemNet is an in-memory network for tests that run in a testing/synctest bubble, where real
// sockets cannot be used (a goroutine blocked on a socket is not durably blocked, so the
// bubble's clock would never move). Its connections buffer without limit, like a TCP
// connection whose peer has room: a writer never waits for the reader, so a peer that stops
// reading for minutes of bubble time leaves the other side's writes (pings included)
// queued, as the kernel would. Everything blocks on channels made in the bubble that
// created the MemNet, and must be used in that bubble only.
//
// Serve an http.Server on Listener and give Dial to an http.Transport (see HTTPClient) to
// run real WebSocket handshakes and connections over it.
type MemNet struct {
	accept chan net.Conn
	done   chan struct{}
	once   sync.Once
}

// NewMemNet returns an in-memory network with one listener.
func NewMemNet() *MemNet {
	return &MemNet{accept: make(chan net.Conn), done: make(chan struct{})}
}

// memAddr is the address of both ends of every MemNet connection.
type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "127.0.0.1:1" } // parses as a loopback address

// Listener returns the network's listener. Closing it makes Accept and Dial fail.
func (n *MemNet) Listener() net.Listener { return memListener{n} }

// Dial connects to the listener; it has the signature of http.Transport.DialContext.
func (n *MemNet) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := newMemConn(), newMemConn()
	client.in, server.in = newMemPipe(), newMemPipe()
	client.out, server.out = server.in, client.in
	select {
	case n.accept <- server:
		return client, nil
	case <-n.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// HTTPClient returns an HTTP client whose connections go through the network, for
// transport.DialOptions.HTTPClient. Its idle connections are closed by the caller (the
// WebSocket upgrade hijacks the one it uses).
func (n *MemNet) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: n.Dial}}
}

type memListener struct{ n *MemNet }

func (l memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.n.accept:
		return c, nil
	case <-l.n.done:
		return nil, net.ErrClosed
	}
}

func (l memListener) Close() error {
	l.n.once.Do(func() { close(l.n.done) })
	return nil
}

func (l memListener) Addr() net.Addr { return memAddr{} }

// memPipe is one direction of a connection: an unbounded buffer and a wake-up channel.
type memPipe struct {
	mu     sync.Mutex
	buf    []byte
	closed bool
	wake   chan struct{} // capacity 1: poked on every write and on close
}

func newMemPipe() *memPipe { return &memPipe{wake: make(chan struct{}, 1)} }

func (p *memPipe) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *memPipe) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.poke()
}

// memConn is one end of a MemNet connection.
type memConn struct {
	in, out *memPipe

	mu       sync.Mutex
	deadline chan struct{} // closed when the read deadline passes; nil: none
	timer    *time.Timer
	closed   chan struct{}
	once     sync.Once
}

func newMemConn() *memConn { return &memConn{closed: make(chan struct{})} }

func (c *memConn) Read(b []byte) (int, error) {
	for {
		c.in.mu.Lock()
		if len(c.in.buf) > 0 {
			n := copy(b, c.in.buf)
			c.in.buf = c.in.buf[n:]
			c.in.mu.Unlock()
			return n, nil
		}
		eof := c.in.closed
		c.in.mu.Unlock()
		if eof {
			return 0, io.EOF
		}
		c.mu.Lock()
		dl := c.deadline
		c.mu.Unlock()
		select {
		case <-c.in.wake:
		case <-dl: // a nil channel never fires
			return 0, os.ErrDeadlineExceeded
		case <-c.closed:
			return 0, net.ErrClosed
		}
	}
}

func (c *memConn) Write(b []byte) (int, error) {
	select {
	case <-c.closed:
		return 0, net.ErrClosed
	default:
	}
	c.out.mu.Lock()
	if c.out.closed {
		c.out.mu.Unlock()
		return 0, errors.New("transporttest: write to a closed connection")
	}
	c.out.buf = append(c.out.buf, b...)
	c.out.mu.Unlock()
	c.out.poke()
	return len(b), nil
}

// Close ends both directions: the peer reads what was written, then EOF.
func (c *memConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.out.close()
		c.in.close()
		c.mu.Lock()
		if c.timer != nil {
			c.timer.Stop()
		}
		c.mu.Unlock()
	})
	return nil
}

func (c *memConn) LocalAddr() net.Addr  { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr { return memAddr{} }

func (c *memConn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

// SetReadDeadline makes a blocked or later Read fail once t has passed; the zero time
// removes the deadline. A blocked Read is woken to take the new deadline: net/http sets one
// in the past to end its background read when a handler hijacks the connection.
func (c *memConn) SetReadDeadline(t time.Time) error {
	defer c.in.poke()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if t.IsZero() {
		c.deadline = nil
		return nil
	}
	ch := make(chan struct{})
	c.deadline = ch
	if d := time.Until(t); d > 0 {
		c.timer = time.AfterFunc(d, func() { close(ch) })
	} else {
		close(ch)
	}
	return nil
}

// SetWriteDeadline has nothing to bound: writes never wait.
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }
