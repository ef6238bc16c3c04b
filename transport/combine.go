package transport

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Write combining. The WebSocket library writes every message with a system call of its
// own while it holds its write lock, so when several goroutines write at once (a host's
// callers, an app's answers) each waits for the one before it to leave the kernel. A
// combiner sits under the library, as the net.Conn it writes to, and counts the messages
// being written through wsConn.Write: while another one is on its way, a frame is kept
// (corked) instead of written, and the next write takes it along, so that two or more
// messages leave in one system call (and the peer reads them with one). A lone writer is
// never held: with no other message on its way the frame is written at once, so a single
// caller's latency is the plain path's; nothing waits on a timer or for another writer (a
// message on a connection whose writes lately met others first yields to the goroutines
// ready to run, see enter: that is what makes them meet).
//
// The rules, which the tests check against the plain path:
//   - bytes leave in the order the library handed them over: a write always sends what is
//     corked before its own bytes, under one lock;
//   - something is corked only while the count of messages on their way is at least two,
//     so at least one writer is still to come; a writer whose leave brings the count to
//     zero sends whatever is still corked (a writer that gave up waiting for the library's
//     lock, or a control frame corked between two messages);
//   - at most corkLimit bytes are corked; anything larger goes out at once;
//   - closing the socket sends what is corked first (see Close), as the kernel sends what
//     the plain path left in its buffer: the library closes it right after writing the
//     close frame that answers the peer's, which may be corked behind two writers.
//
// A Write that returns nil has handed its message to the connection, as the plain path's
// kernel buffer does: if a later write fails, the connection is torn down with that error.

// combineWrites is false only in tests that compare the combined path with the plain one.
var combineWrites = true

// corkLimit bounds the bytes a combiner holds back, and a frame larger than corkFrame is
// never held (combining only saves for small messages: a large one costs its copy).
const (
	corkLimit = 16 << 10
	corkFrame = 4 << 10
)

// combiner is a connection's write side: the net.Conn the WebSocket library writes to.
type combiner struct {
	net.Conn

	// state is the number of messages on their way (wsConn.Write between enter and leave)
	// times two, plus one while something is corked. One word, so that corking (which
	// needs two on their way) and the last leave (which needs to see what is corked)
	// cannot miss each other.
	state atomic.Int64
	// company is above zero while this connection's writes lately met others on their way
	// (see enter).
	company atomic.Int32

	mu  sync.Mutex // held while corking and while writing to Conn
	buf []byte     // corked bytes, in pooled's buffer while something is corked; nil otherwise
	// pooled is the corkBufs buffer buf is in: it goes back to the pool once buf is sent,
	// so that an idle connection holds no buffer (a connection that corked once kept up to
	// corkLimit bytes: 4 KiB a session more on the host at 10,000 sessions).
	pooled *[]byte
	vec    [2][]byte // scratch for a write of buf and a large frame together

	closing atomic.Bool // Close has begun: nothing more is corked
	writing atomic.Bool // a write to Conn is under way (c.mu is held)
}

const corked = 1 // state's bit: buf holds bytes

// enter counts a message on its way. A message that meets no other on its way, on a
// connection whose writes lately did, first lets the goroutines that are ready to run go
// ahead (runtime.Gosched): the ones about to write on this connection then find it on its
// way, cork their frames, and it takes them along. A connection written by one goroutine
// at a time never yields.
func (c *combiner) enter() {
	if c.state.Add(2)>>1 > 1 {
		if c.company.Load() != companyMax {
			c.company.Store(companyMax)
		}
		return
	}
	if c.company.Load() <= 0 {
		return
	}
	runtime.Gosched()
	if s := c.state.Load(); s>>1 > 1 || s&corked != 0 { // one came (and may have corked and gone)
		if c.company.Load() != companyMax {
			c.company.Store(companyMax)
		}
		return
	}
	c.company.Add(-1) // nobody came: after companyMax such yields in a row, stop
}

// companyMax is how many yields in a row that bring no other writer a connection tries
// after its writes last met.
const companyMax = 4

// leave ends what enter started. The last message to leave while something is still
// corked sends it (a writer that gave up waiting for the library's lock, or a frame
// corked after the others had written theirs, left it), bounded by ctx as the library
// bounds its own writes: when ctx ends meanwhile, ws.CloseNow tears the connection down,
// which ends the write, and leave returns ctx's error.
func (c *combiner) leave(ctx context.Context, ws interface{ CloseNow() error }) error {
	if c.state.Add(-2) != corked {
		return nil
	}
	if ctx.Done() == nil {
		return c.flush()
	}
	stop := context.AfterFunc(ctx, func() { _ = ws.CloseNow() })
	err := c.flush()
	if !stop() && err != nil {
		err = ctx.Err()
	}
	return err
}

// flush sends what is corked.
func (c *combiner) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flushLocked(nil)
}

