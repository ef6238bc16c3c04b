package bench

import (
	"context"
	"fmt"

	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/wire"
)

// catalogs measures the three catalog answers at each tool count, each with a demo app of
// its own: the index and the definitions against a WebSocket echo of the same bytes, the
// unchanged answer against the index it saves.
func (r *run) catalogs(ctx context.Context, h *localHost) error {
	for _, n := range r.opts.ToolCounts {
		r.opts.progress(fmt.Sprintf("catalog, %d tools", n))
		d, err := h.connectDemo(ctx, fmt.Sprintf("com.ansight.bench.catalog%d", n), n)
		if err != nil {
			return err
		}
		err = r.catalog(ctx, d.client, d.sessionID, n)
		d.close()
		if err != nil {
			return fmt.Errorf("catalog, %d tools: %w", n, err)
		}
	}
	return nil
}

func (r *run) catalog(ctx context.Context, c *tools.Client, sessionID string, n int) error {
	index := wire.Query{Detail: wire.DetailIndex}
	first, err := c.Query(ctx, index)
	if err != nil {
		return err
	}
	unchanged := wire.Query{Detail: wire.DetailIndex, IfRevision: first.Revision, IfAvailabilityRevision: first.AvailabilityRevision}
	definitions := wire.Query{Detail: wire.DetailDefinitions}
	total := len(first.Tools)
	if first.TotalCount != nil {
		total = *first.TotalCount
	}
	what := fmt.Sprintf("%d tools", n)

	// measure times q against an echo of its messages' sizes; check verifies the answer.
	measure := func(q wire.Query, check func(*wire.Catalog) error) (*pair, *wire.Catalog, int, error) {
		cat, err := c.Query(ctx, q)
		if err == nil {
			err = check(cat)
		}
		if err != nil {
			return nil, nil, 0, err
		}
		answer, err := wire.Marshal(cat)
		if err != nil {
			return nil, nil, 0, err
		}
		reqSize, respSize, err := messageSizes(sessionID, wire.TypeQuery, wire.TypeCatalog, q, answer)
		if err != nil {
			return nil, nil, 0, err
		}
		op := func(ctx context.Context) error {
			cat, err := c.Query(ctx, q)
			if err == nil {
				err = check(cat)
			}
			return err
		}
		echo := func(ctx context.Context) error { return r.echo.roundTrip(ctx, reqSize, respSize) }
		p, err := r.alternate(ctx, r.opts.Queries, 1, op, echo)
		return p, cat, respSize, err
	}
	full := func(cat *wire.Catalog) error {
		if cat.Unchanged || len(cat.Tools) == 0 {
			return fmt.Errorf("bench: expected a full catalog, got %d tools (unchanged %t)", len(cat.Tools), cat.Unchanged)
		}
		return nil
	}

	idx, idxCat, idxBytes, err := measure(index, full)
	if err != nil {
		return err
	}
	r.report.add(Figure{Group: "catalog", Name: "index, " + what, Unit: UnitMicros,
		Value: micros(idx.lat.percentile(50)), Baseline: "WebSocket echo, same bytes", BaselineValue: micros(idx.baseLat.percentile(50)),
		Note: fmt.Sprintf("%d of %d visible tools (the query limit), %s on the wire", len(idxCat.Tools), total, formatValue(float64(idxBytes), UnitBytes))})

	defs, defsCat, defsBytes, err := measure(definitions, full)
	if err != nil {
		return err
	}
	r.report.add(Figure{Group: "catalog", Name: "definitions, " + what, Unit: UnitMicros,
		Value: micros(defs.lat.percentile(50)), Baseline: "WebSocket echo, same bytes", BaselineValue: micros(defs.baseLat.percentile(50)),
		Note: fmt.Sprintf("%d definitions with schemas, %s on the wire", len(defsCat.Tools), formatValue(float64(defsBytes), UnitBytes))})

	same, _, sameBytes, err := measure(unchanged, func(cat *wire.Catalog) error {
		if !cat.Unchanged || len(cat.Tools) != 0 || cat.AvailabilityRevision != "" {
			return fmt.Errorf("bench: expected the unchanged answer, got %d tools (unchanged %t)", len(cat.Tools), cat.Unchanged)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var target *Target
	if n >= 10000 {
		target = r.target(AtMost, 1.0/50)
	}
	r.report.add(Figure{Group: "catalog", Name: "unchanged, " + what, Unit: UnitMicros,
		Value: micros(same.lat.percentile(50)), Baseline: "index, same catalog", BaselineValue: micros(idx.lat.percentile(50)),
		Target: target,
		Note:   fmt.Sprintf("%d B on the wire; WebSocket echo of the same bytes: %s", sameBytes, formatValue(micros(same.baseLat.percentile(50)), UnitMicros))})
	return nil
}
