package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

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
func BenchmarkEcho(b *testing.B) { benchEcho(b, (*baseline).dial) }

// BenchmarkPlainEcho is the same echo over coder/websocket used directly.
func BenchmarkPlainEcho(b *testing.B) { benchEcho(b, (*baseline).dialPlain) }

func benchEcho(b *testing.B, dial func(*baseline, context.Context) (*echoClient, error)) {
	ctx := b.Context()
	dir := b.TempDir()
	_, d := startDemo(b, dir, "com.ansight.bench")
	call := wire.Call{ToolID: DefaultTool, Arguments: emptyArguments}
	out, err := d.call(ctx, call)
	if err != nil {
		b.Fatal(err)
	}
	reqSize, respSize, err := messageSizes(d.id(), wire.TypeCall, wire.TypeResult, call, out.payload)
	d.close()
	if err != nil {
		b.Fatal(err)
	}
	base, err := startBaseline(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer base.close()
	echo, err := dial(base, ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer echo.close()
	benchCallers(b, func(ctx context.Context) error { return echo.roundTrip(ctx, reqSize, respSize) })
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
			cpu := processCPU()
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
			b.ReportMetric(micros(processCPU()-cpu)/float64(b.N), "cpu-µs/op")
		})
	}
}

// BenchmarkCallVsEcho is the target's figure as go test measures it: rounds of small calls
// and of their echo alternate in one process, as in ansight bench, so that the load of
// other processes falls on both alike; it reports the CPU per call of each (cpu-µs/call,
// cpu-µs/echo) and the median of the rounds' ratios (cpu-ratio), 1 and 8 callers.
func BenchmarkCallVsEcho(b *testing.B) {
	ctx := b.Context()
	dir := b.TempDir()
	_, d := startDemo(b, dir, "com.ansight.bench")
	defer d.close()
	call := wire.Call{ToolID: DefaultTool, Arguments: emptyArguments}
	out, err := d.call(ctx, call)
	if err != nil {
		b.Fatal(err)
	}
	reqSize, respSize, err := messageSizes(d.id(), wire.TypeCall, wire.TypeResult, call, out.payload)
	if err != nil {
		b.Fatal(err)
	}
	base, err := startBaseline(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer base.close()
	echo, err := base.dial(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer echo.close()
	ops := []func(context.Context) error{
		func(ctx context.Context) error { _, err := d.call(ctx, call); return err },
		func(ctx context.Context) error { return echo.roundTrip(ctx, reqSize, respSize) },
	}
	for _, op := range ops { // warm up
		if _, _, err := timed(ctx, 200, 1, op); err != nil {
			b.Fatal(err)
		}
	}
	const rounds = 10
	for _, callers := range []int{1, 8} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			n := max(1, b.N/rounds)
			var cpu [2]time.Duration
			ratios := make([]float64, 0, rounds)
			for range rounds {
				var perOp [2]float64
				for i, op := range ops {
					_, used, err := timed(ctx, n, callers, op)
					if err != nil {
						b.Fatal(err)
					}
					cpu[i] += used.process
					perOp[i] = used.perOp(n)
				}
				ratios = append(ratios, perOp[0]/perOp[1])
			}
			b.ReportMetric(micros(cpu[0])/float64(n*rounds), "cpu-µs/call")
			b.ReportMetric(micros(cpu[1])/float64(n*rounds), "cpu-µs/echo")
			b.ReportMetric(median(ratios), "cpu-ratio")
		})
	}
}
