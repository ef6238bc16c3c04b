package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
	"github.com/ansight-go/ansight/wire"
)

// BenchmarkCatalog answers tool.query index, definitions and full at 100, 1,000 and 10,000
// synthetic tools through the host's protocol client — the same query again and again
// (repeated), queries neither end answered before (first: another limit each time) and
// the index asked with its revisions (unchanged) —
// and the floor of the same bytes (captured from the session), reporting CPU per query
// (both ends are in this process).
func BenchmarkCatalog(b *testing.B) {
	ctx := b.Context()
	dir := b.TempDir()
	h, err := startLocalHost(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer h.close()
	base, err := startBaseline(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(base.close)
	echo, err := base.dial(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(echo.close)
	fl, err := startFloor(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(fl.close)
	for _, n := range []int{100, 1000, 10000} {
		d, err := h.connectDemo(ctx, fmt.Sprintf("com.ansight.bench.catalog%d", n), n)
		if err != nil {
			b.Fatal(err)
		}
		for _, detail := range []string{wire.DetailIndex, wire.DetailDefinitions, wire.DetailFull} {
			q := wire.Query{Detail: detail}
			cat, err := d.client.Query(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			if detail == wire.DetailIndex {
				// The answer of an unchanged catalog to a host that holds its revisions.
				same := wire.Query{Detail: detail, IfRevision: cat.Revision, IfAvailabilityRevision: cat.AvailabilityRevision}
				got, err := d.client.Query(ctx, same)
				if err != nil {
					b.Fatal(err)
				}
				answer, err := wire.Marshal(got)
				if err != nil {
					b.Fatal(err)
				}
				reqSize, respSize, err := messageSizes(d.sessionID, wire.TypeQuery, wire.TypeCatalog, same, answer)
				if err != nil {
					b.Fatal(err)
				}
				b.Run(fmt.Sprintf("tools=%d/unchanged", n), func(b *testing.B) {
					benchOps(b, func(ctx context.Context) error {
						cat, err := d.client.Query(ctx, same)
						if err == nil && !cat.Unchanged {
							err = fmt.Errorf("expected the unchanged answer")
						}
						return err
					})
				})
				b.Run(fmt.Sprintf("tools=%d/unchanged-echo", n), func(b *testing.B) {
					benchOps(b, func(ctx context.Context) error { return echo.roundTrip(ctx, reqSize, respSize) })
				})
			}
			if cat.TotalCount == nil { // definitions do not say
				cat.TotalCount = new(n)
			}
			answer, err := wire.Marshal(cat)
			if err != nil {
				b.Fatal(err)
			}
			reqSize, respSize, err := messageSizes(d.sessionID, wire.TypeQuery, wire.TypeCatalog, q, answer)
			if err != nil {
				b.Fatal(err)
			}
			name := fmt.Sprintf("tools=%d/%s", n, detail)
			ex, err := h.tap.exchangeOf(ctx, func(ctx context.Context) error { _, err := d.client.Query(ctx, q); return err })
			if err != nil {
				b.Fatal(err)
			}
			b.Run(name+"/repeated", func(b *testing.B) {
				benchOps(b, func(ctx context.Context) error { _, err := d.client.Query(ctx, q); return err })
			})
			total := min(*cat.TotalCount, wire.MaxQueryLimit)
			var next int
			b.Run(name+"/first", func(b *testing.B) {
				benchOps(b, func(ctx context.Context) error {
					next++
					_, err := d.client.Query(ctx, wire.Query{Detail: detail, Limit: total - next%firstLimits})
					return err
				})
			})
			b.Run(name+"/floor", func(b *testing.B) {
				benchOps(b, func(ctx context.Context) error { return fl.roundTrip(ctx, ex) })
			})
			b.Run(name+"/echo", func(b *testing.B) {
				benchOps(b, func(ctx context.Context) error { return echo.roundTrip(ctx, reqSize, respSize) })
			})
		}
		d.close()
	}
}

// benchOps runs op b.N times from one goroutine and reports the CPU time per operation.
func benchOps(b *testing.B, op func(context.Context) error) {
	ctx := b.Context()
	b.ReportAllocs()
	cpu := usage.ProcessCPU()
	b.ResetTimer()
	for range b.N {
		if err := op(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(micros(usage.ProcessCPU()-cpu)/float64(b.N), "cpu-µs/op")
}
