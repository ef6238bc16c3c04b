package tools

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// deadlineTools: ui.wait, a tool declaring how long it takes, one declaring too long, and
// a plain one.
func deadlineTools() []wire.ToolEntry {
	wait := tool("ui.wait", wire.PolicyRead, "w1")
	wait.ArgumentsSchema = jsontext.Value(`{"type":"object"}`)
	export := tool("data.export", wire.PolicyRead, "e1")
	export.Keywords = "export slow hint:duration=90"
	forever := tool("data.forever", wire.PolicyRead, "f1")
	forever.Keywords = "hint:duration=86400"
	return []wire.ToolEntry{wait, export, forever, tool("notes.list", wire.PolicyRead, "n1")}
}

// TestCallLimit: the limit of each kind of call, derived from what it asks for, or the
// caller's.
func TestCallLimit(t *testing.T) {
	t.Parallel()
	app := newFakeApp(t, deadlineTools()...)
	hs := newHarness(t, Options{}, app.handler())
	if _, err := hs.c.Catalog(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor := func(ms string) wire.Call {
		return wire.Call{ToolID: "ui.wait", Arguments: jsontext.Value(`{"condition":"exists","timeoutMilliseconds":` + ms + `}`)}
	}
	for _, tc := range []struct {
		name  string
		calls []wire.Call
		want  Limit
	}{
		{"plain", []wire.Call{{ToolID: "notes.list"}}, Limit{Timeout: DefaultTimeout}},
		{"ui.wait without timeout", []wire.Call{{ToolID: "ui.wait", Arguments: jsontext.Value(`{"condition":"exists"}`)}}, Limit{Timeout: DefaultTimeout}},
		{"ui.wait under the default", []wire.Call{waitFor("10000")}, Limit{Timeout: DefaultTimeout}},
		{"ui.wait 25 s", []wire.Call{waitFor("25000")}, Limit{Timeout: 30 * time.Second, Basis: BasisDerived,
			Reason: "ui.wait's timeoutMilliseconds of 25s plus 5s"}},
		{"ui.wait clamped", []wire.Call{waitFor("900000")}, Limit{Timeout: 65 * time.Second, Basis: BasisDerived,
			Reason: "ui.wait's timeoutMilliseconds of 1m plus 5s"}},
		{"ui.wait null", []wire.Call{{ToolID: "ui.wait", Arguments: jsontext.Value(`{"timeoutMilliseconds":null}`)}}, Limit{Timeout: DefaultTimeout}},
		{"ui.wait not an object", []wire.Call{{ToolID: "ui.wait", Arguments: jsontext.Value(`"x"`)}}, Limit{Timeout: DefaultTimeout}},
		{"hint:duration", []wire.Call{{ToolID: "data.export"}}, Limit{Timeout: 95 * time.Second, Basis: BasisDerived,
			Reason: "data.export's hint:duration of 1m30s plus 5s"}},
		{"hint:duration bounded", []wire.Call{{ToolID: "data.forever"}}, Limit{Timeout: MaxDerivedTimeout, Basis: BasisDerived,
			Reason: "data.forever's hint:duration of 1h, at most 10m"}},
		{"evidence delay", []wire.Call{{ToolID: "data.export", After: &wire.After{DelayMilliseconds: 2000}}}, Limit{Timeout: 97 * time.Second,
			Basis: BasisDerived, Reason: "data.export's hint:duration of 1m30s and its evidence delay of 2s plus 5s"}},
		{"batch adds up", []wire.Call{waitFor("15000"), {ToolID: "notes.list"}, waitFor("15000")}, Limit{Timeout: 35 * time.Second,
			Basis: BasisDerived, Reason: "ui.wait's timeoutMilliseconds of 15s and ui.wait's timeoutMilliseconds of 15s plus 5s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := hs.c.BatchLimit(t.Context(), tc.calls); got != tc.want {
				t.Errorf("limit %+v, want %+v", got, tc.want)
			}
		})
	}
	t.Run("caller", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		if got := hs.c.CallLimit(ctx, waitFor("25000")); got != (Limit{Timeout: 3 * time.Second, Basis: BasisCaller}) {
			t.Errorf("limit %+v", got)
		}
		ctx, cancel = WithTimeout(t.Context(), 5*time.Hour)
		defer cancel()
		if got := hs.c.CallLimit(ctx, wire.Call{ToolID: "notes.list"}); got != (Limit{Timeout: MaxTimeout, Basis: BasisCaller}) {
			t.Errorf("limit %+v, want the bound", got)
		}
	})
}

// answerAfter makes app answer every call after d, from a goroutine of its own (the fake
// app's loop stays free to read).
func answerAfter(hs **harness, app *fakeApp, d time.Duration) {
	app.onCall = func(req *wire.Envelope, c wire.Call) []msg {
		go func() {
			time.Sleep(d)
			(*hs).send(reply((*hs).t, req, wire.TypeResult, wire.Result{ToolID: c.ToolID, Success: true, Result: jsontext.Value(`{}`)}))
		}()
		return nil
	}
}

