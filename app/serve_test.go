package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/transport/transporttest"
	"github.com/ansight-go/ansight/wire"
)

// gate is a tool that blocks until released, counting how many run at once.
type gate struct {
	release chan struct{}
	running atomic.Int32
	peak    atomic.Int32
	started atomic.Int32
	sawDone atomic.Int32 // handlers that returned because their context ended
}

func newGate() *gate { return &gate{release: make(chan struct{})} }

func (g *gate) handler(ctx context.Context, c *Call) (any, error) {
	g.started.Add(1)
	n := g.running.Add(1)
	defer g.running.Add(-1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			break
		}
	}
	select {
	case <-g.release:
		return map[string]string{"callId": c.CallID}, nil
	case <-ctx.Done():
		g.sawDone.Add(1)
		return nil, ctx.Err()
	}
}

func registerGate(t testing.TB, a *App, id string, g *gate, exclusive bool) {
	t.Helper()
	d := def(id, "Gate "+id, "test", wire.PolicyRead)
	d.ArgumentsSchema = []byte(`{"type":"object"}`)
	d.ResultSchema = []byte(`{"type":"object","additionalProperties":true}`)
	if err := a.Register(Tool{Definition: d, Handler: g.handler, Exclusive: exclusive}); err != nil {
		t.Fatal(err)
	}
}

// serving runs Serve on one end of a pipe and returns the host's end, the messages
// OnMessage got, and a function that stops Serve and returns its error.
func serving(t *testing.T, a *App) (host transport.Conn, other func() []string, stop func() error) {
	appEnd, hostEnd := transport.Pipe(transport.PipeOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var got []string
	done := make(chan error, 1)
	go func() {
		done <- a.Serve(ctx, appEnd, ServeOptions{OnMessage: func(typ transport.MessageType, data []byte) {
			mu.Lock()
			got = append(got, typ.String()+" "+string(data))
			mu.Unlock()
		}})
	}()
	return hostEnd, func() []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(got)
		}, func() error {
			cancel()
			err := <-done
			appEnd.Close(transport.StatusNormalClosure, "")
			hostEnd.Close(transport.StatusNormalClosure, "")
			return err
		}
}

func send(t *testing.T, c transport.Conn, msg string) {
	t.Helper()
	if err := c.Write(context.Background(), transport.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// readResponses reads n text responses and returns them by replyTo.
func readResponses(t *testing.T, c transport.Conn, n int) map[string]*wire.Envelope {
	t.Helper()
	out := map[string]*wire.Envelope{}
	for len(out) < n {
		typ, data, err := c.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if typ != transport.MessageText {
			continue
		}
		env, err := wire.DecodeEnvelope(data)
		if err != nil {
			t.Fatal(err)
		}
		out[env.ReplyTo] = &env
	}
	return out
}

func TestServeAnswersAndRoutes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	host, other, stop := serving(t, f.app)
	send(t, host, `{"type":"CONTROL_RESP","id":"r1","replyTo":"c1","success":true}`)
	if err := host.Write(context.Background(), transport.MessageBinary, []byte("ASJP....")); err != nil {
		t.Fatal(err)
	}
	// Not a tool request: it goes to OnMessage before the requests after it are read, so
	// by the time they are answered it has been delivered.
	send(t, host, `{"type":"tool.call","id":"c2","capability":"other","payload":{}}`)
	send(t, host, `{"type":"tool.query","id":"q1","sessionId":"s","payload":{"detail":"index"}}`)
	send(t, host, callMsg("c1", `{"toolId":"route.open","arguments":{"route":"x"}}`))
	rs := readResponses(t, host, 2)
	if rs["q1"].Type != wire.TypeCatalog || rs["q1"].SessionID != "s" || rs["c1"].Type != wire.TypeResult {
		t.Fatalf("responses: %+v", rs)
	}
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve returned %v, want context.Canceled", err)
	}
	want := []string{
		`text {"type":"CONTROL_RESP","id":"r1","replyTo":"c1","success":true}`,
		"binary ASJP....",
		`text {"type":"tool.call","id":"c2","capability":"other","payload":{}}`,
	}
	if got := other(); !slices.Equal(got, want) {
		t.Fatalf("OnMessage got\n%q\nwant\n%q", got, want)
	}
}

// TestServeConcurrentAndBounded: requests run concurrently up to MaxConcurrent; the
// reader stops while the bound is reached; responses correlate by replyTo whatever the
// order they finish in.
func TestServeConcurrentAndBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{MaxConcurrent: 3})
		g := newGate()
		registerGate(t, a, "test.gate", g, false)
		host, other, stop := serving(t, a)
		for i := range 5 {
			send(t, host, callMsg("c"+itoa(i), `{"toolId":"test.gate","callId":"k`+itoa(i)+`"}`))
		}
		send(t, host, `{"type":"CONTROL_RESP","id":"r1","replyTo":"x","success":true}`)
		synctest.Wait()
		if got := g.running.Load(); got != 3 {
			t.Fatalf("%d handlers running, want 3 (the bound)", got)
		}
		if got := other(); len(got) != 0 {
			t.Fatalf("Serve read on at the bound: OnMessage got %q", got)
		}
		close(g.release)
		rs := readResponses(t, host, 5)
		synctest.Wait()
		if got := other(); len(got) != 1 {
			t.Fatalf("OnMessage got %q after the requests were answered, want the control message", got)
		}
		for i := range 5 {
			env := rs["c"+itoa(i)]
			if env == nil || env.Type != wire.TypeResult || !strings.Contains(string(env.Payload), `"callId":"k`+itoa(i)+`"`) {
				t.Fatalf("response to c%d: %+v", i, env)
			}
		}
		if p := g.peak.Load(); p != 3 {
			t.Fatalf("peak concurrency %d, want 3", p)
		}
		if err := stop(); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	})
}

