package diag

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/app/telemetry"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// Tool ids.
const (
	RuntimeToolID     = "diag.runtime"
	MetricsToolID     = "diag.metrics"
	GoroutinesToolID  = "diag.goroutines"
	HeapProfileToolID = "diag.heap_profile"
	CPUProfileToolID  = "diag.cpu_profile"
	LogTailToolID     = "diag.log_tail"
)

// Bounds.
const (
	DefaultCPUProfile = 5 * time.Second
	MaxCPUProfile     = 30 * time.Second
	MaxGoroutineDump  = 4 << 20
	MaxLogTail        = 1000
)

// Options configures Register.
type Options struct {
	// Telemetry, when set, provides diag.log_tail from its slog handler's recent lines.
	Telemetry *telemetry.Telemetry
}

// Codes of diag tool failures.
const (
	CodeProfileBusy   wire.Code = "diag_profile_busy"   // a CPU profile is already running
	CodeProfileFailed wire.Code = "diag_profile_failed" // the profiler could not start or write
)

var started = time.Now()

// Register adds the diagnostics tools to a.
func Register(a *app.App, opts Options) error {
	d := &diag{}
	regs := []func() error{
		func() error {
			return app.Register(a, def(RuntimeToolID, "Go runtime info",
				"Go version, platform, CPUs, GOMAXPROCS, process id, uptime and the binary's build information.",
				"go runtime version build info modules vcs revision uptime pid", wire.PolicyRead),
				func(context.Context, *app.Call, struct{}) (runtimeInfo, error) { return readRuntime(), nil })
		},
		func() error {
			return app.Register(a, def(MetricsToolID, "Go runtime metrics",
				"A snapshot of runtime/metrics: memory classes, GC, scheduler, goroutines; histograms as count and quantiles.",
				"go metrics memory heap gc scheduler goroutines runtime/metrics", wire.PolicyRead),
				func(_ context.Context, _ *app.Call, in metricsArgs) (metricsResult, error) {
					return readMetrics(in.Prefix), nil
				})
		},
		func() error {
			return app.Register(a, def(GoroutinesToolID, "Goroutine dump",
				"Every goroutine's state and stack (as a panic prints them), bounded to 4 MiB.",
				"go goroutines stacks dump deadlock leak threads", wire.PolicyRead),
				func(context.Context, *app.Call, struct{}) (goroutinesResult, error) { return readGoroutines(), nil })
		},
		func() error {
			return app.Register(a, def(HeapProfileToolID, "Heap profile",
				"Takes a pprof heap profile (in-use and allocated objects and bytes by call site) and keeps it as an artifact: "+
					"the result points at it, artifacts.request streams it; open it with `go tool pprof`.",
				"go pprof heap memory profile allocations", wire.PolicyRead),
				func(_ context.Context, c *app.Call, in struct{}) (profileResult, error) { return d.heap(c) })
		},
		func() error {
			return app.Register(a, withArgs(def(CPUProfileToolID, "CPU profile",
				"Profiles the process's CPU use for seconds (1-30, default 5) and keeps the pprof file as an artifact: "+
					"the result points at it, artifacts.request streams it; one profile at a time.",
				"go pprof cpu profile performance hot path", wire.PolicyWrite), cpuArgsSchema),
				func(ctx context.Context, c *app.Call, in cpuArgs) (profileResult, error) { return d.cpu(ctx, c, in) })
		},
	}
	if tel := opts.Telemetry; tel != nil {
		regs = append(regs, func() error {
			return app.Register(a, withArgs(def(LogTailToolID, "Log tail",
				"The most recent log lines the app logged through its telemetry slog handler, oldest first.",
				"logs tail recent lines slog", wire.PolicyRead), logArgsSchema),
				func(_ context.Context, _ *app.Call, in logArgs) (logResult, error) {
					n := MaxLogTail
					if in.Lines != nil { // within the schema's bounds
						n = *in.Lines
					}
					lines := tel.LogTail(n)
					return logResult{Lines: lines, Count: len(lines)}, nil
				})
		})
	}
	for _, r := range regs {
		if err := r(); err != nil {
			return fmt.Errorf("diag: %w", err)
		}
	}
	if err := files.RegisterArtifacts(a, d.provider()); err != nil {
		return fmt.Errorf("diag: %w", err)
	}
	return nil
}

