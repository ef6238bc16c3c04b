package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/ansight-go/ansight/internal/bpool"
)

// KeepAlive configures pings on a WebSocket connection. The zero value disables them.
//
// Every Interval the connection sends a ping and waits up to Timeout (Interval when zero) for
// the pong. A missing pong alone does not condemn the peer: it is declared dead, and the
// connection closed so that pending and later calls fail with StatusAbnormalClosure, only
// when it has also been silent for Interval+Timeout — no message, no pong, no ping — while
// Busy reported false the whole time. Any pong counts, not only the answers to our pings:
// .NET's ClientWebSocket (the official .NET SDK's) sends unsolicited pongs every 30 s from a
// timer of its own, even while its receive loop is busy and answers nothing else; so do the
// peer's own pings (Java-WebSocket, under the Kotlin SDK, pings every 60 s). Silence is observed at each ping, so a dead peer is
// dropped after one to two times Interval+Timeout. Two kinds of live peer answer no ping for a while: one
// whose pong is queued behind a large message, and one that runs a long request inside its
// receive loop (the official .NET SDK runs each tool inline, so a 60 s ui.wait answers no
// ping for 60 s). The first is caught by counting its messages, the second by Busy.
//
// Pongs and messages are processed by the owner's Read: keep-alive only works on a
// connection that is being read.
type KeepAlive struct {
	Interval time.Duration
	Timeout  time.Duration
	// Busy, when set, reports whether the owner is waiting for the peer to answer a request
	// (a tool call in flight, a transfer being received). While it reports true the peer
	// is not dropped for silence, and the silence is counted again from the last time it
	// did. It is called once per Interval from the keep-alive goroutine and must be cheap
	// and safe for concurrent use.
	Busy func() bool
}

// silenceLimit is how long a peer that owes us nothing may stay silent before it is
// declared dead: one ping interval plus the time its pong was given.
func (ka KeepAlive) silenceLimit() time.Duration { return ka.Interval + ka.Timeout }

// CompressionMode selects permessage-deflate (RFC 7692) negotiation. Both ends must enable it
// for it to be used; the read limit applies to the inflated message.
type CompressionMode int

// Compression modes.
const (
	// CompressionDisabled negotiates no compression (the default, and what the official host
	// does).
	CompressionDisabled CompressionMode = iota
	// CompressionNoContextTakeover compresses each message on its own: less memory per
	// connection, less compression.
	CompressionNoContextTakeover
	// CompressionContextTakeover keeps a sliding window across messages: better compression,
	// about 32 KiB more memory per direction.
	CompressionContextTakeover
)

func (m CompressionMode) websocket() (websocket.CompressionMode, error) {
	switch m {
	case CompressionDisabled:
		return websocket.CompressionDisabled, nil
	case CompressionNoContextTakeover:
		return websocket.CompressionNoContextTakeover, nil
	case CompressionContextTakeover:
		return websocket.CompressionContextTakeover, nil
	}
	return 0, fmt.Errorf("transport: unknown compression mode %d", int(m))
}

// wsConn adapts a coder/websocket connection to Conn. It remembers how the connection ended,
// because the library reports the peer's close code once and plain net.ErrClosed after.
type wsConn struct {
	ws        *websocket.Conn
	readLimit int64
	comb      *combiner // the socket under ws, when its writes are combined (combine.go)

	done     chan struct{} // closed once the connection is finished, for any reason
	doneOnce sync.Once
	pinger   chan struct{} // closed when the keep-alive goroutine returns; nil without one

	pings atomic.Int64 // answered pings, for tests
	// reads counts the messages Read returned: the keep-alive hears the peer through it
	// without a clock reading per message; signs counts its control frames.
	reads atomic.Uint64
	signs *lifeSigns

	mu      sync.Mutex
	local   bool  // Close was called
	failure error // how the connection ended, when not by a local Close
}

// lifeSigns counts the control frames a peer sends — pings, and pongs whether or not they
// answer ours — for the keep-alive. The WebSocket library calls its methods from Read.
type lifeSigns struct{ n atomic.Uint64 }

func (s *lifeSigns) ping(context.Context, []byte) bool { s.n.Add(1); return true } // true: answer it
func (s *lifeSigns) pong(context.Context, []byte)      { s.n.Add(1) }

