package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/transport/faultconn"
	"github.com/ansight-go/ansight/wire"
)

// Protocol-level faults: the host's tool client and the app's runtime over a real loopback
// WebSocket, with faults injected on either end.

var bg = context.Background()

func plan(rules ...faultconn.Rule) faultconn.Plan { return faultconn.Plan{Seed: 7, Rules: rules} }

// nthBinary matches the n-th binary message (from 1) of its direction: ASFT frames.
func nthBinary(n int32) func(faultconn.Message) bool {
	var seen atomic.Int32
	return func(m faultconn.Message) bool {
		return m.Type == transport.MessageBinary && seen.Add(1) == n
	}
}

// all matches the messages every one of ms matches.
func all(ms ...func(faultconn.Message) bool) func(faultconn.Message) bool {
	return func(m faultconn.Message) bool {
		for _, f := range ms {
			if !f(m) {
				return false
			}
		}
		return true
	}
}

// ends names the two ends of a link for subtests.
var ends = []struct {
	name string
	end  func(*link) *faultconn.Conn
}{
	{"HostSide", func(l *link) *faultconn.Conn { return l.host }},
	{"AppSide", func(l *link) *faultconn.Conn { return l.app }},
}

// afterDeath checks what must hold once a link's connection died: the app's runtime
// stopped, requests on the dead client fail at once, and a new connection for the same
// app works.
func afterDeath(t *testing.T, f *fixture, l *link) {
	t.Helper()
	if err := l.served(t); err == nil {
		t.Error("the app's runtime stopped without an error")
	}
	_, err := within(t, "call on a dead session", func() (*tools.CallResult, error) {
		return l.client.Call(bg, wire.Call{ToolID: "f.echo", Arguments: nonceArgs("dead")})
	})
	wantTransportError(t, err, tools.ErrSessionClosed)
	l2 := newLink(t, f, faultconn.Plan{}, faultconn.Plan{}, tools.Options{})
	echo(t, l2.client, "reconnected")
}

func TestConnectionDiesMidCall(t *testing.T) {
	for _, e := range ends {
		t.Run(e.name, func(t *testing.T) {
			leakCheck(t)
			f := newFixture(t)
			l := newLink(t, f, faultconn.Plan{}, faultconn.Plan{}, tools.Options{})
			wait := start(t, "f.block", func() (*tools.CallResult, error) {
				return l.client.Call(bg, wire.Call{ToolID: "f.block"})
			})
			f.await(t, "f.block")
			transport.Abort(e.end(l))
			_, err := wait()
			wantTransportError(t, err, tools.ErrSessionClosed)
			if herr := <-f.blockErrs; herr == nil {
				t.Error("the tool's context was not cancelled when its connection died")
			}
			afterDeath(t, f, l)
			noPartialArtifacts(t, l.dir)
		})
	}
}

func TestConnectionDiesMidBatch(t *testing.T) {
	for _, e := range ends {
		t.Run(e.name, func(t *testing.T) {
			leakCheck(t)
			f := newFixture(t)
			l := newLink(t, f, faultconn.Plan{}, faultconn.Plan{}, tools.Options{})
			wait := start(t, "batch", func() (*tools.BatchResult, error) {
				return l.client.Batch(bg, false, []wire.Call{
					{ToolID: "f.echo", Arguments: nonceArgs("b0")}, {ToolID: "f.block"}, {ToolID: "f.after"},
				})
			})
			f.await(t, "f.block")
			transport.Abort(e.end(l))
			_, err := wait()
			wantTransportError(t, err, tools.ErrSessionClosed)
			afterDeath(t, f, l)
			if n := f.ran.Load(); n != 0 {
				t.Errorf("the batch went on after its connection died: the next step ran %d times", n)
			}
		})
	}
}

// transferFails checks a call whose only transfer must have failed: the call itself has its
// answer, the artifact reports the failure, its descriptor says failed, and no file is left.
func transferFails(t *testing.T, l *link, res *tools.CallResult, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("call: %v (the response arrived before the fault, so the call has an answer)", err)
	}
	if len(res.Artifacts) != 1 || res.Artifacts[0].Err == nil || res.Artifacts[0].Path != "" {
		t.Fatalf("artifacts %+v, want one failed transfer without a path", res.Artifacts)
	}
	var out fileOut
	if err := wire.Unmarshal(res.Payload.Result, &out); err != nil {
		t.Fatal(err)
	}
	if out.File.Status != tools.StatusFailed || out.File.ArtifactPath != "" {
		t.Errorf("descriptor %+v, want status failed and no path", out.File)
	}
	noPartialArtifacts(t, l.dir)
}

