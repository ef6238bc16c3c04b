package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
	"github.com/ansight-go/ansight/host/control"
	"github.com/ansight-go/ansight/wire"
)

// The benchmarks below measure one small call end to end (host client, loopback WebSocket,
// app runtime, back), the floor (the exact bytes of that call and its answer echoed over
// coder/websocket, no allocation) and the older echo of the same sizes, with 1 and 8
// callers, and report the CPU time of the whole process per call (host, app and callers
// together) next to the wall time and the allocations. They are what the protocol's call
// path is tuned with: compare two builds with benchstat, e.g.
//
//	go test -run '^$' -bench 'SmallCall|Floor' -count 8 ./cmd/ansight/internal/bench > new.txt
//
// The target is on the ratio of CPU per call, call to floor: BenchmarkCallVsFloor.

// BenchmarkSmallCall calls the demo app's app.get_state through the host's protocol client.
func BenchmarkSmallCall(b *testing.B) {
	_, d := startDemo(b, b.TempDir(), "com.ansight.bench")
	defer d.close()
	call := wire.Call{ToolID: DefaultTool, Arguments: emptyArguments}
	op := func(ctx context.Context) error { _, err := d.call(ctx, call); return err }
	benchCallers(b, op)
}

// BenchmarkFloor is BenchmarkSmallCall's floor: the exact bytes of the call and its answer
// echoed over coder/websocket, without allocating.
func BenchmarkFloor(b *testing.B) { benchCallers(b, smallCallEchoes(b).floor) }

// BenchmarkEcho is the older baseline: an echo of the same message sizes over package
// transport.
func BenchmarkEcho(b *testing.B) { benchCallers(b, smallCallEchoes(b).echo) }

// smallCallEchoes captures the small call's bytes on a demo app it closes again.
func smallCallEchoes(b *testing.B) callPair {
	dir := b.TempDir()
	h, d := startDemo(b, dir, "com.ansight.bench")
	defer d.close()
	return smallCall(b, h, d, dir)
}