func newWSConn(ws *websocket.Conn, comb *combiner, readLimit int64, ka KeepAlive, signs *lifeSigns) *wsConn {
	if readLimit <= 0 {
		readLimit = DefaultReadLimit
	}
	ws.SetReadLimit(readLimit)
	c := &wsConn{ws: ws, comb: comb, readLimit: readLimit, done: make(chan struct{}), signs: signs}
	if ka.Interval > 0 {
		if ka.Timeout <= 0 {
			ka.Timeout = ka.Interval
		}
		c.pinger = make(chan struct{})
		go c.keepAlive(ka)
	}
	return c
}

func (c *wsConn) Read(ctx context.Context) (MessageType, []byte, error) {
	if err := c.ended(); err != nil {
		return 0, nil, err
	}
	typ, r, err := c.ws.Reader(ctx)
	if err != nil {
		return 0, nil, c.fail(ctx, err)
	}
	data, err := readMessage(r, typ == websocket.MessageBinary)
	if err != nil {
		return 0, nil, c.fail(ctx, err)
	}
	c.reads.Add(1)
	return MessageType(typ), data, nil
}

// ReadBuffer is Read into buf (see [ReadBuffer]).
func (c *wsConn) ReadBuffer(ctx context.Context, buf []byte) (MessageType, []byte, error) {
	if err := c.ended(); err != nil {
		return 0, nil, err
	}
	typ, r, err := c.ws.Reader(ctx)
	if err != nil {
		return 0, nil, c.fail(ctx, err)
	}
	// The library's reader enforces the read limit, as for Read.
	b := buf[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow by the runtime's rule
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, nil, c.fail(ctx, err)
		}
	}
	c.reads.Add(1)
	return MessageType(typ), b, nil
}

// readMessage reads a whole message into pooled scratch chunks and returns a copy of
// exactly its size; a frame-sized binary message gets a buffer Recycle can keep.
// io.ReadAll would start at 512 bytes and grow by copying: twice the garbage for a small
// message, several times a large one's size for a 64 KiB ASFT frame.
func readMessage(r io.Reader, binary bool) ([]byte, error) {
	chunks := make([]*[]byte, 0, 8) // on the stack up to an ASFT frame's 8 chunks
	defer func() {
		for _, c := range chunks {
			scratchChunks.Put(c)
		}
	}()
	n := 0
	for {
		c := scratchChunks.Get()
		*c = (*c)[:scratchChunk] // read into the whole chunk
		chunks = append(chunks, c)
		m, err := io.ReadFull(r, *c)
		n += m
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	var out []byte
	if binary && n > scratchChunk && n <= recycledCap {
		out = (*recycled.Get())[:n]
	} else {
		out = make([]byte, n)
	}
	off := 0
	for _, c := range chunks {
		off += copy(out[off:], *c)
	}
	return out, nil
}

// Recycle hands back a message that Read returned and that its caller has finished with:
// nothing may refer to it any more. A later Read may reuse its memory. It is optional,
// and only binary messages the size of an ASFT frame are kept: a host that writes each
// frame of an artifact to disk and recycles it streams any size of file without making
// garbage.
func Recycle(msg []byte) {
	if cap(msg) == recycledCap {
		msg = msg[:0]
		recycled.Put(&msg)
	}
}

// recycledCap is the capacity of the buffers of large messages Read returns: an ASFT
// frame (56-byte header and 64 KiB of payload) with room to spare.
const recycledCap = 64<<10 + 1<<10

// recycled holds buffers of exactly recycledCap: Recycle keeps no other, so that Read can
// take any of them for a message up to that size.
var recycled = bpool.New(recycledCap, recycledCap)

// scratchChunk is the size of the pooled chunks messages are read into.
const scratchChunk = 16 << 10

var scratchChunks = bpool.New(scratchChunk, scratchChunk)

func (c *wsConn) Write(ctx context.Context, typ MessageType, data []byte) error {
	if !typ.valid() {
		return errMessageType(typ)
	}
	if err := c.ended(); err != nil {
		return err
	}
	if c.comb == nil {
		if err := c.ws.Write(ctx, websocket.MessageType(typ), data); err != nil {
			return c.fail(ctx, err)
		}
		return nil
	}
	c.comb.enter()
	err := c.ws.Write(ctx, websocket.MessageType(typ), data)
	if lerr := c.comb.leave(ctx, c.ws); err == nil {
		err = lerr
	}
	if err != nil {
		return c.fail(ctx, err)
	}
	return nil
}

// Close sends a close frame and waits (the library bounds it at a few seconds) for the peer's
// reply, then closes the socket.
func (c *wsConn) Close(code StatusCode, reason string) error {
	code, reason, argErr := closeArgs(code, reason)
	if !c.closeLocal() {
		return ErrClosed
	}
	err := c.ws.Close(websocket.StatusCode(code), reason)
	c.waitPinger()
	if argErr != nil {
		return argErr
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		// The peer did not complete the handshake; the socket is closed all the same.
		return fmt.Errorf("transport: close: %w", err)
	}
	return nil
}

// Abort closes the socket without a close handshake; the peer sees StatusAbnormalClosure.
func (c *wsConn) Abort() error {
	if !c.closeLocal() {
		return ErrClosed
	}
	err := c.ws.CloseNow()
	c.waitPinger()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("transport: abort: %w", err)
	}
	return nil
}