func fileCall(size int64, stall bool) wire.Call {
	return wire.Call{ToolID: "f.file", Arguments: jsontext.Value(fmt.Sprintf(`{"size":%d,"stall":%v}`, size, stall))}
}

func TestConnectionDiesMidTransfer(t *testing.T) {
	for _, e := range ends {
		t.Run(e.name, func(t *testing.T) {
			leakCheck(t)
			f := newFixture(t)
			l := newLink(t, f, faultconn.Plan{}, faultconn.Plan{}, tools.Options{})
			wait := start(t, "f.file", func() (*tools.CallResult, error) { return l.client.Call(bg, fileCall(4*chunk, true)) })
			f.await(t, "f.file") // the response and the first chunk are out; the file stalls
			l.midway.await(t)    // and the host has written the chunk to a partial file
			transport.Abort(e.end(l))
			f.releaseAll() // the file's reader goes on; its frames meet a dead connection
			res, err := wait()
			transferFails(t, l, res, err)
			afterDeath(t, f, l)
		})
	}
	t.Run("KilledWithAFrame", func(t *testing.T) {
		leakCheck(t)
		f := newFixture(t)
		l := newLink(t, f, faultconn.Plan{}, plan(faultconn.Rule{Direction: faultconn.Outbound, Match: nthBinary(2), Action: faultconn.Kill}), tools.Options{})
		res, err := within(t, "f.file", func() (*tools.CallResult, error) { return l.client.Call(bg, fileCall(4*chunk, false)) })
		transferFails(t, l, res, err)
		afterDeath(t, f, l)
	})
}

func TestResponseKilledInFlight(t *testing.T) {
	leakCheck(t)
	f := newFixture(t)
	l := newLink(t, f, faultconn.Plan{}, plan(faultconn.Rule{Direction: faultconn.Outbound, Match: faultconn.Contains(`"tool.result"`), Action: faultconn.Kill}), tools.Options{})
	_, err := within(t, "f.echo", func() (*tools.CallResult, error) {
		return l.client.Call(bg, wire.Call{ToolID: "f.echo", Arguments: nonceArgs("killed")})
	})
	wantTransportError(t, err, tools.ErrSessionClosed)
	afterDeath(t, f, l)
}

// shortTimeout is the per-request timeout of tests in which a request must time out
// (its response or its request is lost); the requests there that must succeed set their
// own, long, limit (echo).
const shortTimeout = 2 * time.Second

// lostMessage runs a call whose request or response a plan loses, and checks that it ends
// with a transport error and that the connection still serves the next call.
func lostMessage(t *testing.T, hostPlan, appPlan faultconn.Plan, causes ...error) *link {
	t.Helper()
	f := newFixture(t)
	l := newLink(t, f, hostPlan, appPlan, tools.Options{Timeout: shortTimeout})
	_, err := within(t, "f.echo", func() (*tools.CallResult, error) {
		return l.client.Call(bg, wire.Call{ToolID: "f.echo", Arguments: nonceArgs("lost")})
	})
	wantTransportError(t, err, nil)
	matched := false
	for _, c := range causes {
		matched = matched || errors.Is(err, c)
	}
	if !matched {
		t.Fatalf("error %v, want one of %v", err, causes)
	}
	echo(t, l.client, "next")
	return l
}

func TestResponseDropped(t *testing.T) {
	leakCheck(t)
	lostMessage(t, faultconn.Plan{}, plan(faultconn.Rule{Direction: faultconn.Outbound, Match: faultconn.Contains(`"tool.result"`), Times: 1, Action: faultconn.Drop}), tools.ErrTimeout)
}

func TestRequestDropped(t *testing.T) {
	leakCheck(t)
	lostMessage(t, plan(faultconn.Rule{Direction: faultconn.Outbound, Match: faultconn.Contains(`"tool.call"`), Times: 1, Action: faultconn.Drop}), faultconn.Plan{}, tools.ErrTimeout)
}

