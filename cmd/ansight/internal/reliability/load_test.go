package reliability

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/cmd/ansight/internal/childproc"
)

func TestMain(m *testing.M) {
	childproc.Main() // the fleets of the flood and of the load in a child process
	goleak.VerifyTestMain(m)
}

// TestLoadSmall runs the whole harness at a size CI affords: a few sessions for a moment,
// and on until the baseline and the load have each completed the mix (CompleteMix): with
// both cores busy elsewhere, 300 ms passed once before any call or batch was made ("0
// calls, 0 batches, 8 queries").
func TestLoadSmall(t *testing.T) {
	rep := runLoad(t, LoadOptions{Sessions: 4, Duration: 300 * time.Millisecond, Dir: t.TempDir(), CompleteMix: true})
	if rep.Calls == 0 || rep.Batches == 0 || rep.Queries == 0 {
		t.Errorf("the mix is incomplete: %d calls, %d batches, %d queries", rep.Calls, rep.Batches, rep.Queries)
	}
	checkBaseline(t, rep)
}

// TestCompleteMix: with CompleteMix, a worker whose deadline has passed goes on until each
// kind of request has completed, and stops at once when one went wrong or ctx is done;
// without it, it stops at the deadline (the bench's runs).
func TestCompleteMix(t *testing.T) {
	past := time.Now().Add(-time.Hour)
	var c counters
	if c.more(t.Context(), past, LoadOptions{}) {
		t.Error("without CompleteMix, more after the deadline")
	}
	complete := LoadOptions{CompleteMix: true}
	for _, kind := range []*atomic.Int64{&c.queries, &c.calls, &c.batches} {
		if !c.more(t.Context(), past, complete) {
			t.Fatalf("the mix is incomplete (%d queries, %d calls, %d batches) and the worker stops", c.queries.Load(), c.calls.Load(), c.batches.Load())
		}
		kind.Add(1)
	}
	if c.more(t.Context(), past, complete) {
		t.Error("the mix is complete and the worker goes on after the deadline")
	}
	if !c.more(t.Context(), time.Now().Add(time.Hour), complete) {
		t.Error("the worker stops before the deadline")
	}
	var wrong counters
	wrong.problem(&wrong.lost, "lost")
	if wrong.more(t.Context(), past, complete) {
		t.Error("a request was lost and the worker goes on after the deadline")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var done counters
	if done.more(ctx, time.Now().Add(time.Hour), complete) {
		t.Error("ctx is done and the worker goes on")
	}
}

// checkBaseline: the at-rest baseline ran the mix and measured latency and CPU.
func checkBaseline(t *testing.T, rep *LoadReport) {
	t.Helper()
	base := rep.Baseline
	if base.Requests == 0 || base.Calls == 0 || base.CallP50 <= 0 || base.CallP99 < base.CallP50 || base.HostCPU <= 0 || base.Machine.Wall <= 0 {
		t.Errorf("baseline %+v", base)
	}
	if rep.AppProcess && base.AppsCPU <= 0 {
		t.Errorf("baseline: the apps' CPU was not measured: %+v", base)
	}
	var b strings.Builder
	rep.WriteText(&b)
	if !strings.Contains(b.String(), "  at rest ") || !strings.Contains(b.String(), "  load/rest ") {
		t.Errorf("the report does not show the baseline:\n%s", b.String())
	}
}

// TestLoadSmallAppProcess runs the harness with the apps in a child process of the test
// binary: the host's memory is measured alone, the apps' beside it; the mix completed, as
// in TestLoadSmall, so that the apps' CPU time is that of requests made.
func TestLoadSmallAppProcess(t *testing.T) {
	rep := runLoad(t, LoadOptions{Sessions: 4, Duration: 300 * time.Millisecond, Dir: t.TempDir(), AppProcess: true, CompleteMix: true})
	m := rep.Memory
	if m.HostHeapPerSession <= 0 || m.AppHeapPerSession <= 0 || rep.AppsCPU <= 0 || rep.HostCPU <= 0 {
		t.Errorf("memory %+v, CPU host %v apps %v: a side was not measured", m, rep.HostCPU, rep.AppsCPU)
	}
	if rep.FileLimit.Sessions != 4+8 {
		t.Errorf("file limit %+v", rep.FileLimit)
	}
	checkBaseline(t, rep)
}

// TestLoad is the full run: 200 sessions for 10 s (ANSIGHT_LOAD=1; ANSIGHT_LOAD_SESSIONS and
// ANSIGHT_LOAD_DURATION override the size, ANSIGHT_LOAD_APP_PROCESS=1 runs the apps in a
// child process).
func TestLoad(t *testing.T) {
	if os.Getenv("ANSIGHT_LOAD") != "1" {
		t.Skip("set ANSIGHT_LOAD=1 to run the load test")
	}
	opts := LoadOptions{Dir: t.TempDir(), Progress: func(p string) { t.Log(p) }, AppProcess: os.Getenv("ANSIGHT_LOAD_APP_PROCESS") == "1"}
	if s := os.Getenv("ANSIGHT_LOAD_SESSIONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("ANSIGHT_LOAD_SESSIONS: %v", err)
		}
		opts.Sessions = n
	}
	if s := os.Getenv("ANSIGHT_LOAD_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("ANSIGHT_LOAD_DURATION: %v", err)
		}
		opts.Duration = d
	}
	runLoad(t, opts)
}

