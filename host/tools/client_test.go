package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

var readTool = tool("t.read", wire.PolicyRead, "def-read-1")

func TestRequestEnvelope(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, readTool)
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	ids := 0
	hs := newHarness(t, Options{SessionID: "demo-001", Clock: func() time.Time { return clock },
		NewRequestID: func() string { ids++; return fmt.Sprintf("req-%d", ids) }}, app.handler())
	big := `{"n":1,"pad":"` + strings.Repeat("x", 40000) + `"}`
	if _, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read", Arguments: jsontext.Value(big)}); err != nil {
		t.Fatal(err)
	}
	reqs := hs.reqs()
	if len(reqs) != 2 {
		t.Fatalf("want a query and a call, got %d requests", len(reqs))
	}
	for i, r := range reqs {
		if r.ID != fmt.Sprintf("req-%d", i+1) || r.SessionID != "demo-001" || r.ReplyTo != "" ||
			r.Capability != wire.CapabilityToolExec || !r.SentAt.Equal(clock) || r.SentAt.Location() != time.UTC {
			t.Errorf("request %d: %+v", i, r)
		}
	}
	if reqs[1].Type != wire.TypeCall || bytes.Contains(reqs[1].Payload, []byte("$ansightEncoding")) {
		t.Errorf("requests are never compressed: %.80s", reqs[1].Payload)
	}
	if !bytes.Contains(hs.raw[1], []byte(`"sentAt":"2026-01-02T02:04:05Z"`)) {
		t.Errorf("sentAt not written in UTC with Z: %.200s", hs.raw[1])
	}
}

func TestCorrelationOutOfOrder(t *testing.T) {
	t.Parallel()
	const n = 8
	app := newFakeApp(t, readTool)
	var held []*wire.Envelope
	app.onCall = func(req *wire.Envelope, c wire.Call) []msg {
		// Hold the calls, then answer all of them in reverse order.
		held = append(held, req)
		if len(held) < n {
			return nil
		}
		var out []msg
		for i := len(held) - 1; i >= 0; i-- {
			var c wire.Call
			if err := wire.Unmarshal(held[i].Payload, &c); err != nil {
				t.Error(err)
			}
			out = append(out, reply(t, held[i], wire.TypeResult, wire.Result{ToolID: c.ToolID, Success: true, Result: c.Arguments}))
		}
		return out
	}
	hs := newHarness(t, Options{}, app.handler())
	if _, err := hs.c.Catalog(t.Context()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			args := fmt.Sprintf(`{"n":%d}`, i)
			res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read", Arguments: jsontext.Value(args)})
			if err != nil {
				t.Error(err)
				return
			}
			if string(res.Payload.Result) != args {
				t.Errorf("call %d got the answer %s", i, res.Payload.Result)
			}
		})
	}
	wg.Wait()
	if s := hs.c.Stats(); s.UnmatchedResponses != 0 || s.MalformedResponses != 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestRequestsWaitForOpen(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		app := newFakeApp(t, readTool)
		hs := startHarness(t, Options{}, app.handler())
		done := make(chan error, 1)
		go func() {
			_, err := hs.c.Query(t.Context(), wire.Query{})
			done <- err
		}()
		time.Sleep(time.Hour) // no timeout runs before Open
		synctest.Wait()
		if n := len(hs.reqs()); n != 0 {
			t.Fatalf("%d requests sent before Open", n)
		}
		hs.c.Open()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := len(hs.reqs()); n != 1 {
			t.Fatalf("%d requests after Open", n)
		}
	})
}

