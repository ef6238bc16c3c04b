package bench

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ansight-go/ansight/wire"
)

// TestFloorExchange checks that the floor echoes what the session really carried: the
// captured call is the host's tool.call envelope, the captured answer the app's tool.result
// replying to it, and the ids sit where the floor rewrites them.
func TestFloorExchange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h, d := startDemo(t, dir, "com.ansight.bench.floor")
	defer d.close()
	m := smallCall(t, h, d, dir)
	r := &run{tap: h.tap}
	call := wire.Call{ToolID: DefaultTool, Arguments: emptyArguments}
	ex, err := r.exchange(t.Context(), func(ctx context.Context) error { _, err := d.call(ctx, call); return err },
		d.sessionID, wire.TypeCall, wire.TypeResult, call, m.payload)
	if err != nil {
		t.Fatal(err)
	}
	req, err := wire.DecodeEnvelope(ex.request)
	if err != nil {
		t.Fatal(err)
	}
	ans, err := wire.DecodeEnvelope(ex.answer)
	if err != nil {
		t.Fatal(err)
	}
	if req.Type != wire.TypeCall || req.SessionID != d.sessionID || ans.Type != wire.TypeResult || ans.ReplyTo != req.ID {
		t.Fatalf("captured %s %s → %s replying to %s", req.Type, req.ID, ans.Type, ans.ReplyTo)
	}
	if got := string(ex.request[ex.reqID : ex.reqID+ex.idLen]); got != req.ID {
		t.Errorf("request id at %d: %q, want %q", ex.reqID, got, req.ID)
	}
	if got := string(ex.answer[ex.ansID : ex.ansID+ex.idLen]); got != req.ID {
		t.Errorf("answer's replyTo at %d: %q, want %q", ex.ansID, got, req.ID)
	}
	// The answer's result is the call's payload as the host decoded it.
	var res wire.Result
	if _, err := wire.UnmarshalPayload(ans.Payload, 0, &res); err != nil || !res.Success || res.ToolID != DefaultTool {
		t.Errorf("answer payload %s: %v", ans.Payload, err)
	}
	// Written with the codec (no local host), the pair has the same shape and sizes within
	// the digits of times.
	synth, err := synthExchange(d.sessionID, wire.TypeCall, wire.TypeResult, call, m.payload)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2][]byte{{synth.request, ex.request}, {synth.answer, ex.answer}} {
		if diff := len(c[0]) - len(c[1]); diff < -9 || diff > 9 {
			t.Errorf("written %d B, captured %d B:\n%s\n%s", len(c[0]), len(c[1]), c[0], c[1])
		}
	}
	if _, err := newExchange(ex.request, ex.answer, "no-such-id"); err == nil {
		t.Error("an exchange without its id")
	}
	if _, err := newExchange(ex.request, ex.answer, strings.Repeat("a", maxFloorID+1)); err == nil {
		t.Error("an id longer than the floor correlates")
	}
}

// TestFloorCorrelates runs concurrent round trips of two exchanges in turn: every caller
// gets its own answer, whatever order they come in.
func TestFloorCorrelates(t *testing.T) {
	t.Parallel()
	f, err := startFloor(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	for _, size := range []int{10, 70000} {
		ex := testExchange(t, size)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 50 {
					if err := f.roundTrip(t.Context(), ex); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	f.mu.Lock()
	left := len(f.pending)
	f.mu.Unlock()
	if left != 0 {
		t.Errorf("%d requests left waiting", left)
	}
}

// TestFloorAllocations holds the floor to what makes it the floor: no allocation per round
// trip, at either end. It is not parallel, so that no other test allocates meanwhile.
func TestFloorAllocations(t *testing.T) {
	f, err := startFloor(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	ex := testExchange(t, 200)
	for range 100 { // the map, the pools and the buffers reach their size
		if err := f.roundTrip(t.Context(), ex); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(2000, func() {
		if err := f.roundTrip(t.Context(), ex); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per round trip, want 0", allocs)
	}
}

// testExchange is a request and an answer of about size bytes with a 32-digit id.
func testExchange(t *testing.T, size int) *exchange {
	t.Helper()
	const id = "00000000000000000000000000000000"
	req := []byte(`{"type":"tool.call","id":"` + id + `","payload":"` + strings.Repeat("x", size) + `"}`)
	ans := []byte(`{"type":"tool.result","id":"ffff","replyTo":"` + id + `","payload":"` + strings.Repeat("y", size) + `"}`)
	ex, err := newExchange(req, ans, id)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ex.request, req) {
		t.Fatal("the exchange changed its request")
	}
	return ex
}