// runLoad runs the harness, logs its report and fails the test when the report fails its
// checks.
func runLoad(t *testing.T, opts LoadOptions) *LoadReport {
	t.Helper()
	rep, err := RunLoad(t.Context(), opts)
	logAndCheck(t, rep, err)
	return rep
}

// logAndCheck fails the test on err, else logs rep and fails the test when it fails its
// checks.
func logAndCheck(t *testing.T, rep interface {
	WriteText(io.Writer) error
	Check() error
}, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	t.Log("\n" + b.String())
	if err := rep.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestHistogram: a quantile is within 1/16 of the true one and never outside the durations
// added; the maximum is exact (a bucket's upper edge, as quantiles were before, put a p99
// above the maximum: "p99 1.572ms, max 1.481ms").
func TestHistogram(t *testing.T) {
	var h histogram
	if h.quantile(0.5) != 0 || h.maximum() != 0 {
		t.Error("empty histogram has a median or a maximum")
	}
	for i := 1; i <= 100; i++ {
		h.add(time.Duration(i) * time.Millisecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {0, time.Millisecond}, {1, 100 * time.Millisecond}} {
		got := h.quantile(tc.q)
		if got < tc.want-tc.want/16 || got > tc.want+tc.want/16 || got > h.maximum() {
			t.Errorf("quantile(%v) = %v, want %v within 1/16, at most the maximum %v", tc.q, got, tc.want, h.maximum())
		}
	}
	if h.maximum() != 100*time.Millisecond || h.quantile(1) != 100*time.Millisecond {
		t.Errorf("maximum %v, quantile(1) %v, want 100ms", h.maximum(), h.quantile(1))
	}

	// The flood's report: every answer took about as long, near the top of its bucket.
	var same histogram
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				same.add(1481 * time.Microsecond)
			}
		})
	}
	wg.Wait()
	same.add(1479 * time.Microsecond)
	if p50, p99, top := same.quantile(0.5), same.quantile(0.99), same.maximum(); p50 != 1481*time.Microsecond || p99 != p50 || top != p50 {
		t.Errorf("p50 %v, p99 %v, max %v: want 1.481ms each", p50, p99, top)
	}
	if low := same.quantile(0); low != 1479*time.Microsecond {
		t.Errorf("quantile(0) = %v, want the minimum 1.479ms", low)
	}
}

// TestCheckOneLine: a report's shortfalls come as one line, each named, for the CLI's
// one-line errors.
func TestCheckOneLine(t *testing.T) {
	rep := &LoadReport{Sessions: 3, Held: 2, Reconnects: 4, Lost: 1, Problems: []string{"call 7 lost"}}
	err := rep.Check()
	if err == nil {
		t.Fatal("no error for a report that fell short")
	}
	msg := err.Error()
	for _, want := range []string{"2 of 3 sessions held", "4 reconnects", "1 lost", "call 7 lost"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not name %q", msg, want)
		}
	}
	if strings.ContainsAny(msg, "\n\r") {
		t.Errorf("not one line: %q", msg)
	}
	if (&LoadReport{Sessions: 1, Held: 1, Calls: 1}).Check() != nil {
		t.Error("an error for a report that fell short of nothing")
	}
}
