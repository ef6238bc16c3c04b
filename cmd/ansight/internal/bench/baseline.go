package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// The baseline is the protocol's connection with the protocol taken out: the same
// transport (package transport over coder/websocket, loopback TCP) and the same roles —
// the measuring side accepts the connection and sends requests, as the host does, and the
// other side dials and answers, as an app does — but no envelopes, no JSON, no catalog,
// no schemas, no handlers. The roles matter for large messages: a WebSocket client masks
// what it sends, which coder/websocket does in 4 KiB writes, so a 64 KiB answer costs its
// client sender more than a server sender; the baseline's answers travel from client to
// server like the app's.
//
// It is the older baseline of calls and queries, reported beside the floor (floor.go) for
// one release, and remains the baseline of artifacts (the raw stream).
//
// Messages, all text except stream chunks:
//
//	'R' <16 hex id> <10 digit response size> <padding>   request → response of that size,
//	                                                      'R' <16 hex id> <padding>
//	'S' <20 digit size> <10 digit chunk>                  request → a stream of size payload
//	                                                      bytes in binary messages of an ASFT
//	                                                      frame's size (header and chunk)
const (
	kindRequest = 'R'
	kindStream  = 'S'

	requestHeader = 1 + 16 + 10
	responseIDEnd = 1 + 16
	streamHeader  = 1 + 20 + 10
)

// baseline is the loopback WebSocket server the protocol is compared with.
type baseline struct {
	ln       net.Listener
	srv      *http.Server
	url      string
	dir      string              // where streams are written
	accepted chan transport.Conn // server ends, to the dial waiting for them
	// wg tracks the server, its handlers (which http.Server.Close does not wait for once
	// they are hijacked) and the answering ends.
	wg sync.WaitGroup
}

// startBaseline listens on a loopback port; streams are written to files in dir.
func startBaseline(dir string) (*baseline, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: baseline listener: %w", err)
	}
	b := &baseline{ln: ln, url: "ws://" + ln.Addr().String(), dir: dir, accepted: make(chan transport.Conn)}
	b.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.wg.Add(1)
		defer b.wg.Done()
		b.accept(w, r)
	})}
	b.wg.Go(func() { _ = b.srv.Serve(ln) })
	return b, nil
}

// close stops the server and waits for its handlers and answering ends; close the
// clients first.
func (b *baseline) close() {
	_ = b.srv.Close()
	b.wg.Wait()
}

// accept upgrades one connection and hands its server end to the dial waiting for it.
func (b *baseline) accept(w http.ResponseWriter, r *http.Request) {
	conn, err := transport.Accept(w, r, transport.AcceptOptions{})
	if err != nil {
		return
	}
	select {
	case b.accepted <- conn:
	case <-r.Context().Done():
		_ = conn.Close(transport.StatusGoingAway, "")
	}
}

// dial connects to the baseline over package transport and returns the server end, from
// which requests are sent; the client end answers them.
func (b *baseline) dial(ctx context.Context) (*echoClient, error) {
	conn, err := transport.Dial(ctx, b.url+"/", transport.DialOptions{})
	if err != nil {
		return nil, fmt.Errorf("bench: baseline dial: %w", err)
	}
	return b.pair(ctx, conn)
}

// pair starts answering on the client end and returns the server end's caller.
func (b *baseline) pair(ctx context.Context, client transport.Conn) (*echoClient, error) {
	select {
	case server := <-b.accepted:
		b.wg.Go(func() { answer(client) })
		return newEchoClient(server, b.dir), nil
	case <-ctx.Done():
		_ = client.Close(transport.StatusGoingAway, "")
		return nil, ctx.Err()
	}
}

// answer answers requests on conn, from its reader as an app's leader does, until the
// connection ends; then it closes it.
func answer(conn transport.Conn) {
	defer conn.Close(transport.StatusNormalClosure, "")
	ctx := context.Background()
	var resp, chunk []byte
	for {
		typ, msg, err := conn.Read(ctx)
		if err != nil || typ != transport.MessageText || len(msg) == 0 {
			return
		}
		switch {
		case msg[0] == kindRequest && len(msg) >= requestHeader:
			n, err := strconv.Atoi(string(msg[responseIDEnd:requestHeader]))
			if err != nil || n < responseIDEnd || n > int(transport.DefaultReadLimit) {
				return
			}
			if cap(resp) < n {
				resp = bytes.Repeat([]byte{'y'}, n)
			}
			resp = resp[:n]
			copy(resp, msg[:responseIDEnd])
			if conn.Write(ctx, transport.MessageText, resp) != nil {
				return
			}
		case msg[0] == kindStream && len(msg) == streamHeader:
			size, err1 := strconv.ParseInt(string(msg[1:21]), 10, 64)
			n, err2 := strconv.Atoi(string(msg[21:]))
			if err1 != nil || err2 != nil || size < 0 || n < 1 || n > int(transport.DefaultReadLimit)-wire.FrameHeaderSize {
				return
			}
			if cap(chunk) < wire.FrameHeaderSize+n {
				chunk = make([]byte, wire.FrameHeaderSize+n)
			}
			for off := int64(0); off < size; {
				m := int(min(int64(n), size-off))
				if conn.Write(ctx, transport.MessageBinary, chunk[:wire.FrameHeaderSize+m]) != nil {
					return
				}
				off += int64(m)
			}
		default:
			return
		}
	}
}

