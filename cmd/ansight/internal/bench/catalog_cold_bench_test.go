package bench

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// BenchmarkCatalogCold answers tool.query index, definitions and full at 100, 1,000 and
// 10,000 synthetic tools cold, reporting CPU per query (getrusage, both ends in this
// process):
//
//   - changed: the first query after the catalog changed — the app's guard goes from read
//     and write to full access and back (its critical tools appear and disappear, the
//     revision changes), so the app makes its answer anew (copying the compressed
//     stretches of the last one that list the same tools) and the host, holding an answer
//     of another revision, inflates and strictly decodes what it does not hold;
//   - new-app: the first query of a new demo app (its catalog not built yet) in a new
//     session of the host. Connecting is not measured: the CPU counts from after a
//     collection that follows the connection to the query's answer.
//
// It uses only what the bench package had at 24060c7 (startLocalHost, connectDemo and
// demoApp.app, micros, the host's protocol client), so the same file runs against that
// build's internal/bench for target 2's before and after (docs/performance.md, round 4,
// sixth pass).
func BenchmarkCatalogCold(b *testing.B) {
	ctx := b.Context()
	h, err := startLocalHost(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer h.close()
	apps := 0
	full := func(cat *wire.Catalog, err error) error {
		if err == nil && (cat.Unchanged || len(cat.Tools) == 0) {
			err = fmt.Errorf("expected a full catalog, got %d tools", len(cat.Tools))
		}
		return err
	}
	for _, n := range []int{100, 1000, 10000} {
		d, err := h.connectDemo(ctx, fmt.Sprintf("com.ansight.bench.changed%d", n), n)
		if err != nil {
			b.Fatal(err)
		}
		guards := [2]catalog.Guard{catalog.GuardFullAccess, catalog.GuardReadWrite}
		for _, detail := range []string{wire.DetailIndex, wire.DetailDefinitions, wire.DetailFull} {
			q := wire.Query{Detail: detail}
			b.Run(fmt.Sprintf("tools=%d/%s/changed", n, detail), func(b *testing.B) {
				b.ReportAllocs()
				cpu := coldCPU()
				for i := range b.N {
					if err := d.app.SetGuard(guards[i%2]); err != nil {
						b.Fatal(err)
					}
					if err := full(d.client.Query(ctx, q)); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(micros(coldCPU()-cpu)/float64(b.N), "cpu-µs/op")
			})
			b.Run(fmt.Sprintf("tools=%d/%s/new-app", n, detail), func(b *testing.B) {
				b.ReportAllocs()
				var cpu time.Duration
				b.StopTimer()
				for range b.N {
					apps++
					d, err := h.connectDemo(ctx, fmt.Sprintf("com.ansight.bench.cold%d", apps), n)
					if err != nil {
						b.Fatal(err)
					}
					runtime.GC()
					start := coldCPU()
					b.StartTimer()
					cat, err := d.client.Query(ctx, q)
					b.StopTimer()
					cpu += coldCPU() - start
					d.close()
					if err := full(cat, err); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(micros(cpu)/float64(b.N), "cpu-µs/op")
			})
		}
		d.close()
	}
}

// coldCPU is this process's CPU time (user and system, getrusage), both ends included.
func coldCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
