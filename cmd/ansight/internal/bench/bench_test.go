package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/host/control"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// tinyOptions runs every measurement at sizes that test the harness, not the protocol.
func tinyOptions(t *testing.T) Options {
	return Options{Tool: DefaultTool, Callers: 3, Calls: 12, Rounds: 2, ToolCounts: []int{3, 7}, Queries: 2,
		LargeResultBytes: 40 << 10, LargeResults: 2, ArtifactBytes: 200 << 10, Dir: t.TempDir()}
}

func TestRunLocal(t *testing.T) {
	t.Parallel()
	opts := tinyOptions(t)
	var steps []string
	opts.Progress = func(m string) { steps = append(steps, m) }
	r, err := RunLocal(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema != Schema || r.Machine.CPUs < 1 || r.DurationMS < 0 || r.StartedAt.IsZero() {
		t.Errorf("report header: %+v", r)
	}
	if len(r.Skipped) != 0 {
		t.Errorf("skipped: %+v", r.Skipped)
	}
	want := []string{"calls", "batch", "payload", "artifact", "ui", "mcp", "catalog, 3 tools", "catalog, 7 tools"}
	if strings.Join(steps, "|") != strings.Join(want, "|") {
		t.Errorf("progress = %q, want %q", steps, want)
	}
	byName := map[string]Figure{}
	for _, f := range r.Figures {
		byName[f.Name] = f
		checkFigure(t, f)
	}
	for _, name := range []string{
		"CPU per call, 1 caller", "CPU per call vs the older echo, 1 caller",
		"call throughput, 1 caller", "call p50, 1 caller", "call p90, 1 caller", "call p99, 1 caller",
		"CPU per call, 3 callers", "CPU per call vs the older echo, 3 callers",
		"call throughput, 3 callers", "call p50, 3 callers", "call p99, 3 callers",
		"batch of 32 calls", "40 KiB result, call", "40 KiB result, wire bytes",
		"200 KiB artifact, throughput", "200 KiB artifact, peak live heap growth", "CPU per ui tap", "ui tap p50", "CPU per ansight_call_app_tool", "the bridge's own CPU per call",
		"index, 3 tools", "definitions, 3 tools", "full, 3 tools", "unchanged, 3 tools",
		"index, first query, 3 tools", "definitions, first query, 3 tools", "full, first query, 3 tools",
		"index, cold, 3 tools", "definitions, cold, 3 tools", "full, cold, 3 tools", "definitions, cold, 7 tools",
		"index, 7 tools", "unchanged, 7 tools",
	} {
		if _, ok := byName[name]; !ok {
			t.Errorf("no figure %q", name)
		}
	}
	// The targets the project commits to; the unchanged answer's applies from 10,000 tools.
	for name, op := range map[string]string{"CPU per call, 1 caller": AtMost, "CPU per call, 3 callers": AtMost,
		"index, 3 tools": AtMost, "definitions, 7 tools": AtMost, "full, 7 tools": AtMost,
		"200 KiB artifact, throughput": AtLeast, "200 KiB artifact, peak live heap growth": AtMost, "CPU per ui tap": AtMost, "the bridge's own CPU per call": AtMost} {
		if f := byName[name]; f.Target == nil || f.Target.Op != op || f.Met == nil {
			t.Errorf("%s: target %+v, met %v", name, f.Target, f.Met)
		}
	}
	for _, name := range []string{"unchanged, 7 tools", "call throughput, 3 callers", "index, first query, 7 tools", "index, cold, 7 tools", "CPU per call vs the older echo, 3 callers"} {
		if f := byName[name]; f.Target != nil {
			t.Errorf("%s has a target: %+v", name, f.Target)
		}
	}
	// The unchanged answer is compared with the index it spares a host that does not hold it: a cold one.
	if f := byName["unchanged, 7 tools"]; f.Baseline != "index, cold" || f.BaselineValue <= 0 {
		t.Errorf("unchanged: baseline %q %v, want the cold index", f.Baseline, f.BaselineValue)
	}
	if r.Load != nil && (r.Load.OtherCPUs < 0 || r.Load.LoadAverage < 0) {
		t.Errorf("load: %+v", r.Load)
	}
	// A 40 KiB result is above the compression threshold: it travels wrapped and smaller.
	if f := byName["40 KiB result, wire bytes"]; f.BaselineValue < 40<<10 || f.Value >= f.BaselineValue {
		t.Errorf("large result: %+v", f)
	}
	// The scratch directory is emptied.
	if left, _ := filepath.Glob(filepath.Join(opts.Dir, "*")); len(left) != 0 {
		t.Errorf("left behind: %q", left)
	}
	var table strings.Builder
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"FIGURE", "BASELINE", "RATIO", "TARGET", "MET", "CPU per call, 3 callers", "µs CPU", "CPUs busy", "Targets met:"} {
		if !strings.Contains(table.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, table.String())
		}
	}
}

