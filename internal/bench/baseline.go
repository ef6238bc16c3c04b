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

	"github.com/coder/websocket"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// The baseline is the same transport (package transport over coder/websocket, loopback TCP)
// with the protocol taken out: no envelopes, no JSON, no catalog, no schemas, no handlers.
// A second one, at /plain, is the same echo over coder/websocket used directly (its Read
// and Write, no package transport), to show what the transport package itself costs.
// A request is a text message of the request's size that the server answers at once, from
// its reader, with a text message of the response's size; a stream is binary messages of
// the ASFT frames' size whose payload the server writes to a file, as the host does.
//
// Messages, all text except stream chunks:
//
//	'R' <16 hex id> <10 digit response size> <padding>   request → response of that size
//	'S' <20 digit size>                                  start of a stream of size payload bytes
//	'D'                                                  the stream is on disk
const (
	kindRequest = 'R'
	kindStream  = 'S'
	kindDone    = 'D'

	requestHeader = 1 + 16 + 10
	responseIDEnd = 1 + 16
)

// baseline is the loopback WebSocket server the protocol is compared with.
type baseline struct {
	ln  net.Listener
	srv *http.Server
	url string
	dir string // where streams are written
	// wg tracks the server and its connections' handlers, which http.Server.Close does not
	// wait for once they are hijacked.
	wg sync.WaitGroup
}

// startBaseline listens on a loopback port; streams are written to files in dir.
func startBaseline(dir string) (*baseline, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: baseline listener: %w", err)
	}
	b := &baseline{ln: ln, url: "ws://" + ln.Addr().String(), dir: dir}
	b.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.wg.Add(1)
		defer b.wg.Done()
		b.serve(w, r)
	})}
	b.wg.Go(func() { _ = b.srv.Serve(ln) })
	return b, nil
}

// close stops the server and waits for its handlers; close the clients first.
func (b *baseline) close() {
	_ = b.srv.Close()
	b.wg.Wait()
}

// serve answers one connection until it closes.
func (b *baseline) serve(w http.ResponseWriter, r *http.Request) {
	var conn transport.Conn
	if r.URL.Path == plainPath {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		ws.SetReadLimit(transport.DefaultReadLimit)
		conn = plainConn{ws}
	} else {
		c, err := transport.Accept(w, r, transport.AcceptOptions{})
		if err != nil {
			return
		}
		conn = c
	}
	defer conn.Close(transport.StatusNormalClosure, "")
	ctx := context.Background()
	var resp []byte
	for {
		typ, msg, err := conn.Read(ctx)
		if err != nil {
			return
		}
		if typ != transport.MessageText || len(msg) == 0 {
			return
		}
		switch msg[0] {
		case kindRequest:
			if len(msg) < requestHeader {
				return
			}
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
		case kindStream:
			size, err := strconv.ParseInt(string(msg[1:]), 10, 64)
			if err != nil || size < 0 || b.receive(ctx, conn, size) != nil {
				return
			}
			if conn.Write(ctx, transport.MessageText, []byte{kindDone}) != nil {
				return
			}
		default:
			return
		}
	}
}

// receive writes size payload bytes of binary messages (each an ASFT-sized frame: header,
// then payload) to a file, then deletes it.
func (b *baseline) receive(ctx context.Context, conn transport.Conn, size int64) error {
	f, err := os.CreateTemp(b.dir, "baseline-stream-*.bin")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	for got := int64(0); got < size; {
		typ, msg, err := conn.Read(ctx)
		if err != nil {
			return err
		}
		if typ != transport.MessageBinary || len(msg) <= wire.FrameHeaderSize {
			return errors.New("bench: baseline stream: unexpected message")
		}
		n, err := f.Write(msg[wire.FrameHeaderSize:])
		if err != nil {
			return err
		}
		transport.Recycle(msg) // as the host does with a frame on disk
		got += int64(n)
	}
	return f.Close()
}

// echoClient is the caller's side of the baseline: one connection, one reader goroutine
// matching responses to callers by id, as a protocol client must.
type echoClient struct {
	conn   transport.Conn
	nextID atomic.Uint64

	spare chan chan struct{} // answered requests' channels, for reuse

	mu      sync.Mutex
	pending map[string]chan struct{} // capacity 1, answered with a send
	stream  chan struct{}            // the server's 'D'; one stream at a time
	err     error                    // why the reader stopped

	done chan struct{}
}

// dial connects to the echo over package transport.
func (b *baseline) dial(ctx context.Context) (*echoClient, error) {
	conn, err := transport.Dial(ctx, b.url+"/", transport.DialOptions{})
	if err != nil {
		return nil, fmt.Errorf("bench: baseline dial: %w", err)
	}
	return newEchoClient(conn), nil
}

// dialPlain connects to the echo over coder/websocket used directly.
func (b *baseline) dialPlain(ctx context.Context) (*echoClient, error) {
	ws, _, err := websocket.Dial(ctx, b.url+plainPath, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: baseline dial: %w", err)
	}
	ws.SetReadLimit(transport.DefaultReadLimit)
	return newEchoClient(plainConn{ws}), nil
}

func newEchoClient(conn transport.Conn) *echoClient {
	c := &echoClient{conn: conn, pending: map[string]chan struct{}{}, spare: make(chan chan struct{}, 64),
		stream: make(chan struct{}, 1), done: make(chan struct{})}
	go c.read()
	return c
}

// plainPath is where the baseline answers over coder/websocket used directly.
const plainPath = "/plain"

// plainConn is a coder/websocket connection used as its documentation shows (Read and
// Write with a context that never ends), behind the Conn interface only so that the echo's
// code is shared.
type plainConn struct{ ws *websocket.Conn }

func (c plainConn) Read(ctx context.Context) (transport.MessageType, []byte, error) {
	typ, msg, err := c.ws.Read(ctx)
	return transport.MessageType(typ), msg, err
}

func (c plainConn) Write(ctx context.Context, typ transport.MessageType, data []byte) error {
	return c.ws.Write(ctx, websocket.MessageType(typ), data)
}

func (c plainConn) Close(code transport.StatusCode, reason string) error {
	return c.ws.Close(websocket.StatusCode(code), reason)
}

func (c *echoClient) read() {
	defer close(c.done)
	ctx := context.Background()
	for {
		typ, msg, err := c.conn.Read(ctx)
		if err == nil && (typ != transport.MessageText || len(msg) == 0) {
			err = errors.New("bench: baseline: unexpected message")
		}
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		switch {
		case msg[0] == kindDone:
			c.stream <- struct{}{}
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

// sendStream streams size payload bytes in binary messages of an ASFT frame's size
// (header plus chunk bytes of payload) and waits until the server has them on disk.
func (c *echoClient) sendStream(ctx context.Context, size int64, chunk int) error {
	if err := c.conn.Write(ctx, transport.MessageText, fmt.Appendf(nil, "%c%020d", kindStream, size)); err != nil {
		return fmt.Errorf("bench: baseline write: %w", err)
	}
	buf := make([]byte, wire.FrameHeaderSize+chunk)
	for off := int64(0); off < size; {
		n := int(min(int64(chunk), size-off))
		if err := c.conn.Write(ctx, transport.MessageBinary, buf[:wire.FrameHeaderSize+n]); err != nil {
			return fmt.Errorf("bench: baseline write: %w", err)
		}
		off += int64(n)
	}
	select {
	case <-c.stream:
		return nil
	case <-c.done:
		return c.readErr()
	case <-ctx.Done():
		return ctx.Err()
	}
}
