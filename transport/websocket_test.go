package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wsServer is a loopback HTTP server whose handler accepts WebSocket upgrades with opts and
// hands the connections to the test.
type wsServer struct {
	*httptest.Server
	conns   chan Conn
	headers chan http.Header
}

func newWSServer(t *testing.T, opts AcceptOptions) *wsServer {
	t.Helper()
	s := &wsServer{conns: make(chan Conn, 1), headers: make(chan http.Header, 1)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Accept(w, r, opts)
		if err != nil {
			return
		}
		s.headers <- r.Header.Clone()
		s.conns <- c
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *wsServer) url() string { return "ws" + strings.TrimPrefix(s.URL, "http") }

// dial connects to s and returns the client end and the server end, both closed by cleanup.
func (s *wsServer) dial(t *testing.T, opts DialOptions) (client, server Conn) {
	t.Helper()
	client, err := Dial(context.Background(), s.url(), opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	server = <-s.conns
	t.Cleanup(func() { closeBoth(client, server) })
	return client, server
}

// closeBoth closes a and b at the same time: each side's Close then reads the other's close
// frame, so neither waits for a reader that is not there.
func closeBoth(a, b Conn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Close(StatusNormalClosure, "")
	}()
	b.Close(StatusNormalClosure, "")
	<-done
}

func newWSPair(t *testing.T, readLimit int64) (Conn, Conn) {
	s := newWSServer(t, AcceptOptions{ReadLimit: readLimit})
	return s.dial(t, DialOptions{ReadLimit: readLimit})
}

func TestWebSocketDefaultReadLimit(t *testing.T) {
	t.Parallel()
	// Far above coder/websocket's own 32 KiB default: a crash report of several MiB must pass.
	a, b := newWSPair(t, 0)
	msg := bytes.Repeat([]byte("x"), 8<<20)
	errc := writeAsync(a, MessageText, msg)
	mustRead(t, b, MessageText, msg)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	errc = writeAsync(b, MessageBinary, msg)
	mustRead(t, a, MessageBinary, msg)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestWebSocketDialHeader(t *testing.T) {
	t.Parallel()
	s := newWSServer(t, AcceptOptions{})
	h := http.Header{"Authorization": {"Bearer s3cret"}}
	s.dial(t, DialOptions{Header: h})
	if got := (<-s.headers).Get("Authorization"); got != "Bearer s3cret" {
		t.Fatalf("server saw Authorization %q", got)
	}
}

func TestWebSocketDialErrors(t *testing.T) {
	t.Parallel()
	refused := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer refused.Close()
	// A listener that is closed at once gives a port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := l.Addr().String()
	l.Close()

	tests := []struct {
		name  string
		url   string
		check func(t *testing.T, err error)
	}{
		{"Unauthorized", "ws" + strings.TrimPrefix(refused.URL, "http") + "/ws?token=s3cret", func(t *testing.T, err error) {
			if he, ok := errors.AsType[*HandshakeError](err); !ok || he.StatusCode != http.StatusUnauthorized {
				t.Errorf("error %v, want *HandshakeError 401", err)
			}
		}},
		{"Refused", "ws://" + deadAddr + "/ws?token=s3cret", func(t *testing.T, err error) {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("error %v, want ECONNREFUSED in the chain", err)
			}
		}},
		{"Scheme", "ftp://127.0.0.1/ws?token=s3cret", nil},
		{"Malformed", "ws://[::1/ws?token=s3cret", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Dial(context.Background(), tt.url, DialOptions{})
			if err == nil {
				c.Close(StatusNormalClosure, "")
				t.Fatal("Dial succeeded")
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error leaks the token: %v", err)
			}
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
}

func TestWebSocketDialContextOnlyBoundsHandshake(t *testing.T) {
	t.Parallel()
	s := newWSServer(t, AcceptOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	client, err := Dial(ctx, s.url(), DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	server := <-s.conns
	defer closeBoth(client, server)
	cancel()
	mustWrite(t, client, MessageText, []byte("still here"))
	mustRead(t, server, MessageText, []byte("still here"))
	mustWrite(t, server, MessageText, []byte("me too"))
	mustRead(t, client, MessageText, []byte("me too"))
}

func TestAcceptNoOriginPolicy(t *testing.T) {
	t.Parallel()
	// A cross-origin request is the caller's business (the host rejects Origin before
	// calling Accept); Accept itself lets it through.
	s := newWSServer(t, AcceptOptions{})
	client, server := s.dial(t, DialOptions{Header: http.Header{"Origin": {"https://evil.example"}}})
	mustWrite(t, client, MessageText, []byte("hi"))
	mustRead(t, server, MessageText, []byte("hi"))
}

func TestAcceptNotUpgrade(t *testing.T) {
	t.Parallel()
	s := newWSServer(t, AcceptOptions{})
	resp, err := http.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Fatalf("plain GET answered %d, want 426", resp.StatusCode)
	}
}

func TestWebSocketCompression(t *testing.T) {
	t.Parallel()
	for _, mode := range []CompressionMode{CompressionNoContextTakeover, CompressionContextTakeover} {
		s := newWSServer(t, AcceptOptions{CompressionMode: mode, ReadLimit: 4096})
		client, server := s.dial(t, DialOptions{CompressionMode: mode, ReadLimit: 4096})
		msg := bytes.Repeat([]byte(`{"k":"v"}`), 400)
		mustWrite(t, client, MessageText, msg)
		mustRead(t, server, MessageText, msg)
		// The limit applies to the inflated size: a message that compresses to a few bytes
		// but inflates past it is refused.
		mustWrite(t, client, MessageText, bytes.Repeat([]byte("a"), 5000))
		wantClose(t, server, StatusMessageTooBig, "*")
	}
	if _, err := Dial(context.Background(), "ws://127.0.0.1:1/", DialOptions{CompressionMode: 99}); err == nil {
		t.Error("Dial accepted an unknown compression mode")
	}
}

func TestWebSocketPeerVanishes(t *testing.T) {
	t.Parallel()
	client, server := newWSPair(t, 0)
	// Drop the TCP connection without a close frame.
	server.(*wsConn).ws.CloseNow()
	_, _, err := client.Read(context.Background())
	if CloseStatus(err) != StatusAbnormalClosure {
		t.Fatalf("Read = %v, want *CloseError 1006", err)
	}
	// Later calls report the same.
	if err := client.Write(context.Background(), MessageText, []byte("x")); CloseStatus(err) != StatusAbnormalClosure {
		t.Fatalf("Write = %v, want *CloseError 1006", err)
	}
}

func TestWebSocketKeepAlive(t *testing.T) {
	t.Parallel()
	t.Run("DeadPeer", func(t *testing.T) {
		// The server never reads, so it never answers a ping.
		s := newWSServer(t, AcceptOptions{})
		client, _ := s.dial(t, DialOptions{KeepAlive: KeepAlive{Interval: 5 * time.Millisecond, Timeout: 20 * time.Millisecond}})
		_, _, err := client.Read(context.Background())
		ce, ok := errors.AsType[*CloseError](err)
		if !ok || ce.Code != StatusAbnormalClosure || !strings.Contains(ce.Reason, "keep-alive") {
			t.Fatalf("Read = %v, want a keep-alive *CloseError 1006", err)
		}
		if err := client.Write(context.Background(), MessageText, []byte("x")); CloseStatus(err) != StatusAbnormalClosure {
			t.Fatalf("Write after keep-alive failure = %v", err)
		}
	})
	t.Run("LivePeer", func(t *testing.T) {
		// Both sides read, so pongs come back and the connection stays up. The server pings
		// too; the client's Read answers.
		// Pings go out every millisecond; the timeout is generous so that a slow machine does
		// not look like a dead peer.
		ka := KeepAlive{Interval: time.Millisecond, Timeout: time.Minute}
		s := newWSServer(t, AcceptOptions{KeepAlive: ka})
		client, server := s.dial(t, DialOptions{KeepAlive: ka})
		go func() {
			// Echo until the connection closes.
			for {
				typ, data, err := server.Read(context.Background())
				if err != nil {
					return
				}
				if server.Write(context.Background(), typ, data) != nil {
					return
				}
			}
		}()
		cw, sw := client.(*wsConn), server.(*wsConn)
		for i := 0; cw.pings.Load() < 5 || sw.pings.Load() < 5; i++ {
			msg := []byte{byte(i)}
			mustWrite(t, client, MessageBinary, msg)
			mustRead(t, client, MessageBinary, msg)
		}
		// Closing stops both pingers (goleak checks).
		if err := client.Close(StatusNormalClosure, ""); err != nil {
			t.Fatalf("Close: %v", err)
		}
	})
}