// startDemo starts a local host in dir, closed when tb ends, and connects the demo app to it
// as appID. The caller closes the app.
func startDemo(tb testing.TB, dir, appID string) (*localHost, *demoApp) {
	tb.Helper()
	h, err := startLocalHost(tb.Context(), dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(h.close)
	d, err := h.connectDemo(tb.Context(), appID, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return h, d
}

func checkFigure(t *testing.T, f Figure) {
	t.Helper()
	if f.Group == "" || f.Unit == "" || f.Baseline == "" {
		t.Errorf("%s: incomplete %+v", f.Name, f)
	}
	// The bridge's own CPU (its three figures) is a difference of measurements, which noise
	// can make negative at the tests' sizes.
	if f.Value <= 0 && !strings.HasPrefix(f.Name, "the bridge's own CPU per call") || f.BaselineValue <= 0 {
		t.Errorf("%s: value %v, baseline %v", f.Name, f.Value, f.BaselineValue)
	}
	if want := f.Value / f.BaselineValue; f.Ratio != want {
		t.Errorf("%s: ratio %v, want %v", f.Name, f.Ratio, want)
	}
	if (f.Target == nil) != (f.Met == nil) {
		t.Errorf("%s: target %v without verdict %v", f.Name, f.Target, f.Met)
	}
}

// TestRunSession drives the demo app through the control API of a host in this process,
// as ansight bench --session does through a resident host's socket.
func TestRunSession(t *testing.T) {
	t.Parallel()
	opts := tinyOptions(t)
	dir := t.TempDir()
	h, d := startDemo(t, dir, "com.ansight.bench.session")
	defer d.close()
	local := control.New(h.srv, control.Options{})

	r, err := RunSession(t.Context(), local, d.sessionID, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Subject, d.sessionID) {
		t.Errorf("subject %q", r.Subject)
	}
	groups := map[string]bool{}
	for _, f := range r.Figures {
		checkFigure(t, f)
		groups[f.Group] = true
		if f.Target != nil {
			t.Errorf("%s: a target through the control API", f.Name)
		}
	}
	for _, g := range []string{"calls", "batch", "payload", "artifact", "ui"} {
		if !groups[g] {
			t.Errorf("no %s figures", g)
		}
	}
	skipped := map[string]bool{}
	for _, s := range r.Skipped {
		skipped[s.Measurement] = true
	}
	if !skipped["catalog"] || !skipped["artifact memory"] || !skipped["mcp"] {
		t.Errorf("skipped: %+v", r.Skipped)
	}
	filepath.WalkDir(filepath.Join(dir, "artifacts"), func(path string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			t.Errorf("artifact left behind: %s", path)
		}
		return nil
	})

	// A tool the app does not offer skips the measurements that need it.
	opts.Tool = "no.such_tool"
	r, err = RunSession(t.Context(), local, d.sessionID, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Figures {
		if f.Group == "calls" || f.Group == "batch" {
			t.Errorf("measured %s without its tool", f.Name)
		}
	}
	if len(r.Skipped) < 3 || r.Skipped[0].Measurement != "calls" || !strings.Contains(r.Skipped[0].Reason, "no.such_tool") {
		t.Errorf("skipped: %+v", r.Skipped)
	}

	if _, err := RunSession(t.Context(), local, "no-such-session", opts); err == nil {
		t.Error("no error for an unknown session")
	}
}

func TestOptionsCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"default", func(*Options) {}, ""},
		{"no tool", func(o *Options) { o.Tool = "" }, "tool"},
		{"callers", func(o *Options) { o.Callers = 0 }, "callers"},
		{"too many callers", func(o *Options) { o.Callers = 65 }, "callers"},
		{"calls", func(o *Options) { o.Calls = 0 }, "calls"},
		{"rounds", func(o *Options) { o.Rounds = 0 }, "rounds"},
		{"tool count", func(o *Options) { o.ToolCounts = []int{0} }, "tool counts"},
		{"queries", func(o *Options) { o.Queries = -1 }, "queries"},
		{"large result", func(o *Options) { o.LargeResultBytes = 10 }, "largeResultBytes"},
		{"large results", func(o *Options) { o.LargeResults = 0 }, "largeResults"},
		{"artifact", func(o *Options) { o.ArtifactBytes = 0 }, "artifactBytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := QuickOptions()
			tc.change(&o)
			err := o.check()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one about %s", err, tc.want)
			}
			if _, err := RunLocal(context.Background(), o); err == nil {
				t.Fatal("RunLocal accepted invalid options")
			}
		})
	}
	if o := DefaultOptions(); o.check() != nil {
		t.Fatal(o.check())
	}
}