// Write is the library's write of one or more frames (its buffered writer's flush).
func (c *combiner) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(p) > 0 && len(p) <= corkFrame && len(c.buf)+len(p) <= corkLimit && c.cork() {
		if c.pooled == nil {
			c.pooled = corkBufs.Get().(*[]byte)
			c.buf = (*c.pooled)[:0]
		}
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if err := c.flushLocked(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// cork marks the buffer corked if another message is on its way, and reports whether it
// did. c.mu is held.
func (c *combiner) cork() bool {
	for {
		s := c.state.Load()
		if s>>1 < 2 || c.closing.Load() {
			return false
		}
		if s&corked != 0 || c.state.CompareAndSwap(s, s|corked) {
			return true
		}
	}
}

// flushLocked writes what is corked followed by p, in one system call where it can, and
// clears the corked bit. c.mu is held.
func (c *combiner) flushLocked(p []byte) error {
	if len(c.buf) == 0 { // then the corked bit is clear: both change under c.mu
		if len(p) == 0 {
			return nil
		}
		c.writing.Store(true)
		_, err := c.Conn.Write(p)
		c.writing.Store(false)
		return err
	}
	c.writing.Store(true)
	defer c.writing.Store(false)
	var err error
	switch {
	case len(p) == 0:
		_, err = c.Conn.Write(c.buf)
	case len(c.buf)+len(p) <= corkLimit:
		c.buf = append(c.buf, p...)
		_, err = c.Conn.Write(c.buf)
	default:
		c.vec = [2][]byte{c.buf, p}
		v := net.Buffers(c.vec[:])
		_, err = v.WriteTo(c.Conn)
		c.vec = [2][]byte{}
	}
	c.release()
	return err
}

// corkBufs holds the buffers of corked bytes, corkLimit each, which is all they ever hold.
var corkBufs = sync.Pool{New: func() any { b := make([]byte, 0, corkLimit); return &b }}

// release returns the buffer of what was corked, now sent or dropped, to corkBufs and
// clears the corked bit. c.mu is held.
func (c *combiner) release() {
	*c.pooled = c.buf[:0]
	corkBufs.Put(c.pooled)
	c.pooled, c.buf = nil, nil
	c.state.And(^int64(corked))
}

// closeFlush bounds how long Close waits to hand what is corked to the kernel: it has room
// for it unless the peer stopped reading, and then the plain path's writer would still be
// waiting in its own write.
const closeFlush = 50 * time.Millisecond

// Close sends what is corked, then closes the socket. It never waits for a write under
// way, which may be blocked on a peer that does not read (the library closes the socket
// to end it): that write carries what was corked before it, and once Close has begun no
// frame is corked, so a later one fails on the closed socket instead of being dropped.
func (c *combiner) Close() error {
	c.closing.Store(true)
	for !c.mu.TryLock() {
		if c.writing.Load() {
			return c.Conn.Close()
		}
		runtime.Gosched() // a frame being corked: a moment
	}
	if len(c.buf) > 0 {
		if c.Conn.SetWriteDeadline(time.Now().Add(closeFlush)) == nil {
			_, _ = c.Conn.Write(c.buf)
		}
		c.release()
	}
	c.mu.Unlock()
	return c.Conn.Close()
}

// combiningDialer wraps the connections an http.Transport dials for a WebSocket (the
// transport is Dial's own, see combiningClient). When it dialed exactly one, the upgrade
// was sent on it and the WebSocket is written through its combiner; after a redirect that
// dialed another, which one carries the WebSocket is not known, and none is combined (a
// combiner with no message on its way writes through, as the plain path).
type combiningDialer struct {
	mu    sync.Mutex
	first *combiner
	n     int
}

func (d *combiningDialer) wrap(conn net.Conn, err error) (net.Conn, error) {
	if err != nil {
		return conn, err
	}
	c := &combiner{Conn: conn}
	d.mu.Lock()
	if d.n++; d.n == 1 {
		d.first = c
	}
	d.mu.Unlock()
	return c, nil
}

// conn returns the combiner the WebSocket is written through, or nil.
func (d *combiningDialer) conn() *combiner {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n != 1 {
		return nil
	}
	return d.first
}

// combiningClient returns a copy of client (http.DefaultClient when nil) whose transport
// is a clone of its own that dials through d, or client itself when its transport is not
// an *http.Transport (then nothing is combined). The clone serves this one dial.
func combiningClient(client *http.Client, d *combiningDialer) (*http.Client, *http.Transport) {
	if client == nil {
		client = http.DefaultClient
	}
	rt := client.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	base, ok := rt.(*http.Transport)
	//lint:ignore SA1019 a transport that dials with the deprecated functions is left as it is
	if !ok || base.Dial != nil || base.DialTLS != nil {
		return client, nil
	}
	t := base.Clone()
	if dial := t.DialContext; dial != nil {
		t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.wrap(dial(ctx, network, addr))
		}
	} else {
		var nd net.Dialer
		t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.wrap(nd.DialContext(ctx, network, addr))
		}
	}
	if dial := t.DialTLSContext; dial != nil {
		t.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.wrap(dial(ctx, network, addr))
		}
	}
	out := *client
	out.Transport = t
	return &out, t
}

// combiningWriter is the ResponseWriter Accept hands the library: its Hijack returns the
// connection wrapped in a combiner, with a buffered writer of its own on top (the reader,
// and what it has buffered, is the server's).
type combiningWriter struct {
	http.ResponseWriter
	c *combiner
}

func (w *combiningWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *combiningWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return conn, brw, err
	}
	if brw.Writer.Buffered() > 0 { // net/http hands over an empty one; be sure
		if err := brw.Writer.Flush(); err != nil {
			return conn, brw, err
		}
	}
	w.c = &combiner{Conn: conn}
	brw.Writer.Reset(w.c) // net/http's buffer, empty, now writing through the combiner
	return w.c, brw, nil
}

// canHijack reports whether w, or a ResponseWriter it unwraps to, is an http.Hijacker, as
// the library looks for one: only such a w is wrapped, so that one that is not is refused
// as before.
func canHijack(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case http.Hijacker:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}