// closeLocal marks the connection closed by this side and reports whether it was open. It
// stops the pinger first, so a ping failing because of the close is not taken for a dead
// peer.
func (c *wsConn) closeLocal() bool {
	c.mu.Lock()
	already := c.local
	c.local = true
	c.mu.Unlock()
	if already {
		return false
	}
	c.finish()
	return true
}

func (c *wsConn) waitPinger() {
	if c.pinger != nil {
		<-c.pinger
	}
}

func (c *wsConn) finish() { c.doneOnce.Do(func() { close(c.done) }) }

// ended returns the error every call reports once the connection is over, or nil.
func (c *wsConn) ended() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.local {
		return ErrClosed
	}
	return c.failure
}

// record keeps the first reason the connection ended and returns the one kept.
func (c *wsConn) record(err error) error {
	c.mu.Lock()
	if c.failure == nil && !c.local {
		c.failure = err
	}
	kept := c.failure
	if c.local {
		kept = ErrClosed
	}
	c.mu.Unlock()
	c.finish()
	_ = c.ws.CloseNow() // release the socket; an error means it was already closed
	return kept
}

// fail maps an error from the library to this package's errors.
func (c *wsConn) fail(ctx context.Context, err error) error {
	if err := c.ended(); err != nil {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		// The library tears the connection down when a context ends mid-frame; later calls
		// then see net.ErrClosed below.
		return ctxErr
	}
	if ce, ok := errors.AsType[websocket.CloseError](err); ok {
		return c.record(&CloseError{Code: StatusCode(ce.Code), Reason: ce.Reason, err: err})
	}
	if errors.Is(err, websocket.ErrMessageTooBig) {
		return c.record(&CloseError{Code: StatusMessageTooBig, Reason: fmt.Sprintf("message exceeds the %d-byte read limit", c.readLimit), err: err})
	}
	if errors.Is(err, net.ErrClosed) {
		// Closed underneath us without a recorded reason: by a context that ended during an
		// earlier call, or by the peer's close frame that the reader has not reported yet.
		return fmt.Errorf("%w (%v)", ErrClosed, err)
	}
	return c.record(&CloseError{Code: StatusAbnormalClosure, Reason: err.Error(), err: err})
}

// heard counts what the peer sent: messages read, pings and pongs.
func (c *wsConn) heard() uint64 { return c.reads.Load() + c.signs.n.Load() }

// keepAlive pings the peer until the connection is finished or the peer is found dead
// (see KeepAlive for the rule).
func (c *wsConn) keepAlive(ka KeepAlive) {
	defer close(c.pinger)
	t := time.NewTicker(ka.Interval)
	defer t.Stop()
	heard := time.Now() // the peer's last sign of life: a message, a ping or pong, or being busy
	reads := c.heard()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), ka.Timeout)
		err := c.ws.Ping(ctx)
		timedOut := ctx.Err() != nil
		cancel()
		now := time.Now()
		if n := c.heard(); n != reads || (ka.Busy != nil && ka.Busy()) {
			reads, heard = n, now
		}
		if err == nil {
			c.pings.Add(1)
			heard = now
			continue
		}
		select {
		case <-c.done:
			return // closed meanwhile: not the peer's fault
		default:
		}
		if errors.Is(err, net.ErrClosed) && !timedOut {
			// Closed by someone else (the reader saw the peer's close, or a context ended);
			// they report why.
			return
		}
		if !timedOut {
			// The ping could not be written: the socket is gone.
			c.record(&CloseError{Code: StatusAbnormalClosure, Reason: "keep-alive: " + err.Error(), err: err})
			return
		}
		if silent := now.Sub(heard); silent < ka.silenceLimit() {
			continue // no pong this time, but heard from recently, or owed an answer
		}
		c.record(&CloseError{
			Code:   StatusAbnormalClosure,
			Reason: fmt.Sprintf("keep-alive: peer silent for %v (no pong within %v)", now.Sub(heard).Round(time.Millisecond), ka.Timeout),
			err:    err,
		})
		return
	}
}