func TestResponseTruncated(t *testing.T) {
	leakCheck(t)
	l := lostMessage(t, faultconn.Plan{}, plan(faultconn.Rule{Direction: faultconn.Outbound, Match: faultconn.Contains(`"tool.result"`), Times: 1, Action: faultconn.Truncate}),
		tools.ErrTimeout, tools.ErrProtocol)
	if s := l.client.Stats(); s.MalformedResponses+s.UnmatchedResponses == 0 {
		t.Errorf("stats %+v: the truncated response was not counted", s)
	}
}

// TestRequestTruncated: the app cannot parse the cut request but can read its id, so it
// answers tool_protocol_invalid_request (docs/protocol/messages.md#invalid-requests), a clear error for that caller only.
func TestRequestTruncated(t *testing.T) {
	leakCheck(t)
	f := newFixture(t)
	l := newLink(t, f, plan(faultconn.Rule{Direction: faultconn.Outbound, Match: faultconn.Contains(`"tool.call"`), Times: 1, Action: faultconn.Truncate}),
		faultconn.Plan{}, tools.Options{Timeout: shortTimeout})
	_, err := within(t, "f.echo", func() (*tools.CallResult, error) {
		return l.client.Call(bg, wire.Call{ToolID: "f.echo", Arguments: nonceArgs("cut")})
	})
	if code := wire.CodeOf(err); code != wire.CodeProtocolInvalidRequest {
		t.Fatalf("error %v (code %q), want %s", err, code, wire.CodeProtocolInvalidRequest)
	}
	echo(t, l.client, "next")
}