// smallCall returns the demo app's small call and its baselines, as RunLocal measures
// them, with the floor and the older echo closed when tb ends.
func smallCall(tb testing.TB, h *localHost, d *demoApp, dir string) callPair {
	tb.Helper()
	base, err := startBaseline(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(base.close)
	r := &run{tap: h.tap}
	if r.echo, err = base.dial(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(r.echo.close)
	if r.floor, err = startFloor(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(r.floor.close)
	m, err := r.callAndEcho(tb.Context(), d, wire.Call{ToolID: DefaultTool, Arguments: emptyArguments})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// benchCallers runs op b.N times from 1, then 8 goroutines, after a warm-up, and reports
// the process's CPU time per operation.
func benchCallers(b *testing.B, op func(context.Context) error) {
	ctx := b.Context()
	for range 200 {
		if err := op(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for _, callers := range []int{1, 8} {
		b.Run(map[int]string{1: "callers=1", 8: "callers=8"}[callers], func(b *testing.B) {
			b.ReportAllocs()
			var wg sync.WaitGroup
			cpu := usage.ProcessCPU()
			reads, writes, counted := ioCalls()
			b.ResetTimer()
			for c := range callers {
				wg.Go(func() {
					for i := c; i < b.N; i += callers {
						if err := op(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(micros(usage.ProcessCPU()-cpu)/float64(b.N), "cpu-µs/op")
			if r, w, ok := ioCalls(); ok && counted {
				b.ReportMetric(float64(r-reads)/float64(b.N), "reads/op")
				b.ReportMetric(float64(w-writes)/float64(b.N), "writes/op")
			}
		})
	}
}

// BenchmarkCallVsFloor is the target's figure as go test measures it: rounds of small
// calls, of their floor and of the older echo alternate in one process, as in ansight
// bench, so that the load of other processes falls on all alike. It reports the CPU per
// call of each (cpu-µs/call, cpu-µs/floor, cpu-µs/echo) beside its wall time per call
// (wall-µs/…: the rounds' wall time over their calls, the inverse of throughput; ns/op
// mixes all sides' rounds), and the median of the rounds' ratios of CPU to the floor
// (cpu-ratio) and to the older echo (cpu-ratio-echo), 1 and 8 callers.
func BenchmarkCallVsFloor(b *testing.B) {
	ctx := b.Context()
	dir := b.TempDir()
	h, d := startDemo(b, dir, "com.ansight.bench")
	defer d.close()
	m := smallCall(b, h, d, dir)
	ops := []func(context.Context) error{m.op, m.floor, m.echo}
	for _, op := range ops { // warm up
		if _, _, err := timed(ctx, 200, 1, op); err != nil {
			b.Fatal(err)
		}
	}
	const rounds = 10
	for _, callers := range []int{1, 8} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			n := max(1, b.N/rounds)
			var cpu, wall [3]time.Duration
			var ratios [2][]float64
			for range rounds {
				var perOp [3]float64
				for i, op := range ops {
					_, used, err := timed(ctx, n, callers, op)
					if err != nil {
						b.Fatal(err)
					}
					cpu[i] += used.Process.D()
					wall[i] += used.Wall.D()
					perOp[i] = used.PerOp(n)
				}
				ratios[0] = append(ratios[0], perOp[0]/perOp[1])
				ratios[1] = append(ratios[1], perOp[0]/perOp[2])
			}
			for i, name := range []string{"call", "floor", "echo"} {
				b.ReportMetric(micros(cpu[i])/float64(n*rounds), "cpu-µs/"+name)
				b.ReportMetric(micros(wall[i])/float64(n*rounds), "wall-µs/"+name)
			}
			b.ReportMetric(median(ratios[0]), "cpu-ratio")
			b.ReportMetric(median(ratios[1]), "cpu-ratio-echo")
		})
	}
}

// ioCalls returns the read and write system calls this process made so far (Linux's
// /proc/self/io syscr and syscw; ok false elsewhere): both ends' socket reads and writes,
// including reads that found nothing.
func ioCalls() (reads, writes int64, ok bool) {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, 0, false
	}
	var nr, nw int
	for line := range strings.Lines(string(data)) {
		name, value, _ := strings.Cut(strings.TrimSpace(line), ": ")
		n, err := strconv.ParseInt(value, 10, 64)
		switch {
		case err != nil:
		case name == "syscr":
			reads, nr = n, nr+1
		case name == "syscw":
			writes, nw = n, nw+1
		}
	}
	return reads, writes, nr == 1 && nw == 1
}

// BenchmarkUITapVsCalls is target 3 as go test measures it: rounds of a UI tap through the
// host's in-process API (capture, resolve, act) and of the two calls it stands for made
// directly through the same API alternate; it reports the CPU per operation of each
// (cpu-µs/tap, cpu-µs/calls: host and app, getrusage) and the median of the rounds' ratios
// (cpu-ratio).
func BenchmarkUITapVsCalls(b *testing.B) {
	ctx := b.Context()
	h, d := startDemo(b, b.TempDir(), "com.ansight.bench.ui")
	defer d.close()
	tap, direct, err := uiTapOps(ctx, control.New(h.srv, control.Options{}), d.sessionID)
	if err != nil {
		b.Fatal(err)
	}
	alternateBench(b, 10, tap, direct, "tap", "calls")
}

// alternateBench runs rounds of op and base in turn, b.N/rounds operations each, and
// reports each side's CPU per operation (cpu-µs/<name>) and the median of the rounds'
// ratios (cpu-ratio).
func alternateBench(b *testing.B, rounds int, op, base func(context.Context) error, opName, baseName string) {
	ctx := b.Context()
	for _, f := range []func(context.Context) error{op, base} { // warm up
		if _, _, err := timed(ctx, 20, 1, f); err != nil {
			b.Fatal(err)
		}
	}
	n := max(1, b.N/rounds)
	var cpu [2]time.Duration
	ratios := make([]float64, 0, rounds)
	for range rounds {
		var perOp [2]float64
		for i, f := range []func(context.Context) error{op, base} {
			_, used, err := timed(ctx, n, 1, f)
			if err != nil {
				b.Fatal(err)
			}
			cpu[i] += used.Process.D()
			perOp[i] = used.PerOp(n)
		}
		ratios = append(ratios, perOp[0]/perOp[1])
	}
	b.ReportMetric(micros(cpu[0])/float64(n*rounds), "cpu-µs/"+opName)
	b.ReportMetric(micros(cpu[1])/float64(n*rounds), "cpu-µs/"+baseName)
	b.ReportMetric(median(ratios), "cpu-ratio")
}

// BenchmarkMCPCall is target 4 as go test measures it, with `ansight bench`'s own rounds
// (mcpPaths.measure): 20 rounds of b.N/20 calls of each path in turn — ansight_call_app_tool
// through the MCP bridge (an in-memory client, the bridge over the control socket), the
// same call through hostapi.Client over the socket, the MCP SDK's floor (an in-memory tool
// that returns at once), the floor with the bridge's arguments and answer, and the bridge
// over the SDK's transport. It reports each one's CPU per call (cpu-µs/bridge, /socket,
// /sdk, /sdk-same, /bridge-sdkio) and the median round's share of the bridge's own
// (bridge − socket − sdk) in the bridge's total (own-share, the target), with its quartiles
// (own-share-q1, -q3); the share left beyond the SDK's handling of the bridge's bytes
// (bridge − socket − sdk-same: own-beyond-bytes); and the bridge's own share over the SDK's
// transport (mcp.IOTransport, what ansight mcp used before LineTransport: own-share-sdkio).
func BenchmarkMCPCall(b *testing.B) {
	p := benchMCP(b)
	const rounds = 20
	m, err := p.measure(b.Context(), rounds, max(1, b.N/rounds))
	if err != nil {
		b.Fatal(err)
	}
	for i, name := range []string{"bridge", "socket", "sdk", "sdk-same", "bridge-sdkio"} {
		b.ReportMetric(mean(m.rounds.ops[i].cpu), "cpu-µs/"+name)
	}
	q1, q3 := quartiles(m.own)
	b.ReportMetric(median(m.own), "own-share")
	b.ReportMetric(q1, "own-share-q1")
	b.ReportMetric(q3, "own-share-q3")
	b.ReportMetric(median(m.beyond), "own-beyond-bytes")
	b.ReportMetric(median(m.ownSDKIO), "own-share-sdkio")
}

// benchMCP starts the demo, a host over it and the MCP paths BenchmarkMCPCall and
// BenchmarkMCPPath measure, all stopped when b ends.
func benchMCP(b *testing.B) *mcpPaths {
	h, d := startDemo(b, b.TempDir(), "com.ansight.bench.mcp")
	b.Cleanup(d.close)
	dir, err := os.MkdirTemp("", "mcp-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	p, err := startMCP(b.Context(), control.New(h.srv, control.Options{}), dir, d.sessionID, DefaultTool)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.close)
	return p
}
