package host

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/transport/transporttest"
	"github.com/ansight-go/ansight/wire"
)

// memHost is a Server whose WebSocket listener is an in-memory network, so that a test can
// run in a synctest bubble with the real upgrade handler, real WebSocket connections and
// the default keep-alive (30 s pings): bubble time passes as fast as the goroutines block.
// Enrollment is called directly rather than over UDP, which has no in-memory form.
type memHost struct {
	*Server
	mem  *transporttest.MemNet
	http *http.Server
	done chan struct{}
}

func newMemHost(t *testing.T, opts Options) *memHost {
	t.Helper()
	opts.HostName = "test-host"
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h := &memHost{Server: s, mem: transporttest.NewMemNet(), done: make(chan struct{})}
	s.wsAddr = netip.MustParseAddrPort("127.0.0.1:1") // what the enrollment result advertises
	h.http = &http.Server{Handler: http.HandlerFunc(s.serveUpgrade)}
	go func() {
		defer close(h.done)
		h.http.Serve(h.mem.Listener())
	}()
	return h
}

// connect enrolls a in local mode and upgrades as the official SDKs do (token in the query).
func (h *memHost) connect(t *testing.T, a app) (transport.Conn, func()) {
	t.Helper()
	res := enrollDirect(h.Server, a.local(), loopback)
	if !res.Accepted {
		t.Fatalf("enrollment: %s", res.Reason)
	}
	hc := h.mem.HTTPClient()
	conn, err := transport.Dial(context.Background(), "ws://127.0.0.1:1/ws?token="+res.WebSocketToken, transport.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	return conn, func() {
		h.Close()
		transport.Abort(conn)
		h.http.Close()
		<-h.done
		hc.CloseIdleConnections()
	}
}

// Messages of an app built with the official .NET SDK: its catalog index, and the answer
// of ui.wait (WaitForUiTool) after the condition held.
const (
	dotnetIndex = `{"schema":"ansight.tool-catalog.v3","revision":"sha256:5d1c","tools":[{"id":"ui.wait","name":"Wait for UI","description":"Waits until a UI query matches.","category":"ui","policy":"read","definitionRevision":"sha256:77aa"}],"count":1,"detail":"index","availabilityRevision":"sha256:0b9e","evaluatedAtUtc":"2026-07-30T01:00:00.1234567+00:00","totalCount":1,"categories":{"ui":1}}`
	dotnetWait  = `{"toolId":"ui.wait","success":true,"message":null,"result":{"condition":"exists","matched":true,"elapsedMilliseconds":90012,"query":{"automationId":"checkout.done"}},"evidence":null}`
)

// dotnetAnswer writes the .NET SDK's response envelope to request env.
func dotnetAnswer(t *testing.T, conn transport.Conn, env wire.Envelope, typ, payload string) {
	t.Helper()
	msg := `{"type":"` + typ + `","id":"` + env.ID + `.response","replyTo":"` + env.ID + `","sessionId":"` + env.SessionID +
		`","sentAt":"` + time.Now().UTC().Format("2006-01-02T15:04:05.0000000+00:00") + `","capability":"tool.exec","payload":` + payload + `}`
	if err := conn.Write(context.Background(), transport.MessageText, []byte(msg)); err != nil {
		t.Fatalf("app write: %v", err)
	}
}

// readRequest reads the next tool request, skipping control responses.
func readRequest(t *testing.T, conn transport.Conn) wire.Envelope {
	t.Helper()
	for {
		_, data, err := conn.Read(context.Background())
		if err != nil {
			t.Fatalf("app read: %v", err)
		}
		if strings.Contains(string(data), `"CONTROL_RESP"`) {
			continue
		}
		env, err := wire.DecodeEnvelope(data)
		if err != nil {
			t.Fatalf("request %s: %v", data, err)
		}
		return env
	}
}

// TestLongToolInsideReceiveLoop is issue 12.3 as the .NET SDK behaves: it runs a tool
// inside its receive pump, so while the tool runs it reads nothing and answers none of the
// host's pings (every 30 s, the default). The host waits for the call (its caller allowed
// longer than the tool takes), the call completes, and the session stays connected. 90 s is
// a ui.wait beyond its 60 s cap; 4 minutes a slow download, far beyond any silence the
// keep-alive tolerates without a request pending.
func TestLongToolInsideReceiveLoop(t *testing.T) {
	t.Parallel()
	for _, stall := range []time.Duration{90 * time.Second, 4 * time.Minute} {
		t.Run(stall.String(), func(t *testing.T) { testLongTool(t, stall) })
	}
}

func testLongTool(t *testing.T, stall time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemHost(t, Options{}) // default keep-alive: 30 s pings, 30 s for the pong
		conn, stop := h.connect(t, newApp("com.example.app"))
		defer stop()
		writeText(t, conn, sdkOpen)
		sess := h.sessionFor(t, "com.example.app")

		type outcome struct {
			res string
			err error
		}
		called := make(chan outcome, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), stall+time.Minute)
			defer cancel()
			r, err := sess.Tools().Call(ctx, wire.Call{ToolID: "ui.wait",
				Arguments: []byte(`{"automationId":"checkout.done","condition":"exists","timeoutMilliseconds":60000}`)})
			if err != nil {
				called <- outcome{err: err}
				return
			}
			called <- outcome{res: string(r.Raw)}
		}()
		q := readRequest(t, conn)
		if q.Type != wire.TypeQuery {
			t.Fatalf("first request %s", q.Type)
		}
		dotnetAnswer(t, conn, q, wire.TypeCatalog, dotnetIndex)
		call := readRequest(t, conn)
		if call.Type != wire.TypeCall {
			t.Fatalf("second request %s", call.Type)
		}
		start := time.Now()
		time.Sleep(stall) // the tool runs inside the receive loop: nothing is read
		dotnetAnswer(t, conn, call, wire.TypeResult, dotnetWait)
		go func() { // the pump reads again: queued pings get their pongs
			for {
				if _, _, err := conn.Read(context.Background()); err != nil {
					return
				}
			}
		}()
		got := <-called
		if got.err != nil {
			t.Fatalf("the call failed after %v: %v", time.Since(start), got.err)
		}
		if !strings.Contains(got.res, `"elapsedMilliseconds":90012`) {
			t.Fatalf("result %s", got.res)
		}
		time.Sleep(5 * time.Minute) // pings answered again: the session stays
		if sess.State() != StateConnected {
			t.Fatal("the session was dropped after the long tool")
		}
	})
}