// TestServeExclusive: exclusive tools never overlap each other; other tools still run.
func TestServeExclusive(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{})
		ex1, ex2, free := newGate(), newGate(), newGate()
		registerGate(t, a, "test.ex1", ex1, true)
		registerGate(t, a, "test.ex2", ex2, true)
		registerGate(t, a, "test.free", free, false)
		host, _, stop := serving(t, a)
		send(t, host, callMsg("a", `{"toolId":"test.ex1"}`))
		send(t, host, callMsg("b", `{"toolId":"test.ex2"}`))
		send(t, host, callMsg("c", `{"toolId":"test.ex1"}`))
		send(t, host, callMsg("d", `{"toolId":"test.free"}`))
		synctest.Wait()
		if n := ex1.running.Load() + ex2.running.Load(); n != 1 {
			t.Fatalf("%d exclusive tools running, want 1", n)
		}
		if free.running.Load() != 1 {
			t.Fatal("the non-exclusive tool does not run beside the exclusive one")
		}
		close(ex1.release)
		close(ex2.release)
		close(free.release)
		readResponses(t, host, 4)
		if ex1.peak.Load() != 1 || ex2.peak.Load() != 1 {
			t.Fatalf("exclusive peaks %d/%d", ex1.peak.Load(), ex2.peak.Load())
		}
		if err := stop(); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	})
}

// TestServeCancelsInFlight: when ctx ends, handlers in flight see their context end and
// Serve returns only after they have returned.
func TestServeCancelsInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{})
		g := newGate()
		registerGate(t, a, "test.gate", g, false)
		registerGate(t, a, "test.ex", g, true)
		host, _, stop := serving(t, a)
		send(t, host, callMsg("c1", `{"toolId":"test.gate"}`))
		send(t, host, callMsg("c2", `{"toolId":"test.ex"}`))
		send(t, host, callMsg("c3", `{"toolId":"test.ex"}`)) // waits for the exclusive slot
		synctest.Wait()
		if err := stop(); !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve: %v", err)
		}
		if g.running.Load() != 0 || g.sawDone.Load() != 2 {
			t.Fatalf("after Serve returned: %d running, %d cancelled (want 0, 2)", g.running.Load(), g.sawDone.Load())
		}
	})
}

// TestServeConnectionLost: a failing connection ends Serve with the read error and
// cancels the requests in flight.
func TestServeConnectionLost(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{})
		g := newGate()
		registerGate(t, a, "test.gate", g, false)
		appEnd, hostEnd := transport.Pipe(transport.PipeOptions{})
		done := make(chan error, 1)
		go func() { done <- a.Serve(context.Background(), appEnd, ServeOptions{}) }()
		send(t, hostEnd, callMsg("c1", `{"toolId":"test.gate"}`))
		synctest.Wait()
		hostEnd.Close(transport.StatusGoingAway, "bye")
		err := <-done
		var ce *transport.CloseError
		if !errors.As(err, &ce) && !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Serve returned %v, want the close", err)
		}
		if g.sawDone.Load() != 1 {
			t.Fatal("the in-flight handler was not cancelled")
		}
		appEnd.Close(transport.StatusNormalClosure, "")
	})
}

