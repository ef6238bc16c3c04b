package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
	"github.com/ansight-go/ansight/wire"
)

// The benchmarks below measure one small call end to end (host client, loopback WebSocket,
// app runtime, back) and the WebSocket echo of the same bytes, with 1 and 8 callers, and
// report the CPU time of the whole process per call (host, app and callers together) next
// to the wall time and the allocations. They are what the protocol's call path is tuned
// with: compare two builds with benchstat, e.g.
//
//	go test -run '^$' -bench 'SmallCall|Echo' -count 8 ./internal/bench > new.txt
//
// The targets are on the ratio of cpu-µs/op, call to echo, median of 5 runs.

// BenchmarkSmallCall calls the demo app's app.get_state through the host's protocol client.
func BenchmarkSmallCall(b *testing.B) {
	_, d := startDemo(b, b.TempDir(), "com.ansight.bench")
	defer d.close()
	call := wire.Call{ToolID: DefaultTool, Arguments: emptyArguments}
	op := func(ctx context.Context) error { _, err := d.call(ctx, call); return err }
	benchCallers(b, op)
}

// BenchmarkEcho is BenchmarkSmallCall's baseline: a bare WebSocket echo of the same message
// sizes over the same transport.
func BenchmarkEcho(b *testing.B) { benchCallers(b, smallCallEchoes(b).echo) }

// BenchmarkPlainEcho is the same echo over coder/websocket used directly.
func BenchmarkPlainEcho(b *testing.B) { benchCallers(b, smallCallEchoes(b).plain) }

// smallCallEchoes sizes the small call's echoes on a demo app it closes again.
func smallCallEchoes(b *testing.B) callPair {
	dir := b.TempDir()
	_, d := startDemo(b, dir, "com.ansight.bench")
	defer d.close()
	return smallCall(b, d, dir)
}

// smallCall returns the demo app's small call and its echoes, as RunLocal measures them,
// with a baseline in dir closed when tb ends.
func smallCall(tb testing.TB, d *demoApp, dir string) callPair {
	tb.Helper()
	base, err := startBaseline(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(base.close)
	r := &run{}
	for _, c := range []struct {
		dst  **echoClient
		dial func(*baseline, context.Context) (*echoClient, error)
	}{{&r.echo, (*baseline).dial}, {&r.plain, (*baseline).dialPlain}} {
		if *c.dst, err = c.dial(base, tb.Context()); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup((*c.dst).close)
	}
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
		})
	}
}

// BenchmarkCallVsEcho is the target's figure as go test measures it: rounds of small calls
// and of their echo alternate in one process, as in ansight bench, so that the load of
// other processes falls on both alike; it reports the CPU per call of each (cpu-µs/call,
// cpu-µs/echo) beside its wall time per call (wall-µs/call, wall-µs/echo: the rounds' wall
// time over their calls, the inverse of throughput; ns/op mixes both sides' rounds), and
// the median of the rounds' ratios of CPU (cpu-ratio), 1 and 8 callers.
func BenchmarkCallVsEcho(b *testing.B) {
	ctx := b.Context()
	dir := b.TempDir()
	_, d := startDemo(b, dir, "com.ansight.bench")
	defer d.close()
	m := smallCall(b, d, dir)
	ops := []func(context.Context) error{m.op, m.echo}
	for _, op := range ops { // warm up
		if _, _, err := timed(ctx, 200, 1, op); err != nil {
			b.Fatal(err)
		}
	}
	const rounds = 10
	for _, callers := range []int{1, 8} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			n := max(1, b.N/rounds)
			var cpu, wall [2]time.Duration
			ratios := make([]float64, 0, rounds)
			for range rounds {
				var perOp [2]float64
				for i, op := range ops {
					_, used, err := timed(ctx, n, callers, op)
					if err != nil {
						b.Fatal(err)
					}
					cpu[i] += used.Process.D()
					wall[i] += used.Wall.D()
					perOp[i] = used.PerOp(n)
				}
				ratios = append(ratios, perOp[0]/perOp[1])
			}
			b.ReportMetric(micros(cpu[0])/float64(n*rounds), "cpu-µs/call")
			b.ReportMetric(micros(cpu[1])/float64(n*rounds), "cpu-µs/echo")
			b.ReportMetric(micros(wall[0])/float64(n*rounds), "wall-µs/call")
			b.ReportMetric(micros(wall[1])/float64(n*rounds), "wall-µs/echo")
			b.ReportMetric(median(ratios), "cpu-ratio")
		})
	}
}