// TestLongCallsJustWork: a call that asks for more than the host's default gets it, and
// one that does not is cut at the default with an error naming the tool, the limit and the
// option that raises it. The host's default is lowered to 2 s: the same holds for a 25 s
// ui.wait against the real 20 s.
func TestLongCallsJustWork(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		call    wire.Call
		caller  time.Duration // WithTimeout, when not zero
		answer  time.Duration // the app's answer comes this late
		timeout time.Duration // when not zero, the call must fail at this time
		message string
	}{
		{name: "ui.wait asking longer", call: wire.Call{ToolID: "ui.wait", Arguments: jsontext.Value(`{"timeoutMilliseconds":4000}`)},
			answer: 4 * time.Second},
		{name: "ui.wait not asking", call: wire.Call{ToolID: "ui.wait"}, answer: 4 * time.Second, timeout: 2 * time.Second,
			message: "ui.wait did not answer within 2s (the host's default); raise the limit with timeoutMs (up to 1h)"},
		{name: "ui.wait running over", call: wire.Call{ToolID: "ui.wait", Arguments: jsontext.Value(`{"timeoutMilliseconds":4000}`)},
			answer: time.Minute, timeout: 9 * time.Second,
			message: "ui.wait did not answer within 9s (ui.wait's timeoutMilliseconds of 4s plus 5s); raise the limit with timeoutMs (up to 1h)"},
		{name: "hint:duration", call: wire.Call{ToolID: "data.export"}, answer: 80 * time.Second},
		{name: "caller shorter", call: wire.Call{ToolID: "data.export"}, caller: time.Second, answer: 80 * time.Second, timeout: time.Second,
			message: "data.export did not answer within 1s (the caller's limit); raise the limit with timeoutMs (up to 1h)"},
		{name: "caller longer", call: wire.Call{ToolID: "notes.list"}, caller: 40 * time.Second, answer: 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				app := newFakeApp(t, deadlineTools()...)
				hs := newHarness(t, Options{Timeout: 2 * time.Second}, app.handler())
				if _, err := hs.c.Catalog(t.Context()); err != nil {
					t.Fatal(err)
				}
				answerAfter(&hs, app, tc.answer)
				ctx := t.Context()
				if tc.caller > 0 {
					var cancel context.CancelFunc
					ctx, cancel = WithTimeout(ctx, tc.caller)
					defer cancel()
				}
				start := time.Now()
				_, err := hs.c.Call(ctx, tc.call)
				if tc.timeout == 0 {
					if err != nil {
						t.Fatal(err)
					}
					if d := time.Since(start); d != tc.answer {
						t.Errorf("answered after %v, want %v", d, tc.answer)
					}
					return
				}
				te, ok := errorsAs[*TimeoutError](err)
				if !ok || !errors.Is(err, ErrTimeout) || wire.CodeOf(err) != wire.CodeTimeout {
					t.Fatalf("err = %v, want a timeout", err)
				}
				if d := time.Since(start); d != tc.timeout || te.Limit.Timeout != tc.timeout || te.Subject != tc.call.ToolID {
					t.Errorf("timed out after %v with %+v, want %v", d, te, tc.timeout)
				}
				if err.Error() != tc.message {
					t.Errorf("message\n%q, want\n%q", err, tc.message)
				}
				time.Sleep(tc.answer) // the late answer is dropped
				synctest.Wait()
			})
		})
	}
}

// TestBatchTimeoutNamesItsCalls: a batch's limit adds up its calls' asks, and its error
// names them.
func TestBatchTimeoutNamesItsCalls(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		app := newFakeApp(t, deadlineTools()...)
		app.onBatch = func(*wire.Envelope, wire.Batch) []msg { return nil }
		hs := newHarness(t, Options{Timeout: 2 * time.Second}, app.handler())
		calls := []wire.Call{{ToolID: "ui.wait", Arguments: jsontext.Value(`{"timeoutMilliseconds":3000}`)},
			{ToolID: "notes.list"}, {ToolID: "ui.wait", Arguments: jsontext.Value(`{"timeoutMilliseconds":3000}`)}, {ToolID: "notes.list"}}
		start := time.Now()
		_, err := hs.c.Batch(t.Context(), false, calls)
		if d := time.Since(start); d != 11*time.Second {
			t.Errorf("timed out after %v, want 3 s + 3 s + 5 s", d)
		}
		want := "a batch of 4 calls (ui.wait, notes.list, ui.wait, …) did not answer within 11s (ui.wait's timeoutMilliseconds of 3s and ui.wait's timeoutMilliseconds of 3s plus 5s); raise the limit with timeoutMs (up to 1h)"
		if err == nil || err.Error() != want {
			t.Errorf("err\n%v, want\n%s", err, want)
		}
	})
}

