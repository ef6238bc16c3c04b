package transport_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/transport/transporttest"
)

// memPair returns a real WebSocket connection over an in-memory network: the client end
// (an app, dialled with defaults: it answers pings only while it reads) and the server end
// (a host, accepted with ka). Call it inside a synctest bubble; stop closes everything.
func memPair(t *testing.T, ka transport.KeepAlive) (client, server transport.Conn, stop func()) {
	t.Helper()
	mem := transporttest.NewMemNet()
	accepted := make(chan transport.Conn, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := transport.Accept(w, r, transport.AcceptOptions{KeepAlive: ka})
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		accepted <- c
	})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(mem.Listener())
	}()
	hc := mem.HTTPClient()
	client, err := transport.Dial(context.Background(), "ws://127.0.0.1:1/ws", transport.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	server = <-accepted
	return client, server, func() {
		transport.Abort(client)
		transport.Abort(server)
		srv.Close()
		<-served
		hc.CloseIdleConnections()
	}
}

// The official .NET SDK runs a tool inside its receive loop: while the tool runs it reads
// nothing, so it answers no ping. A host waiting for that tool's answer must not take it
// for dead; the same silence with nothing owed is a dead peer.
func TestKeepAliveToolInsideReceiveLoop(t *testing.T) {
	const stall = 90 * time.Second // three ping intervals and then some
	ka := transport.KeepAlive{Interval: 30 * time.Second, Timeout: 30 * time.Second}

	t.Run("RequestPending", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var busy atomic.Bool
			ka := ka
			ka.Busy = busy.Load
			app, host, stop := memPair(t, ka)
			defer stop()
			got := make(chan []byte)
			failed := make(chan error, 1)
			go func() {
				for {
					_, data, err := host.Read(context.Background())
					if err != nil {
						failed <- err
						return
					}
					busy.Store(false) // the answer arrived
					got <- data
				}
			}()

			busy.Store(true)
			if err := host.Write(context.Background(), transport.MessageText, []byte(`{"type":"tool.call","id":"c1"}`)); err != nil {
				t.Fatal(err)
			}
			if _, _, err := app.Read(context.Background()); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			time.Sleep(stall) // the tool runs; the app reads nothing, so no pong goes out
			if err := app.Write(context.Background(), transport.MessageText, []byte(`{"type":"tool.result","replyTo":"c1"}`)); err != nil {
				t.Fatalf("app write after %v: %v", time.Since(start), err)
			}
			select {
			case <-got:
			case err := <-failed:
				t.Fatalf("the host dropped the busy app after %v: %v", time.Since(start), err)
			}
			// The app reads again: the queued pings are answered and the connection carries on.
			go transporttest.Echo(context.Background(), app)
			time.Sleep(3 * ka.Interval)
			if err := host.Write(context.Background(), transport.MessageText, []byte(`{"after":"stall"}`)); err != nil {
				t.Fatal(err)
			}
			select {
			case b := <-got:
				if string(b) != `{"after":"stall"}` {
					t.Fatalf("echo %s", b)
				}
			case err := <-failed:
				t.Fatalf("connection lost after the stall: %v", err)
			}
		})
	})

	t.Run("NothingPending", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, host, stop := memPair(t, ka)
			defer stop()
			start := time.Now()
			_, _, err := host.Read(context.Background()) // the app never reads: no pong
			if transport.CloseStatus(err) != transport.StatusAbnormalClosure {
				t.Fatalf("Read = %v, want a keep-alive 1006", err)
			}
			// Dead after one unanswered ping whose wait brought the silence to
			// Interval+Timeout (bubble time is exact).
			if got, want := time.Since(start), ka.Interval+ka.Timeout; got != want {
				t.Fatalf("declared dead after %v of silence, want %v", got, want)
			}
		})
	})

	t.Run("AnsweredRecently", func(t *testing.T) {
		// The app answered a call a moment before a ping went unanswered: it is not dead
		// yet; it is once it has been silent for Interval+Timeout.
		synctest.Test(t, func(t *testing.T) {
			app, host, stop := memPair(t, ka)
			defer stop()
			start := time.Now()
			errc := make(chan error, 1)
			go func() {
				for {
					if _, _, err := host.Read(context.Background()); err != nil {
						errc <- err
						return
					}
				}
			}()
			time.Sleep(ka.Interval + ka.Timeout/2) // a ping is out, unanswered
			app.Write(context.Background(), transport.MessageText, []byte(`{}`))
			err := <-errc
			if transport.CloseStatus(err) != transport.StatusAbnormalClosure {
				t.Fatalf("Read = %v, want a keep-alive 1006", err)
			}
			// Pings at 30, 60 and 90 s go unanswered; the message at 45 s counts as heard at
			// the 60 s check, so the peer dies at the 120 s check, 60 s after.
			if got, want := time.Since(start), 2*(ka.Interval+ka.Timeout); got != want {
				t.Fatalf("declared dead at %v, want %v", got, want)
			}
		})
	})
}

// rawClient opens a WebSocket connection over mem by hand, so that a test can send what no
// library's API sends: unsolicited pongs. It never reads after the handshake (so it
// answers no ping), like a .NET app whose receive loop runs a tool.
func rawClient(t *testing.T, mem *transporttest.MemNet) net.Conn {
	t.Helper()
	c, err := mem.Dial(context.Background(), "tcp", "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(c, "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	return c
}

// pong writes an unsolicited pong frame (masked, as a client's frames are), as .NET's
// ClientWebSocket does every KeepAliveInterval.
func pong(c net.Conn) error {
	_, err := c.Write([]byte{0x8A, 0x80, 1, 2, 3, 4}) // FIN+pong, masked, empty payload, mask key
	return err
}

// TestKeepAliveUnsolicitedPongs: an app that answers no ping but sends pongs of its own
// (the official .NET SDK running a tool inside its receive loop, its ClientWebSocket's
// keep-alive timer still sending) is alive; once the pongs stop too, it is dead.
func TestKeepAliveUnsolicitedPongs(t *testing.T) {
	ka := transport.KeepAlive{Interval: 30 * time.Second, Timeout: 30 * time.Second}
	synctest.Test(t, func(t *testing.T) {
		mem := transporttest.NewMemNet()
		accepted := make(chan transport.Conn, 1)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := transport.Accept(w, r, transport.AcceptOptions{KeepAlive: ka})
			if err != nil {
				t.Errorf("accept: %v", err)
				return
			}
			accepted <- c
		})}
		go srv.Serve(mem.Listener())
		defer srv.Close()
		app := rawClient(t, mem)
		defer app.Close()
		host := <-accepted
		defer transport.Abort(host)
		failed := make(chan error, 1)
		start := time.Now()
		go func() {
			_, _, err := host.Read(context.Background())
			failed <- err
		}()
		const alive = 10 * time.Minute // twenty ping intervals
		for time.Since(start) < alive {
			time.Sleep(30 * time.Second)
			if err := pong(app); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case err := <-failed:
			t.Fatalf("the host dropped an app that sent pongs, after %v: %v", time.Since(start), err)
		default:
		}
		// The pongs stop: dead within two checks.
		err := <-failed
		if transport.CloseStatus(err) != transport.StatusAbnormalClosure || time.Since(start) > alive+2*(ka.Interval+ka.Timeout) {
			t.Fatalf("after the pongs stopped: %v at %v", err, time.Since(start))
		}
	})
}