func TestTimeoutAndLateResponse(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hs := newHarness(t, Options{Timeout: 5 * time.Second}, func(req *wire.Envelope) []msg {
			return nil // never answers
		})
		start := time.Now()
		_, err := hs.c.Query(t.Context(), wire.Query{})
		late := hs.reqs()[0]
		te, ok := errorsAs[*TransportError](err)
		if !ok || !errors.Is(err, ErrTimeout) || te.Op != wire.TypeQuery || te.RequestID != late.ID {
			t.Fatalf("err = %v", err)
		}
		if wire.CodeOf(err) != wire.CodeTimeout {
			t.Errorf("a timeout has the code timeout, not %q", wire.CodeOf(err))
		}
		if want := "a catalog query did not answer within 5s (the host's default); raise the limit with timeoutMs (up to 1h)"; err.Error() != want {
			t.Errorf("message %q, want %q", err, want)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("timed out after %v", d)
		}
		// Given up on, the request still keeps the session busy (the app may be running
		// it) until its late answer comes, which is dropped.
		if !hs.c.Busy() {
			t.Error("a request given up on does not keep the session busy")
		}
		hs.send(reply(t, late, wire.TypeCatalog, `{"schema":"ansight.tool-catalog.v3","revision":"r","tools":[],"count":0}`))
		synctest.Wait()
		if s := hs.c.Stats(); s.LateResponses != 1 || s.UnmatchedResponses != 0 {
			t.Errorf("late response not counted: %+v", s)
		}
		if hs.c.Busy() {
			t.Error("busy after the late answer")
		}
	})
}

// One sweep ends every wait at its own deadline: requests sent at different times, some
// answered, time out exactly Options.Timeout after each was sent.
func TestTimeoutsStaggered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hs := newHarness(t, Options{Timeout: 5 * time.Second}, func(req *wire.Envelope) []msg {
			var q wire.Query
			if wire.Unmarshal(req.Payload, &q) == nil && q.Detail == wire.DetailIndex {
				return []msg{reply(t, req, wire.TypeCatalog, `{"schema":"ansight.tool-catalog.v3","revision":"r","tools":[],"count":0}`)}
			}
			return nil // never answers the others
		})
		start := time.Now()
		var wg sync.WaitGroup
		for i, at := range []time.Duration{0, 2 * time.Second, 2 * time.Second, 4500 * time.Millisecond} {
			wg.Go(func() {
				time.Sleep(at)
				if _, err := hs.c.Query(t.Context(), wire.Query{Detail: wire.DetailIndex}); err != nil { // answered
					t.Errorf("answered query: %v", err)
				}
				_, err := hs.c.Query(t.Context(), wire.Query{})
				if !errors.Is(err, ErrTimeout) {
					t.Errorf("query %d: %v", i, err)
				}
				if d := time.Since(start); d != at+5*time.Second {
					t.Errorf("query %d sent at %v timed out at %v", i, at, d)
				}
			})
		}
		wg.Wait()
	})
}

// A request whose deadline comes before the armed sweep's re-arms it.
func TestTimeoutEarlierDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hs := newHarness(t, Options{Timeout: 10 * time.Second}, func(*wire.Envelope) []msg { return nil })
		start := time.Now()
		ended := make(chan time.Duration, 2)
		query := func() {
			_, err := hs.c.Query(t.Context(), wire.Query{})
			if !errors.Is(err, ErrTimeout) {
				t.Errorf("err = %v", err)
			}
			ended <- time.Since(start)
		}
		go query() // waits 10 s
		synctest.Wait()
		hs.c.opts.Timeout = 2 * time.Second // as a request with a shorter wait would
		go query()
		if first, second := <-ended, <-ended; first != 2*time.Second || second != 10*time.Second {
			t.Errorf("timed out after %v and %v, want 2s and 10s", first, second)
		}
	})
}

func TestContextCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hs := newHarness(t, Options{}, func(*wire.Envelope) []msg { return nil })
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			time.Sleep(time.Second)
			cancel()
		}()
		_, err := hs.c.Query(ctx, wire.Query{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if _, ok := errorsAs[*TransportError](err); !ok {
			t.Fatalf("want a *TransportError, got %T", err)
		}
	})
}

func TestCloseFailsPendingAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hs := newHarness(t, Options{}, func(*wire.Envelope) []msg { return nil })
		const n = 5
		errs := make(chan error, n)
		for range n {
			go func() {
				_, err := hs.c.Query(t.Context(), wire.Query{})
				errs <- err
			}()
		}
		synctest.Wait()
		start := time.Now()
		cause := errors.New("peer vanished")
		hs.c.Close(cause)
		for range n {
			err := <-errs
			if !errors.Is(err, ErrSessionClosed) || !errors.Is(err, cause) {
				t.Errorf("err = %v", err)
			}
			if _, ok := errorsAs[*TransportError](err); !ok {
				t.Errorf("want *TransportError, got %T", err)
			}
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Close took %v of fake time", d)
		}
		_, err := hs.c.Query(t.Context(), wire.Query{})
		if !errors.Is(err, ErrSessionClosed) {
			t.Errorf("request after Close: %v", err)
		}
		hs.c.Close(io.EOF) // idempotent
	})
}