// echoClient is the requesting side of the baseline: one connection, one reader goroutine
// matching responses to callers by id and writing streams to files, as a protocol client
// must.
type echoClient struct {
	conn   transport.Conn
	dir    string
	nextID atomic.Uint64
	spare  chan chan struct{} // answered requests' channels, for reuse

	mu      sync.Mutex
	pending map[string]chan struct{} // capacity 1, answered with a send
	stream  *stream                  // the stream being received; one at a time
	err     error                    // why the reader stopped

	done chan struct{}
}

// stream is a stream being received into a file.
type stream struct {
	f        *os.File
	left     int64
	err      error
	finished chan struct{}
}

func newEchoClient(conn transport.Conn, dir string) *echoClient {
	c := &echoClient{conn: conn, dir: dir, pending: map[string]chan struct{}{}, spare: make(chan chan struct{}, 64),
		done: make(chan struct{})}
	go c.read()
	return c
}

func (c *echoClient) read() {
	defer close(c.done)
	ctx := context.Background()
	for {
		typ, msg, err := c.conn.Read(ctx)
		if err == nil && len(msg) == 0 {
			err = errors.New("bench: baseline: empty message")
		}
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		switch {
		case typ == transport.MessageBinary:
			c.receive(msg)
		case msg[0] == kindRequest && len(msg) >= responseIDEnd:
			c.mu.Lock()
			ch := c.pending[string(msg[1:responseIDEnd])]
			delete(c.pending, string(msg[1:responseIDEnd]))
			c.mu.Unlock()
			if ch != nil {
				ch <- struct{}{}
			}
		}
	}
}

// receive writes one stream chunk's payload to the stream's file, as the host does with a
// frame.
func (c *echoClient) receive(msg []byte) {
	c.mu.Lock()
	s := c.stream
	c.mu.Unlock()
	if s == nil || s.left <= 0 || len(msg) < wire.FrameHeaderSize {
		return
	}
	n, err := s.f.Write(msg[wire.FrameHeaderSize:])
	transport.Recycle(msg) // as the host does with a frame on disk
	s.left -= int64(n)
	if err != nil || s.left <= 0 {
		s.err = err
		close(s.finished)
	}
}

func (c *echoClient) close() {
	_ = c.conn.Close(transport.StatusNormalClosure, "")
	<-c.done
}

func (c *echoClient) readErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return fmt.Errorf("bench: baseline connection: %w", c.err)
	}
	return errors.New("bench: baseline connection closed")
}

// roundTrip sends a request message of reqSize bytes and waits for the response of
// respSize bytes. It makes what a protocol client must make per request (an id string for
// the map) and reuses the rest, so that the baseline's own overhead flatters nothing.
func (c *echoClient) roundTrip(ctx context.Context, reqSize, respSize int) error {
	reqSize = max(reqSize, requestHeader)
	respSize = max(respSize, responseIDEnd)
	buf := echoBuffers.Get().(*[]byte)
	defer echoBuffers.Put(buf)
	msg := slices.Grow((*buf)[:0], reqSize)[:reqSize]
	*buf = msg
	msg[0] = kindRequest
	putDigits(msg[1:responseIDEnd], c.nextID.Add(1), 16)
	putDigits(msg[responseIDEnd:requestHeader], uint64(respSize), 10)
	for i := requestHeader; i < reqSize; i++ {
		msg[i] = 'x'
	}
	id := string(msg[1:responseIDEnd])
	var ch chan struct{}
	select {
	case ch = <-c.spare:
	default:
		ch = make(chan struct{}, 1)
	}
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.conn.Write(ctx, transport.MessageText, msg); err != nil {
		return fmt.Errorf("bench: baseline write: %w", err)
	}
	select {
	case <-ch:
		select { // answered: ch is empty and unreferenced again
		case c.spare <- ch:
		default:
		}
		return nil
	case <-c.done:
		return c.readErr()
	case <-ctx.Done():
		return ctx.Err()
	}
}

var echoBuffers = sync.Pool{New: func() any { return new([]byte) }}

// putDigits writes n into dst as len(dst) digits of base (10 or 16), zero-padded.
func putDigits(dst []byte, n uint64, base uint64) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = "0123456789abcdef"[n%base]
		n /= base
	}
}

// receiveStream asks for size payload bytes in binary messages of an ASFT frame's size
// (header plus chunk bytes of payload), writes them to a file in the baseline's
// directory and returns once they are all on disk; the file is then deleted.
func (c *echoClient) receiveStream(ctx context.Context, size int64, chunk int) error {
	f, err := os.CreateTemp(c.dir, "baseline-stream-*.bin")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	s := &stream{f: f, left: size, finished: make(chan struct{})}
	if size == 0 {
		close(s.finished)
	}
	c.mu.Lock()
	c.stream = s
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.stream = nil
		c.mu.Unlock()
	}()
	if err := c.conn.Write(ctx, transport.MessageText, fmt.Appendf(nil, "%c%020d%010d", kindStream, size, chunk)); err != nil {
		return fmt.Errorf("bench: baseline write: %w", err)
	}
	select {
	case <-s.finished:
		if s.err != nil {
			return s.err
		}
		return f.Close()
	case <-c.done:
		return c.readErr()
	case <-ctx.Done():
		return ctx.Err()
	}
}