// waitStats polls the client's counters until cond holds.
func waitStats(t *testing.T, c *tools.Client, what string, cond func(tools.Stats) bool) {
	t.Helper()
	for !cond(c.Stats()) {
		if t.Context().Err() != nil {
			t.Fatalf("%s: stats %+v", what, c.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestResponseDuplicated(t *testing.T) {
	leakCheck(t)
	f := newFixture(t)
	l := newLink(t, f, faultconn.Plan{}, plan(faultconn.Rule{Direction: faultconn.Outbound, Match: faultconn.Contains(`"tool.result"`), Times: 1, Action: faultconn.Duplicate}), tools.Options{})
	echo(t, l.client, "twice")
	waitStats(t, l.client, "the duplicate response was not dropped", func(s tools.Stats) bool { return s.UnmatchedResponses == 1 })
	echo(t, l.client, "next")
}

// TestRequestDuplicated: the protocol has no request de-duplication, so a duplicated
// request runs twice; the caller still gets exactly one answer and the second response is
// dropped as unmatched.
func TestRequestDuplicated(t *testing.T) {
	leakCheck(t)
	f := newFixture(t)
	l := newLink(t, f, plan(faultconn.Rule{Direction: faultconn.Outbound, Match: all(faultconn.Contains(`"tool.call"`), faultconn.Contains(`"f.mark"`)),
		Times: 1, Action: faultconn.Duplicate}), faultconn.Plan{}, tools.Options{})
	res, err := within(t, "f.mark", func() (*tools.CallResult, error) {
		return l.client.Call(bg, wire.Call{ToolID: "f.mark", Arguments: nonceArgs("dup")})
	})
	if err != nil {
		t.Fatal(err)
	}
	checkNonce(t, res.Payload.Result, "dup")
	waitStats(t, l.client, "the second response was not dropped", func(s tools.Stats) bool { return s.UnmatchedResponses == 1 })
	if n := f.marks.Load(); n != 2 {
		t.Errorf("the duplicated request ran %d times, want 2", n)
	}
	echo(t, l.client, "next")
}

// TestReordered holds one message back until the next one in the same direction has gone,
// in both directions: each response must still reach its own caller.
func TestReordered(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  func(faultconn.Rule) (host, app faultconn.Plan)
		hold string
	}{
		{"Responses", func(r faultconn.Rule) (faultconn.Plan, faultconn.Plan) { return faultconn.Plan{}, plan(r) }, `"tool.result"`},
		{"Requests", func(r faultconn.Rule) (faultconn.Plan, faultconn.Plan) { return plan(r), faultconn.Plan{} }, `"tool.call"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			f := newFixture(t)
			rule := faultconn.Rule{Direction: faultconn.Outbound, Action: faultconn.Reorder,
				Match: all(faultconn.Contains(tc.hold), faultconn.Contains(`"held-`))}
			hp, ap := tc.dir(rule)
			l := newLink(t, f, hp, ap, tools.Options{})
			wrapped := l.app
			if tc.name == "Requests" {
				wrapped = l.host
			}
			for i := range 4 {
				held := fmt.Sprintf("held-%d", i)
				first := start(t, held, func() (*tools.CallResult, error) {
					return l.client.Call(bg, wire.Call{ToolID: "f.echo", Arguments: nonceArgs(held)})
				})
				waitEvents(t, wrapped, i+1) // the held message is parked in the fault layer
				echo(t, l.client, fmt.Sprintf("passing-%d", i))
				res, err := first()
				if err != nil {
					t.Fatalf("%s: %v", held, err)
				}
				checkNonce(t, res.Payload.Result, held)
			}
			if s := l.client.Stats(); s.UnmatchedResponses != 0 || s.MalformedResponses != 0 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

func waitEvents(t *testing.T, c *faultconn.Conn, n int) {
	t.Helper()
	for len(c.Events()) < n {
		if t.Context().Err() != nil {
			t.Fatalf("%d faults injected, want %d", len(c.Events()), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestDelayedAndConcurrent delays a random third of the messages both ways while calls and
// a transfer run concurrently: everything arrives, late, and matches.
func TestDelayedAndConcurrent(t *testing.T) {
	leakCheck(t)
	f := newFixture(t)
	delay := faultconn.Rule{Probability: 0.3, Action: faultconn.Delay, Delay: 3 * time.Millisecond}
	l := newLink(t, f, plan(delay), plan(delay), tools.Options{})
	const n = 16
	var waits []func() (*tools.CallResult, error)
	for i := range n {
		nonce := fmt.Sprintf("c%d", i)
		waits = append(waits, start(t, nonce, func() (*tools.CallResult, error) {
			return l.client.Call(bg, wire.Call{ToolID: "f.echo", Arguments: nonceArgs(nonce)})
		}))
	}
	file := start(t, "f.file", func() (*tools.CallResult, error) { return l.client.Call(bg, fileCall(3*chunk+17, false)) })
	for i, w := range waits {
		res, err := w()
		if err != nil {
			t.Fatal(err)
		}
		checkNonce(t, res.Payload.Result, fmt.Sprintf("c%d", i))
	}
	res, err := file()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Artifacts) != 1 || res.Artifacts[0].Err != nil {
		t.Fatalf("artifacts %+v", res.Artifacts)
	}
	checkFile(t, res.Artifacts[0].Path, 3*chunk+17)
	noPartialArtifacts(t, l.dir, res.Artifacts...)
	if len(l.app.Events())+len(l.host.Events()) == 0 {
		t.Error("no message was delayed")
	}
}

func checkFile(t *testing.T, path string, size int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != size {
		t.Fatalf("artifact has %d bytes, want %d", len(b), size)
	}
	for i, c := range b {
		if c != pattern(int64(i)) {
			t.Fatalf("artifact byte %d is %d, want %d", i, c, pattern(int64(i)))
		}
	}
}

// TestFrameFaults damages one ASFT frame of a four-chunk transfer on its way: the transfer
// fails (a gap, an overlap, a bad frame or frames out of order are rejected), its partial
// file is deleted, the call keeps its answer and the session goes on.
func TestFrameFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule faultconn.Rule
	}{
		{"DroppedGap", faultconn.Rule{Match: nthBinary(2), Action: faultconn.Drop}},
		{"DuplicatedOverlap", faultconn.Rule{Match: nthBinary(2), Action: faultconn.Duplicate}},
		{"Truncated", faultconn.Rule{Match: nthBinary(2), Action: faultconn.Truncate, Keep: 100}},
		{"TruncatedHeader", faultconn.Rule{Match: nthBinary(2), Action: faultconn.Truncate, Keep: 20}},
		{"Reordered", faultconn.Rule{Match: nthBinary(2), Action: faultconn.Reorder}},
		{"CompleteDropped", faultconn.Rule{Match: nthBinary(5), Action: faultconn.Drop}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			f := newFixture(t)
			tc.rule.Direction = faultconn.Outbound
			// A lost last frame leaves the transfer silent: it fails when it has stalled
			// for the client's timeout.
			l := newLink(t, f, faultconn.Plan{}, plan(tc.rule), tools.Options{Timeout: shortTimeout})
			res, err := within(t, "f.file", func() (*tools.CallResult, error) { return l.client.Call(bg, fileCall(4*chunk, false)) })
			transferFails(t, l, res, err)
			echo(t, l.client, "after-"+tc.name)
		})
	}
}