func TestConnectionDropFailsPending(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hs := newHarness(t, Options{}, func(*wire.Envelope) []msg { return nil })
		errs := make(chan error, 1)
		go func() {
			_, err := hs.c.Query(t.Context(), wire.Query{})
			errs <- err
		}()
		synctest.Wait()
		hs.app.Close(transport.StatusGoingAway, "bye")
		err := <-errs
		if !errors.Is(err, ErrSessionClosed) || transport.CloseStatus(err) != transport.StatusGoingAway {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestCloseBeforeOpen(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hs := startHarness(t, Options{}, func(*wire.Envelope) []msg { return nil })
		errs := make(chan error, 1)
		go func() {
			_, err := hs.c.Query(t.Context(), wire.Query{})
			errs <- err
		}()
		synctest.Wait()
		hs.c.Close(nil)
		if err := <-errs; !errors.Is(err, ErrSessionClosed) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestDuplicateAndUnknownResponses(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, readTool)
	hs := newHarness(t, Options{}, nil)
	var seen *wire.Envelope
	hs.setHandler(func(req *wire.Envelope) []msg {
		if req.Type == wire.TypeCall {
			seen = req
			ok := reply(t, req, wire.TypeResult, wire.Result{ToolID: "t.read", Success: true})
			stranger := *req
			stranger.ID = "never-sent"
			return []msg{
				ok, ok, // duplicate
				reply(t, &stranger, wire.TypeResult, wire.Result{ToolID: "t.read", Success: true}),
				text(`{"type":"tool.result","id":"x","replyTo":null,"sessionId":null,"payload":{"toolId":"a","success":true}}`),
				text(`{"type":"tool.result","id":"x","replyTo":"` + req.ID + `","capability":"other.cap","payload":{}}`),
				text(`{"type":"CONTROL_RESP","id":"c1","replyTo":"c0","action":"session.open","success":true}`),
				text(`not json at all`),
				{transport.MessageBinary, []byte("ASJP....")},
			}
		}
		return app.handler()(req)
	})
	if _, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"}); err != nil {
		t.Fatal(err)
	}
	// A final round trip orders the check after every message above was handled.
	if _, err := hs.c.Query(t.Context(), wire.Query{}); err != nil {
		t.Fatal(err)
	}
	if seen == nil {
		t.Fatal("no call")
	}
	if s := hs.c.Stats(); s.UnmatchedResponses != 3 || s.MalformedResponses != 0 {
		t.Errorf("stats %+v, want 3 unmatched", s)
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.unclaimed != 4 {
		t.Errorf("%d messages left to the host, want 4 (other capability, control, not JSON, ASJP)", hs.unclaimed)
	}
}

func TestMalformedResponseFailsRequest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		reply   func(req *wire.Envelope) msg
		op      string
		wantErr error
	}{
		{"duplicate envelope key", func(req *wire.Envelope) msg {
			return text(`{"type":"tool.catalog","type":"tool.catalog","id":"a","replyTo":"` + req.ID + `","payload":{}}`)
		}, wire.TypeQuery, ErrProtocol},
		{"case variant envelope key", func(req *wire.Envelope) msg {
			return text(`{"type":"tool.catalog","id":"a","replyTo":"` + req.ID + `","ReplyTo":"x","payload":{}}`)
		}, wire.TypeQuery, ErrProtocol},
		{"wrong response type", func(req *wire.Envelope) msg {
			return reply(t, req, wire.TypeResult, `{"toolId":"a","success":true}`)
		}, wire.TypeQuery, ErrProtocol},
		{"bad catalog payload", func(req *wire.Envelope) msg {
			return reply(t, req, wire.TypeCatalog, `{"schema":"s","revision":1}`)
		}, wire.TypeQuery, ErrProtocol},
		{"policy not a string", func(req *wire.Envelope) msg {
			return reply(t, req, wire.TypeCatalog, `{"schema":"s","revision":"r","tools":[{"id":"a","name":"a","description":"","category":"c","policy":2}]}`)
		}, wire.TypeQuery, ErrProtocol},
		{"unknown policy and a bad entry", func(req *wire.Envelope) msg {
			return reply(t, req, wire.TypeCatalog, `{"schema":"s","revision":"r","tools":[{"id":"a","name":"a","description":"","category":"c","policy":"admin"},{"id":7}]}`)
		}, wire.TypeQuery, ErrProtocol},
		{"missing payload", func(req *wire.Envelope) msg {
			return text(`{"type":"tool.catalog","id":"a","replyTo":"` + req.ID + `"}`)
		}, wire.TypeQuery, ErrProtocol},
		{"error without code", func(req *wire.Envelope) msg {
			return reply(t, req, wire.TypeError, `{"message":"?"}`)
		}, wire.TypeQuery, ErrProtocol},
		{"unknown encoding", func(req *wire.Envelope) msg {
			return reply(t, req, wire.TypeCatalog, `{"$ansightEncoding":"zstd","data":""}`)
		}, wire.TypeQuery, ErrProtocol},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hs := newHarness(t, Options{}, func(req *wire.Envelope) []msg { return []msg{tc.reply(req)} })
			_, err := hs.c.Query(t.Context(), wire.Query{})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v", err)
			}
			if _, ok := errorsAs[*TransportError](err); !ok {
				t.Fatalf("want *TransportError, got %T", err)
			}
			if s := hs.c.Stats(); s.MalformedResponses != 1 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

func TestToolErrorIsWireError(t *testing.T) {
	t.Parallel()
	hs := newHarness(t, Options{}, func(req *wire.Envelope) []msg {
		// .NET style: null details, +00:00 offset, 7-digit fraction; no message at all.
		return []msg{text(`{"type":"tool.error","id":"` + req.ID + `.response","replyTo":"` + req.ID +
			`","sessionId":null,"sentAt":"2026-03-20T10:00:00.1234567+00:00","capability":"tool.exec",` +
			`"payload":{"code":"tool_discovery_disabled","retryable":false,"details":null}}`)}
	})
	_, err := hs.c.Query(t.Context(), wire.Query{})
	we, ok := errorsAs[*wire.Error](err)
	if !ok || we.Code != wire.CodeDiscoveryDisabled {
		t.Fatalf("err = %v", err)
	}
	if _, ok := errorsAs[*TransportError](err); ok {
		t.Error("a tool.error must not be a transport error")
	}
	if _, ok := errorsAs[*RefusalError](err); ok {
		t.Error("a tool.error must not be a refusal")
	}
}

func TestOtherSDKVariants(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, readTool)
	hs := newHarness(t, Options{}, nil)
	hs.setHandler(func(req *wire.Envelope) []msg {
		if req.Type != wire.TypeCall {
			return app.handler()(req)
		}
		// .NET: every field present, nulls, +00:00; Swift: Z without fraction, no message.
		return []msg{text(`{"type":"tool.result","id":"` + req.ID + `.response","replyTo":"` + req.ID +
			`","sessionId":null,"sentAt":"2026-03-20T10:00:00+00:00","capability":"tool.exec",` +
			`"payload":{"toolId":"t.read","success":true,"message":null,"result":{"ok":true},"evidence":null}}`)}
	})
	res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Payload.Success || string(res.Payload.Result) != `{"ok":true}` || res.Payload.Message != "" {
		t.Errorf("payload %+v", res.Payload)
	}
}