func def(id, name, desc, keywords string, p wire.Policy) catalog.Definition {
	return catalog.Definition{ID: id, Name: name, Description: desc, Category: "diagnostics", Policy: p,
		Keywords: keywords}
}

// withArgs gives a definition an arguments schema written out, for bounds the schema
// inferred from the Go type cannot state: the call is then refused with the bound it
// broke (arguments_invalid), rather than run with a value silently clamped.
func withArgs(d catalog.Definition, schema string) catalog.Definition {
	d.ArgumentsSchema = jsontext.Value(schema)
	return d
}

var (
	cpuArgsSchema = fmt.Sprintf(`{"type":"object","properties":{"seconds":{"type":"integer","minimum":1,"maximum":%d,"default":%d,`+
		`"description":"How long to profile, in seconds."}}}`, int(MaxCPUProfile/time.Second), int(DefaultCPUProfile/time.Second))
	logArgsSchema = fmt.Sprintf(`{"type":"object","properties":{"lines":{"type":"integer","minimum":1,"maximum":%d,`+
		`"description":"How many recent lines (default: all kept)."}}}`, MaxLogTail)
)

type diag struct {
	cpuMu sync.Mutex // held while a CPU profile runs
	kept  profiles   // what the profile tools captured, served by artifacts.request
}

type runtimeInfo struct {
	GoVersion   string            `json:"goVersion"`
	GOOS        string            `json:"goos"`
	GOARCH      string            `json:"goarch"`
	NumCPU      int               `json:"numCpu"`
	GOMAXPROCS  int               `json:"gomaxprocs"`
	PID         int               `json:"pid"`
	Uptime      float64           `json:"uptimeSeconds"`
	Goroutines  int               `json:"goroutines"`
	MainPath    string            `json:"mainPath,omitempty"`
	MainVersion string            `json:"mainVersion,omitempty"`
	Settings    map[string]string `json:"settings,omitempty"`
	Deps        []string          `json:"deps,omitempty"`
}

func readRuntime() runtimeInfo {
	in := runtimeInfo{GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, NumCPU: runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), PID: os.Getpid(), Uptime: math.Round(time.Since(started).Seconds()*1000) / 1000,
		Goroutines: runtime.NumGoroutine()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		in.MainPath, in.MainVersion = bi.Main.Path, bi.Main.Version
		in.Settings = map[string]string{}
		for _, s := range bi.Settings {
			in.Settings[s.Key] = s.Value
		}
		for _, d := range bi.Deps {
			in.Deps = append(in.Deps, d.Path+"@"+d.Version)
		}
	}
	return in
}

type metricsArgs struct {
	Prefix string `json:"prefix,omitzero" jsonschema:"Only metrics whose name starts with this, e.g. /memory/ or /gc/."`
}

type metric struct {
	Name        string    `json:"name"`
	Unit        string    `json:"unit,omitempty"`
	Description string    `json:"description,omitempty"`
	Value       *float64  `json:"value,omitempty"`
	Count       *uint64   `json:"count,omitempty"`
	Quantiles   []float64 `json:"quantiles,omitempty"` // p50, p90, p99, max
}

type metricsResult struct {
	Metrics []metric `json:"metrics"`
}

func readMetrics(prefix string) metricsResult {
	descs := metrics.All()
	var samples []metrics.Sample
	var kept []metrics.Description
	for _, d := range descs {
		if strings.HasPrefix(d.Name, prefix) {
			samples = append(samples, metrics.Sample{Name: d.Name})
			kept = append(kept, d)
		}
	}
	metrics.Read(samples)
	out := metricsResult{Metrics: []metric{}}
	for i, s := range samples {
		name, unit, _ := strings.Cut(s.Name, ":")
		m := metric{Name: name, Unit: unit, Description: kept[i].Description}
		switch s.Value.Kind() {
		case metrics.KindUint64:
			v := float64(s.Value.Uint64())
			m.Value = &v
		case metrics.KindFloat64:
			v := s.Value.Float64()
			m.Value = &v
		case metrics.KindFloat64Histogram:
			m.Count, m.Quantiles = summarize(s.Value.Float64Histogram())
		default:
			continue
		}
		out.Metrics = append(out.Metrics, m)
	}
	return out
}

