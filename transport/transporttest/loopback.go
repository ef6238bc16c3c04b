package transporttest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ansight-go/ansight/transport"
)

// Options configures the two ends of a loopback connection. The zero value gives the
// defaults on both sides.
type Options struct {
	Dial   transport.DialOptions
	Accept transport.AcceptOptions
}

// NewLoopbackPair returns the client and server ends of a real WebSocket connection over
// loopback TCP (an httptest server on 127.0.0.1). The test may close either end; whatever is
// left open is closed, and the server shut down, when the test ends.
func NewLoopbackPair(t testing.TB, opts Options) (client, server transport.Conn) {
	t.Helper()
	conns := make(chan transport.Conn, 1)
	url := startServer(t, opts.Accept, func(c transport.Conn) { conns <- c })
	client, err := transport.Dial(context.Background(), url, opts.Dial)
	if err != nil {
		t.Fatalf("transporttest: dial loopback server: %v", err)
	}
	server = <-conns
	t.Cleanup(func() { CloseBoth(client, server) })
	return client, server
}

// NewServer starts a loopback WebSocket server that calls serve with every connection it
// accepts, and returns its ws:// URL (any path). When serve returns, the connection is closed
// normally. When the test ends, the server stops, connections still open are aborted, and
// the cleanup waits for every serve call to return.
func NewServer(t testing.TB, opts transport.AcceptOptions, serve func(transport.Conn)) string {
	t.Helper()
	return startServer(t, opts, func(c transport.Conn) {
		serve(c)
		c.Close(transport.StatusNormalClosure, "")
	})
}

// NewEchoServer starts a loopback WebSocket server that echoes every message back on the
// connection it came from, and returns its ws:// URL.
func NewEchoServer(t testing.TB, opts transport.AcceptOptions) string {
	t.Helper()
	return NewServer(t, opts, func(c transport.Conn) { Echo(context.Background(), c) })
}

// Echo writes every message it reads from c back to c, until a Read or Write fails or ctx
// ends, and returns that error.
func Echo(ctx context.Context, c transport.Conn) error {
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			return err
		}
		if err := c.Write(ctx, typ, data); err != nil {
			return err
		}
	}
}

// CloseBoth closes the two ends of a connection at the same time with StatusNormalClosure.
// Over WebSocket a Close waits for the peer to answer the close frame from its Read; closing
// both at once lets each Close read the other's frame, so neither waits for a reader that is
// not there.
func CloseBoth(a, b transport.Conn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Close(transport.StatusNormalClosure, "")
	}()
	b.Close(transport.StatusNormalClosure, "")
	<-done
}

// startServer runs an httptest server that accepts WebSocket upgrades with opts and calls
// handle in the handler goroutine. The cleanup stops the server, aborts the connections it
// accepted and waits for the handlers.
func startServer(t testing.TB, opts transport.AcceptOptions, handle func(transport.Conn)) string {
	t.Helper()
	var (
		mu       sync.Mutex
		closed   bool
		conns    []transport.Conn
		handlers sync.WaitGroup
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if closed {
			mu.Unlock()
			http.Error(w, "server closing", http.StatusServiceUnavailable)
			return
		}
		handlers.Add(1) // under mu, so the cleanup's Wait covers it
		mu.Unlock()
		defer handlers.Done()
		c, err := transport.Accept(w, r, opts)
		if err != nil {
			return
		}
		mu.Lock()
		if closed {
			mu.Unlock()
			transport.Abort(c)
			return
		}
		conns = append(conns, c)
		mu.Unlock()
		handle(c)
	}))
	t.Cleanup(func() {
		// Hijacked connections outlive the server's Close: abort them, so handlers blocked
		// in Read return, then wait for the handlers.
		mu.Lock()
		closed = true
		open := conns
		mu.Unlock()
		for _, c := range open {
			transport.Abort(c)
		}
		srv.Close()
		handlers.Wait()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}