func TestDuplicateRequestIDRefused(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hs := newHarness(t, Options{NewRequestID: func() string { return "same" }},
			func(*wire.Envelope) []msg { return nil })
		go hs.c.Query(t.Context(), wire.Query{}) //nolint:errcheck // fails at Close
		synctest.Wait()
		_, err := hs.c.Query(t.Context(), wire.Query{})
		if err == nil || !strings.Contains(err.Error(), "already in flight") {
			t.Fatalf("err = %v", err)
		}
		hs.c.Close(nil)
	})
}

func TestMaxPendingWaitsForSlot(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var held []*wire.Envelope
		var mu sync.Mutex
		hs := newHarness(t, Options{MaxPending: 2}, func(req *wire.Envelope) []msg {
			mu.Lock()
			defer mu.Unlock()
			held = append(held, req)
			return nil
		})
		errs := make(chan error, 3)
		for range 3 {
			go func() {
				_, err := hs.c.Query(t.Context(), wire.Query{})
				errs <- err
			}()
		}
		synctest.Wait()
		mu.Lock()
		if len(held) != 2 {
			t.Errorf("%d requests in flight, limit 2", len(held))
		}
		first := held[0]
		mu.Unlock()
		hs.send(reply(t, first, wire.TypeCatalog, `{"schema":"s","revision":"r","tools":[]}`))
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		mu.Lock()
		if len(held) != 3 {
			t.Errorf("the third request did not take the freed slot (%d sent)", len(held))
		}
		mu.Unlock()
		hs.c.Close(nil)
		<-errs
		<-errs
	})
}