// TestDisconnectDuringCall: an app that goes away in the middle of a call is said in one
// line; the transport's chain stays in the error for errors.Is.
func TestDisconnectDuringCall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		app := newFakeApp(t, deadlineTools()...)
		app.onCall = func(*wire.Envelope, wire.Call) []msg { return []msg{{typ: dropConnection}} }
		hs := newHarness(t, Options{}, app.handler())
		_, err := hs.c.Call(t.Context(), wire.Call{ToolID: "ui.wait"})
		if err == nil || err.Error() != "the app disconnected during ui.wait" {
			t.Fatalf("err = %v", err)
		}
		if _, ok := errorsAs[*transport.CloseError](err); !ok || !errors.Is(err, ErrSessionClosed) {
			t.Errorf("the cause is gone from %#v", err)
		}
	})
}

// TestSessionEndedDuringCall: a session the host ends says why.
func TestSessionEndedDuringCall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		app := newFakeApp(t, deadlineTools()...)
		app.onCall = func(*wire.Envelope, wire.Call) []msg { return nil }
		hs := newHarness(t, Options{}, app.handler())
		errc := make(chan error, 1)
		go func() {
			_, err := hs.c.Call(t.Context(), wire.Call{ToolID: "notes.list"})
			errc <- err
		}()
		synctest.Wait()
		hs.c.Close(errors.New("host: the session was replaced by a newer WebSocket connection"))
		if err := <-errc; err == nil || err.Error() != "the session ended during notes.list: host: the session was replaced by a newer WebSocket connection" {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestTransferAllowance: the files of an answer have their size at MinTransferRate plus
// the host's default to arrive; a trickle beyond fails the file with a timeout, not the
// call.
func TestTransferAllowance(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		data := randomBytes(MinTransferRate) // 1 s at the floor rate, plus 3 s
		app := transferApp(t, desc(id1, "f.bin", len(data)))
		hs := newHarness(t, Options{Timeout: 3 * time.Second}, app.handler())
		if _, err := hs.c.Catalog(t.Context()); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		trickled := make(chan struct{})
		go func() {
			defer close(trickled)
			synctest.Wait() // the result has been handled
			for _, f := range chunks(id1, data, MinTransferRate/8) {
				select {
				case <-time.After(time.Second): // never a stall, but 9 s in all
				case <-stop:
					return
				}
				if hs.app.Write(context.Background(), f.typ, f.data) != nil {
					return
				}
			}
		}()
		start := time.Now()
		res, err := hs.c.Call(t.Context(), wire.Call{ToolID: "t.read"})
		close(stop)
		<-trickled
		if err != nil {
			t.Fatal(err)
		}
		a := res.Artifacts[0]
		te, ok := errorsAs[*TimeoutError](a.Err)
		if !ok || !te.Transfer || time.Since(start) != 4*time.Second {
			t.Fatalf("artifact %+v after %v", a, time.Since(start))
		}
		if !strings.Contains(a.Err.Error(), "t.read did not finish sending its files within 4s (the announced files' size at 256 KiB/s plus 3s)") {
			t.Errorf("message %q", a.Err)
		}
	})
}

// FuzzCallLimit: any ui.wait arguments and tool keywords give a limit within the bounds;
// the member reader takes the timeoutMilliseconds the strict decoder reads.
func FuzzCallLimit(f *testing.F) {
	f.Add([]byte(`{"condition":"exists","timeoutMilliseconds":25000}`), "hint:duration=90")
	f.Add([]byte(`{"timeoutMilliseconds":1e400}`), "hint:duration=1e400")
	f.Add([]byte(`{"a":{"timeoutMilliseconds":9},"timeoutMilliseconds":-3}`), "HINT:DURATION=0.5,hint:additive")
	f.Add([]byte(`{"timeoutMilliseconds":"9000"}`), "hint:duration=NaN")
	f.Fuzz(func(t *testing.T, args []byte, keywords string) {
		c := NewClient(nopConn{}, Options{})
		st := &catalogState{snap: &Catalog{Tools: []wire.ToolEntry{{ID: waitToolID, Keywords: keywords}}, byID: map[string]int{waitToolID: 0}}}
		lim := c.limitFor(context.Background(), st, []wire.Call{{ToolID: waitToolID, Arguments: args}})
		if lim.Timeout < DefaultTimeout || lim.Timeout > MaxDerivedTimeout || (lim.Basis == BasisDefault) != (lim.Timeout == DefaultTimeout) {
			t.Fatalf("limit %+v", lim)
		}
		ms, ok := waitMilliseconds(args)
		if ok && (ms < 1 || ms > maxWaitMilliseconds) {
			t.Fatalf("timeoutMilliseconds %d out of its clamp", ms)
		}
		var m map[string]jsontext.Value
		if wire.Unmarshal(args, &m) != nil {
			return
		}
		var want float64
		v, has := m["timeoutMilliseconds"]
		if has && wire.Unmarshal(v, &want) == nil {
			if !ok || ms != int64(min(max(want, 1), maxWaitMilliseconds)) {
				t.Fatalf("read %d %v, the strict decoder %v", ms, ok, want)
			}
		} else if ok {
			t.Fatalf("read %d where the strict decoder reads no number (%s)", ms, v)
		}
	})
}