// TestSilentIdleSessionDropped: dead-peer detection still works. An app that owes the host
// nothing and stops answering is dropped after Interval+Timeout of silence.
func TestSilentIdleSessionDropped(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newMemHost(t, Options{})
		start := time.Now()
		conn, stop := h.connect(t, newApp("com.example.app"))
		defer stop()
		writeText(t, conn, sdkOpen)
		sess := h.sessionFor(t, "com.example.app")
		events, unsubscribe := h.Subscribe(16)
		defer unsubscribe()
		for ev := range events { // the app reads nothing from now on
			if ev.Kind == EventDisconnected {
				break
			}
		}
		if sess.State() != StateDisconnected {
			t.Fatal("not disconnected")
		}
		// Silence is noticed at the keep-alive's checks, so a peer is dropped after one to two
		// times Interval+Timeout (bubble time: exact, not a timing threshold).
		limit := 2 * DefaultKeepAliveInterval
		if got := time.Since(start); got < limit || got > 2*limit {
			t.Fatalf("dropped after %v, want between %v and %v", got, limit, 2*limit)
		}
	})
}

// TestCallGivenUpStaysPending: the host gives up on a call (here its caller's 20 s limit, the
// official host's wait) while the .NET SDK keeps running it inside its receive loop,
// answering no ping, for three minutes more. The call still counts as pending for the
// keep-alive, so the session is not dropped; the late answer is dropped (and counted), and
// the session carries on.
func TestCallGivenUpStaysPending(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newMemHost(t, Options{})
		conn, stop := h.connect(t, newApp("com.example.app"))
		defer stop()
		writeText(t, conn, sdkOpen)
		sess := h.sessionFor(t, "com.example.app")
		called := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := sess.Tools().Call(ctx, wire.Call{ToolID: "ui.wait",
				Arguments: []byte(`{"automationId":"checkout.done","condition":"exists","timeoutMilliseconds":60000}`)})
			called <- err
		}()
		dotnetAnswer(t, conn, readRequest(t, conn), wire.TypeCatalog, dotnetIndex)
		call := readRequest(t, conn)
		start := time.Now()
		if err := <-called; wire.CodeOf(err) != wire.CodeTimeout {
			t.Fatalf("the call = %v, want a timeout", err)
		}
		time.Sleep(3*time.Minute - time.Since(start)) // the tool runs on, nothing is read
		if sess.State() != StateConnected {
			t.Fatalf("the session was dropped %v after the host gave up on the call", time.Since(start))
		}
		dotnetAnswer(t, conn, call, wire.TypeResult, dotnetWait)
		go func() {
			for {
				if _, _, err := conn.Read(context.Background()); err != nil {
					return
				}
			}
		}()
		time.Sleep(5 * time.Minute)
		if s := sess.Tools().Stats(); sess.State() != StateConnected || s.LateResponses != 1 || s.UnmatchedResponses != 0 {
			t.Fatalf("after the late answer: state %v, %+v", sess.State(), s)
		}
	})
}