// failConn fails every write.
type failConn struct{ nopConn }

var errWrite = errors.New("socket gone")

func (failConn) Write(context.Context, transport.MessageType, []byte) error { return errWrite }

func TestWriteFailure(t *testing.T) {
	t.Parallel()
	c := NewClient(failConn{}, Options{NewRequestID: func() string { return "r1" }})
	c.Open()
	_, err := c.Query(t.Context(), wire.Query{})
	te, ok := errorsAs[*TransportError](err)
	if !ok || !errors.Is(err, errWrite) || te.RequestID != "r1" {
		t.Fatalf("err = %v", err)
	}
	if got := err.Error(); got != "could not send a catalog query to the app: socket gone" {
		t.Errorf("message %q", got)
	}
	c.Close(nil)
	_, err = c.Query(t.Context(), wire.Query{})
	if got := err.Error(); got != "the session closed during a catalog query" {
		t.Errorf("message %q", got)
	}
	if _, err := c.Call(t.Context(), wire.Call{ToolID: "x"}); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("call after close: %v", err)
	}
}

// The default request ids are 32 lower-case hex digits, distinct within a client and
// between clients.
func TestDefaultRequestIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 3 {
		next := Options{}.withDefaults().NewRequestID
		for range 1000 {
			id := next()
			if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" || seen[id] {
				t.Fatalf("id %q (seen %t)", id, seen[id])
			}
			seen[id] = true
		}
	}
	// Callers share a client: ids handed out concurrently, across batches, stay distinct.
	next := Options{}.withDefaults().NewRequestID
	ids := make([][]string, 4)
	var wg sync.WaitGroup
	for g := range ids {
		wg.Go(func() {
			for range 300 {
				ids[g] = append(ids[g], next())
			}
		})
	}
	wg.Wait()
	for _, list := range ids {
		for _, id := range list {
			if seen[id] {
				t.Fatalf("id %q handed out twice", id)
			}
			seen[id] = true
		}
	}
}

// TestGivenUpBounded: a call the host gave up on (its limit passed, or its caller left)
// keeps the session busy for at most LateAnswerWait; an answer after that is an unmatched
// response, not a late one.
func TestGivenUpBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hs := newHarness(t, Options{Timeout: 5 * time.Second}, func(req *wire.Envelope) []msg { return nil })
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := hs.c.Query(ctx, wire.Query{})
			done <- err
		}()
		synctest.Wait()
		cancel() // the caller leaves before the limit
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		start := time.Now()
		for hs.c.Busy() {
			time.Sleep(time.Second)
		}
		if d := time.Since(start); d != LateAnswerWait {
			t.Errorf("busy for %v after the caller left, want %v", d, LateAnswerWait)
		}
		hs.send(reply(t, hs.reqs()[0], wire.TypeCatalog, `{"schema":"ansight.tool-catalog.v3","revision":"r","tools":[],"count":0}`))
		synctest.Wait()
		if s := hs.c.Stats(); s.UnmatchedResponses != 1 || s.LateResponses != 0 {
			t.Errorf("an answer after LateAnswerWait: %+v", s)
		}
	})
}
