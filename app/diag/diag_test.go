package diag_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/diag"
	"github.com/ansight-go/ansight/app/telemetry"
	"github.com/ansight-go/ansight/wire"
)

func harness(t *testing.T) *apptest.Harness {
	t.Helper()
	a := app.New(app.Options{})
	tel := telemetry.New(telemetry.Options{MetricsInterval: -1})
	slog.New(tel.Handler(nil, nil)).Info("service started", "port", 8080)
	if err := diag.Register(a, diag.Options{Telemetry: tel}); err != nil {
		t.Fatal(err)
	}
	return apptest.New(t, a)
}

func call(t *testing.T, h *apptest.Harness, tool, args string) apptest.Response {
	t.Helper()
	r := h.Send(wire.TypeCall, `{"toolId":"`+tool+`","arguments":`+args+`}`)
	if r.Err != nil {
		t.Fatalf("%s: %v", tool, r.Err)
	}
	return r
}

func TestDiagnosticsTools(t *testing.T) {
	t.Parallel()
	h := harness(t)
	if r := call(t, h, diag.RuntimeToolID, `{}`); !strings.Contains(string(r.Payload), `"goVersion":"go1.`) ||
		!strings.Contains(string(r.Payload), `"mainPath":`) {
		t.Errorf("runtime = %s", r.Payload)
	}
	if r := call(t, h, diag.MetricsToolID, `{"prefix":"/sched/"}`); !strings.Contains(string(r.Payload), `"name":"/sched/goroutines","unit":"goroutines"`) ||
		strings.Contains(string(r.Payload), `"/gc/`) {
		t.Errorf("metrics = %.300s", r.Payload)
	}
	if r := call(t, h, diag.GoroutinesToolID, `{}`); !strings.Contains(string(r.Payload), "goroutine ") {
		t.Errorf("goroutines = %.300s", r.Payload)
	}
	if r := call(t, h, diag.LogTailToolID, `{"lines":5}`); !strings.Contains(string(r.Payload), `msg=\"service started\" port=8080`) {
		t.Errorf("log tail = %s", r.Payload)
	}
	for _, tc := range []struct{ tool, args string }{{diag.HeapProfileToolID, `{}`}, {diag.CPUProfileToolID, `{"seconds":1}`}} {
		t.Run(tc.tool, func(t *testing.T) {
			r := call(t, apptest.New(t, h.App()), tc.tool, tc.args)
			if len(r.Artifacts) != 1 {
				t.Fatalf("%d artifacts", len(r.Artifacts))
			}
			for _, b := range r.Artifacts {
				// A pprof file is a gzipped protocol buffer.
				if _, err := gzip.NewReader(bytes.NewReader(b)); err != nil {
					t.Errorf("the artifact is not a pprof file: %v", err)
				}
			}
		})
	}
}

// TestPolicies: only the CPU profile needs a write grant.
func TestPolicies(t *testing.T) {
	t.Parallel()
	r := harness(t).Send(wire.TypeQuery, `{"detail":"index"}`)
	if r.Catalog == nil {
		t.Fatalf("query: %+v", r.Err)
	}
	got := map[string]wire.Policy{}
	for _, e := range r.Catalog.Tools {
		got[e.ID] = e.Policy
	}
	for id, want := range map[string]wire.Policy{diag.RuntimeToolID: wire.PolicyRead, diag.MetricsToolID: wire.PolicyRead,
		diag.GoroutinesToolID: wire.PolicyRead, diag.HeapProfileToolID: wire.PolicyRead, diag.CPUProfileToolID: wire.PolicyWrite,
		diag.LogTailToolID: wire.PolicyRead} {
		if got[id] != want {
			t.Errorf("%s policy = %q, want %q", id, got[id], want)
		}
	}
}

// TestArgumentBounds: the bounds of seconds and lines are in the published schemas, so a
// call out of them is refused with the bound it broke, instead of running clamped.
// (Before, seconds 0 ran a one-second profile and 31 a thirty-second one.)
func TestArgumentBounds(t *testing.T) {
	t.Parallel()
	h := harness(t)
	for _, tc := range []struct{ tool, args, bound string }{
		{diag.CPUProfileToolID, `{"seconds":0}`, "minimum"},
		{diag.CPUProfileToolID, `{"seconds":-3}`, "minimum"},
		{diag.CPUProfileToolID, `{"seconds":31}`, "maximum"},
		{diag.LogTailToolID, `{"lines":0}`, "minimum"},
		{diag.LogTailToolID, `{"lines":1001}`, "maximum"},
	} {
		r := h.Send(wire.TypeCall, `{"toolId":"`+tc.tool+`","arguments":`+tc.args+`}`)
		if r.Err == nil || r.Err.Code != wire.CodeArgumentsSchemaInvalid || !strings.Contains(string(r.Err.Details), `"code":"`+tc.bound+`"`) {
			t.Errorf("%s %s = %+v %s, want %s (%s)", tc.tool, tc.args, r.Err, r.Payload, wire.CodeArgumentsSchemaInvalid, tc.bound)
		}
	}
	r := h.Send(wire.TypeQuery, `{"detail":"full"}`)
	if r.Catalog == nil {
		t.Fatalf("query: %+v", r.Err)
	}
	for _, d := range r.Catalog.Tools {
		if s := string(d.ArgumentsSchema); d.ID == diag.CPUProfileToolID && (!strings.Contains(s, `"minimum":1`) || !strings.Contains(s, `"maximum":30`)) {
			t.Errorf("diag.cpu_profile arguments schema = %s", s)
		}
	}
}

// TestCPUProfileOneAtATime: a CPU profile is refused (diag_profile_busy) while another
// runs, and while something else in the process holds the profiler. Not parallel: it
// holds the process-wide profiler itself.
func TestCPUProfileOneAtATime(t *testing.T) {
	h := harness(t)
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan apptest.Response, 1)
	go func() {
		first <- apptest.New(t, h.App()).SendContext(ctx, wire.TypeCall, `{"toolId":"`+diag.CPUProfileToolID+`","arguments":{"seconds":30}}`)
	}()
	// The first profile runs once the profiler's writer goroutine is there.
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(goroutineDump(), "runtime/pprof.profileWriter(") {
		if time.Now().After(deadline) {
			t.Fatal("the first CPU profile never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	busy := apptest.New(t, h.App()).Fail(diag.CPUProfileToolID, `{"seconds":1}`)
	if busy.Code != diag.CodeProfileBusy || !strings.Contains(busy.Message, "already running") {
		t.Errorf("a second profile = %+v, want %s (already running)", busy, diag.CodeProfileBusy)
	}
	cancel() // the first ends early: its caller left
	if r := <-first; r.Err == nil {
		t.Errorf("the cancelled profile = %s, want an error", r.Payload)
	}

	// Someone else in the process (net/http/pprof, a test) holds the profiler.
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		t.Fatal(err)
	}
	inUse := h.Fail(diag.CPUProfileToolID, `{"seconds":1}`)
	pprof.StopCPUProfile()
	if inUse.Code != diag.CodeProfileBusy || !strings.Contains(inUse.Message, "in use") {
		t.Errorf("a profile while the profiler is held = %+v, want %s (in use)", inUse, diag.CodeProfileBusy)
	}
	// And once it is free again, a profile runs.
	if r := call(t, h, diag.CPUProfileToolID, `{"seconds":1}`); len(r.Artifacts) != 1 {
		t.Errorf("a profile after the others: %d artifacts", len(r.Artifacts))
	}
}

func goroutineDump() string {
	var b bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&b, 2)
	return b.String()
}