// summarize gives a histogram's count and its p50, p90, p99 and max (bucket upper bounds;
// infinite bounds fall back to the lower one).
func summarize(h *metrics.Float64Histogram) (*uint64, []float64) {
	var total uint64
	for _, c := range h.Counts {
		total += c
	}
	if total == 0 {
		return &total, nil
	}
	bound := func(i int) float64 {
		if b := h.Buckets[i+1]; !math.IsInf(b, 0) {
			return b
		}
		return h.Buckets[i]
	}
	var qs []float64
	for _, q := range []float64{0.5, 0.9, 0.99, 1} {
		want := uint64(math.Ceil(q * float64(total)))
		var acc uint64
		for i, c := range h.Counts {
			acc += c
			if acc >= want {
				qs = append(qs, bound(i))
				break
			}
		}
	}
	return &total, qs
}

type goroutinesResult struct {
	Count     int    `json:"count"`
	Dump      string `json:"dump"`
	Truncated bool   `json:"truncated,omitempty"`
}

func readGoroutines() goroutinesResult {
	var b bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&limitWriter{w: &b, n: MaxGoroutineDump}, 2)
	r := goroutinesResult{Count: runtime.NumGoroutine(), Dump: b.String()}
	if b.Len() >= MaxGoroutineDump {
		r.Truncated = true
		r.Dump = strings.ToValidUTF8(r.Dump, "")
	}
	return r
}

// limitWriter keeps the first n bytes and silently discards the rest (the profile writer
// must not fail half way).
type limitWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// cpuArgs are diag.cpu_profile's arguments (cpuArgsSchema).
type cpuArgs struct {
	Seconds *int `json:"seconds,omitzero"`
}

type profileResult struct {
	Kind      string  `json:"kind" jsonschema:"heap or cpu"`
	Seconds   float64 `json:"seconds,omitempty" jsonschema:"how long a CPU profile ran"`
	SizeBytes int64   `json:"sizeBytes"`
	Hint      string  `json:"hint"`
	// Artifact points at the kept profile: its bytes come with artifacts.request, which
	// every host receives (a transfer in this result would not reach the official one).
	Artifact files.ArtifactRef `json:"artifact"`
}

func (d *diag) heap(c *app.Call) (profileResult, error) {
	b, err := heapProfile()
	if err != nil {
		return profileResult{}, err
	}
	return d.keep(c, "heap", 0, b), nil
}

// heapProfile writes the runtime's heap profile.
func heapProfile() ([]byte, error) {
	var b bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&b, 0); err != nil {
		return nil, &wire.Error{Code: CodeProfileFailed, Message: "writing the heap profile failed: " + err.Error()}
	}
	return b.Bytes(), nil
}

func (d *diag) cpu(ctx context.Context, c *app.Call, in cpuArgs) (profileResult, error) {
	dur := DefaultCPUProfile
	if in.Seconds != nil { // within the schema's bounds
		dur = time.Duration(*in.Seconds) * time.Second
	}
	if !d.cpuMu.TryLock() {
		return profileResult{}, &wire.Error{Code: CodeProfileBusy, Message: "a CPU profile is already running; try again when it ends"}
	}
	defer d.cpuMu.Unlock()
	var b bytes.Buffer
	if err := pprof.StartCPUProfile(&b); err != nil {
		// Another part of the process (net/http/pprof, a test) holds the profiler.
		return profileResult{}, &wire.Error{Code: CodeProfileBusy, Message: "the CPU profiler is in use: " + err.Error()}
	}
	start := time.Now()
	t := time.NewTimer(dur)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	pprof.StopCPUProfile()
	if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return profileResult{}, err
	}
	return d.keep(c, "cpu", time.Since(start).Seconds(), b.Bytes()), nil
}

// keep keeps a captured profile and returns the result that points at it.
func (d *diag) keep(c *app.Call, kind string, secs float64, data []byte) profileResult {
	p := d.kept.add(kind, c.Now(), math.Round(secs*1000)/1000, data)
	return profileResult{Kind: kind, Seconds: p.seconds, SizeBytes: int64(len(data)),
		Hint:     fmt.Sprintf("request it with %s (providerId %q, artifactId %q), then: go tool pprof %s", files.RequestArtifactToolID, ProviderID, p.id, p.fileName),
		Artifact: files.NewArtifactRef(ProviderID, p.id, p.fileName, pprofMimeType, int64(len(data)))}
}

// logArgs are diag.log_tail's arguments (logArgsSchema).
type logArgs struct {
	Lines *int `json:"lines,omitzero"`
}

type logResult struct {
	Count int      `json:"count"`
	Lines []string `json:"lines"`
}
