package transport_test

import (
	"context"
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