func TestTargets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		op           string
		bound, ratio float64
		met          bool
	}{
		{AtLeast, 0.67, 0.7, true},
		{AtLeast, 0.67, 0.67, true},
		{AtLeast, 0.67, 0.5, false},
		{AtMost, 0.02, 0.01, true},
		{AtMost, 0.02, 0.03, false},
	} {
		t.Run(fmt.Sprintf("%s %v at %v", tc.op, tc.bound, tc.ratio), func(t *testing.T) {
			t.Parallel()
			r := &Report{}
			r.add(Figure{Name: "f", Value: tc.ratio * 100, BaselineValue: 100, Target: &Target{Op: tc.op, Ratio: tc.bound}})
			f := r.Figures[0]
			if f.Met == nil || *f.Met != tc.met || r.TargetsMet() != tc.met {
				t.Errorf("%s %v at ratio %v: met %v, want %v", tc.op, tc.bound, tc.ratio, f.Met, tc.met)
			}
		})
	}
	// A figure without a baseline cannot meet its target.
	r := &Report{}
	r.add(Figure{Name: "f", Value: 1, Target: &Target{Op: AtLeast, Ratio: 0}})
	if r.TargetsMet() || r.Figures[0].Ratio != 0 {
		t.Errorf("zero baseline: %+v", r.Figures[0])
	}
	if got := (Target{Op: AtMost, Ratio: 0.02}).String(); got != "<= 0.020 (50x cheaper)" {
		t.Errorf("target string %q", got)
	}
}

func TestStats(t *testing.T) {
	t.Parallel()
	l := latencies{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 5}, {90, 9}, {99, 10}, {100, 10}, {1, 1}, {10, 1}, {11, 2}} {
		t.Run(fmt.Sprint("p", tc.p), func(t *testing.T) {
			t.Parallel()
			if got := l.percentile(tc.p); got != tc.want {
				t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
	if latencies(nil).percentile(50) != 0 || median(nil) != 0 {
		t.Error("empty samples")
	}
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median = %v", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2 {
		t.Errorf("median of four = %v", got)
	}
	for n, want := range map[int64]string{64 << 20: "64 MiB", 1 << 20: "1 MiB", 40 << 10: "40 KiB", 100: "100 B", 1500: "1500 B"} {
		if got := sizeName(n); got != want {
			t.Errorf("sizeName(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestBaseline checks the echo and the stream against a server whose connection closes.
func TestBaseline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := startBaseline(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.dial(t.Context())
	if err != nil {
		b.close()
		t.Fatal(err)
	}
	for _, sz := range [][2]int{{1, 1}, {100, 5000}, {70000, 300}} {
		if err := c.roundTrip(t.Context(), sz[0], sz[1]); err != nil {
			t.Fatal(sz, err)
		}
	}
	for _, size := range []int64{0, 1, 65536, 200000} {
		if err := c.receiveStream(t.Context(), size, 65536); err != nil {
			t.Fatal(size, err)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("stream files left: %v", left)
	}
	c.close()
	if err := c.roundTrip(t.Context(), 10, 10); err == nil {
		t.Error("round trip on a closed connection")
	}
	b.close()
}