// TestServeTransfersAfterResponse: over a real pipe the frames follow the response that
// announces them.
func TestServeTransfersAfterResponse(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	host, _, stop := serving(t, f.app)
	send(t, host, callMsg("shot", `{"toolId":"ui.get_screenshot"}`))
	var kinds []string
	for len(kinds) < 4 {
		typ, data, err := host.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if typ == transport.MessageText {
			kinds = append(kinds, "text")
			continue
		}
		fr, err := wire.ParseFrame(data)
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, fr.Type.String())
	}
	if want := []string{"text", "chunk", "chunk", "complete"}; !slices.Equal(kinds, want) {
		t.Fatalf("got %v, want %v", kinds, want)
	}
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// TestRegisterWhileServing: registration and guard changes race with queries and calls
// without harm (run with -race); each query sees a consistent catalog.
func TestRegisterWhileServing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	host, _, stop := serving(t, f.app)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 50 {
			d := def("extra.t"+itoa(i), "Extra", "extra", wire.PolicyRead)
			if err := Register(f.app, d, func(ctx context.Context, c *Call, in struct{}) (struct{}, error) { return struct{}{}, nil }); err != nil {
				t.Error(err)
			}
			if i%10 == 0 {
				_ = f.app.SetGuard(catalog.GuardFullAccess)
			}
		}
	})
	for i := range 20 {
		send(t, host, `{"type":"tool.query","id":"q`+itoa(i)+`","payload":{"detail":"index"}}`)
		send(t, host, callMsg("c"+itoa(i), `{"toolId":"extra.t0"}`))
	}
	rs := readResponses(t, host, 40)
	wg.Wait()
	for id, env := range rs {
		if strings.HasPrefix(id, "q") && env.Type != wire.TypeCatalog {
			t.Fatalf("%s: %s", id, env.Payload)
		}
	}
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// TestServeContextEndAbortsConnection: the end of ctx ends a read in progress by aborting
// the connection (the peer sees an abnormal closure), cancels the requests in flight, and
// Serve returns ctx's error.
func TestServeContextEndAbortsConnection(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{})
		g := newGate()
		registerGate(t, a, "test.gate", g, false)
		appEnd, hostEnd := transport.Pipe(transport.PipeOptions{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Serve(ctx, appEnd, ServeOptions{}) }()
		send(t, hostEnd, callMsg("c1", `{"toolId":"test.gate"}`))
		synctest.Wait() // the handler runs, Serve is reading again
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve returned %v, want context.Canceled", err)
		}
		if g.sawDone.Load() != 1 {
			t.Fatal("the in-flight handler was not cancelled")
		}
		if _, _, err := hostEnd.Read(context.Background()); transport.CloseStatus(err) != transport.StatusAbnormalClosure {
			t.Fatalf("the host's end read %v, want an abnormal closure", err)
		}
		hostEnd.Close(transport.StatusNormalClosure, "")
	})
}

// TestServeReadBufferReuse: Serve reads every request into a buffer its goroutine reuses,
// so what a handler keeps of its call — ids, arguments — and what OnMessage keeps must be
// copies. A real WebSocket connection (which reads into the buffer; a pipe hands out
// copies) carries requests of growing and shrinking sizes; everything kept still reads as
// sent once the buffer has been written over many times.
func TestServeReadBufferReuse(t *testing.T) {
	t.Parallel()
	a := New(Options{})
	type kept struct {
		toolID, callID, requestID, sessionID string
		args                                 []byte
	}
	var mu sync.Mutex
	var calls []kept
	d := def("keep.call", "Keep", "test", wire.PolicyRead)
	d.ArgumentsSchema = []byte(`{"type":"object","additionalProperties":true}`)
	d.ResultSchema = []byte(`{"type":"object"}`)
	if err := a.Register(Tool{Definition: d, Handler: func(ctx context.Context, c *Call) (any, error) {
		mu.Lock()
		calls = append(calls, kept{c.ToolID, c.CallID, c.RequestID, c.SessionID, c.Arguments})
		mu.Unlock()
		return map[string]int{}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	appEnd, hostEnd := transporttest.NewLoopbackPair(t, transporttest.Options{})
	var other [][]byte
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- a.Serve(ctx, appEnd, ServeOptions{OnMessage: func(_ transport.MessageType, data []byte) {
			mu.Lock()
			other = append(other, data)
			mu.Unlock()
		}})
	}()
	defer func() {
		cancel()
		<-done
	}()
	pad := func(i int) string { return strings.Repeat(string(rune('a'+i%26)), (i*7919)%3000) }
	for i := range 40 {
		if i%10 == 5 {
			send(t, hostEnd, `{"type":"telemetry.other","id":"t`+pad(i)+`"}`)
		}
		id := fmt.Sprintf("req-%d-%s", i, pad(i))
		send(t, hostEnd, `{"type":"tool.call","id":"`+id+`","sessionId":"s-`+pad(i+1)+`","capability":"tool.exec","payload":{"toolId":"keep.call","callId":"c-`+pad(i+2)+`","arguments":{"p":"`+pad(i+3)+`"}}}`)
		if got := readResponses(t, hostEnd, 1); got[id] == nil || got[id].Type != wire.TypeResult {
			t.Fatalf("no result for request %d: %s", i, got[id].Payload)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 40 || len(other) != 4 {
		t.Fatalf("%d calls and %d other messages kept", len(calls), len(other))
	}
	for i, k := range calls {
		want := kept{"keep.call", "c-" + pad(i+2), fmt.Sprintf("req-%d-%s", i, pad(i)), "s-" + pad(i+1), []byte(`{"p":"` + pad(i+3) + `"}`)}
		if k.toolID != want.toolID || k.callID != want.callID || k.requestID != want.requestID || k.sessionID != want.sessionID || string(k.args) != string(want.args) {
			t.Fatalf("call %d kept %.60q/%.60q/%.60q/%.60q/%.60q", i, k.toolID, k.callID, k.requestID, k.sessionID, k.args)
		}
	}
	for j, m := range other {
		if want := `{"type":"telemetry.other","id":"t` + pad(j*10+5) + `"}`; string(m) != want {
			t.Fatalf("other message %d kept as %.60q", j, m)
		}
	}
}
