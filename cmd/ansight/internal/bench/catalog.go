package bench

import (
	"context"
	"fmt"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/wire"
)

// catalogs measures the catalog answers at each tool count, each with a demo app of its
// own, in CPU per query (both ends): index, definitions and full, repeated, first asked
// and cold (the first after the catalog changed), against the floor of the same bytes; the
// unchanged answer against the cold index it saves.
func (r *run) catalogs(ctx context.Context, h *localHost) error {
	for _, n := range r.opts.ToolCounts {
		r.opts.progress(fmt.Sprintf("catalog, %d tools", n))
		d, err := h.connectDemo(ctx, fmt.Sprintf("com.ansight.bench.catalog%d", n), n)
		if err != nil {
			return err
		}
		err = r.catalog(ctx, d.client, d.sessionID, n, d.app.SetGuard)
		d.close()
		if err != nil {
			return fmt.Errorf("catalog, %d tools: %w", n, err)
		}
	}
	return nil
}

// repeatTarget is the bound on a repeated query's CPU against the floor of its bytes: 3 for
// the definitions answer at 1,000 tools and more (this round's target), 5 for the rest
// (last round's, against the older echo).
func repeatTarget(detail string, tools int) float64 {
	if detail == wire.DetailDefinitions && tools >= 1000 {
		return 3
	}
	return 5
}

// firstBaseline says what the first query cost at the round's start: target 2 is a first
// definitions query at 1,000 tools at least 2 × cheaper than at 24060c7, which only the
// two builds run alternating measure (the old one cannot run in this process), so the
// figures are those of docs/performance.md ("Round 4, fourth pass: target 2").
func firstBaseline(detail string, tools int) string {
	if detail != wire.DetailDefinitions || tools != 1000 {
		return "24060c7 beside it: docs/performance.md, round 4, fourth pass, target 2"
	}
	return "target 2, ≥ 2 × cheaper than at 24060c7: " + firstAt24060c7 + " (both builds alternating, docs/performance.md, round 4, fourth pass)"
}

// firstAt24060c7 is the first definitions query at 1,000 tools, 24060c7 → this round's
// code, measured alternating in one session.
const firstAt24060c7 = "6,286 → 1,493 µs, 4.2 × cheaper (5 runs each, load 11–13)"

// firstLimits is how many different limits the first-query measurement goes through: more
// answers than either end keeps, so that every query is one neither has answered before,
// and few enough that the answers keep nearly the size of the full one.
const firstLimits = 16

// coldGuards are the guards a cold query's catalog changes between: full access shows the
// demo app's critical tools, read and write (the default, restored after) hides them, and
// the revision differs, so that neither end holds anything of the answer.
var coldGuards = [2]catalog.Guard{catalog.GuardFullAccess, catalog.GuardReadWrite}

// coldBaseline says what the cold answer cost at the round's start; as for the first
// query, only the two builds run alternating measure it (BenchmarkCatalogCold, whose file
// also runs against 24060c7), so the figures are those of docs/performance.md.
func coldBaseline(detail string, tools int) string {
	if detail != wire.DetailDefinitions || tools != 1000 {
		return "24060c7 beside it: docs/performance.md, round 4, sixth pass, target 2"
	}
	return "target 2's cold answer against 24060c7: " + coldAt24060c7 + " (both builds alternating, docs/performance.md, round 4, sixth and seventh passes)"
}

// coldAt24060c7 is the cold definitions answer at 1,000 tools, 24060c7 → this round's
// code, measured alternating in one session (BenchmarkCatalogCold): the first query of a
// new app, whose tools' catalog parts are made as they are registered, and the first after
// the catalog changed, which this measurement toggles the guard for.
const coldAt24060c7 = "first of a new app 22,290 → 11,413 µs, 1.95 × cheaper (main before this pass 11,276 µs; medians of 8 runs each, load 1.3–1.7; sixth pass 2.06 ×); " +
	"after a change 10,016 → 4,719 µs, 2.12 × cheaper (8 runs each; seventh pass)"

// catalog measures the catalog answers of the app whose session c is; setGuard changes
// its catalog (the cold answer).
func (r *run) catalog(ctx context.Context, c *tools.Client, sessionID string, n int, setGuard func(catalog.Guard) error) error {
	first, err := c.Query(ctx, wire.Query{Detail: wire.DetailIndex})
	if err != nil {
		return err
	}
	total := len(first.Tools)
	if first.TotalCount != nil {
		total = *first.TotalCount
	}
	what := fmt.Sprintf("%d tools", n)

	// measure runs the queries qs (round robin), n per round, against the floor (the first
	// one's request and answer, captured) and the older echo of their sizes; check verifies
	// every answer.
	type measured struct {
		query, floor, echo *series
		rs                 *rounds
		cat                *wire.Catalog
		respBytes          int
	}
	// before, when set, runs before each measured query (in its CPU).
	measureWith := func(n int, before func() error, check func(*wire.Catalog) error, qs ...wire.Query) (*measured, error) {
		cat, err := c.Query(ctx, qs[0])
		if err == nil {
			err = check(cat)
		}
		if err != nil {
			return nil, err
		}
		answer, err := wire.Marshal(cat)
		if err != nil {
			return nil, err
		}
		ex, err := r.exchange(ctx, func(ctx context.Context) error { _, err := c.Query(ctx, qs[0]); return err },
			sessionID, wire.TypeQuery, wire.TypeCatalog, qs[0], answer)
		if err != nil {
			return nil, err
		}
		reqSize, respSize := len(ex.request), len(ex.answer)
		var next int
		op := func(ctx context.Context) error {
			if before != nil {
				if err := before(); err != nil {
					return err
				}
			}
			cat, err := c.Query(ctx, qs[next%len(qs)])
			next++
			if err == nil {
				err = check(cat)
			}
			return err
		}
		fl := func(ctx context.Context) error { return r.floor.roundTrip(ctx, ex) }
		echo := func(ctx context.Context) error { return r.echo.roundTrip(ctx, reqSize, respSize) }
		rs, err := r.alternate(ctx, n, 1, op, fl, echo)
		if err != nil {
			return nil, err
		}
		return &measured{query: &rs.ops[0], floor: &rs.ops[1], echo: &rs.ops[2], rs: rs, cat: cat, respBytes: respSize}, nil
	}
	measure := func(n int, check func(*wire.Catalog) error, qs ...wire.Query) (*measured, error) {
		return measureWith(n, nil, check, qs...)
	}
	full := func(cat *wire.Catalog) error {
		if cat.Unchanged || len(cat.Tools) == 0 {
			return fmt.Errorf("bench: expected a full catalog, got %d tools (unchanged %t)", len(cat.Tools), cat.Unchanged)
		}
		return nil
	}
	wallNote := func(m *measured) string {
		return fmt.Sprintf("wall p50 %s against the floor's %s; the older echo %s (%.2f ×); %s",
			formatValue(micros(m.query.lat.percentile(50)), UnitMicros), formatValue(micros(m.floor.lat.percentile(50)), UnitMicros),
			formatValue(median(m.echo.cpu), UnitCPUMicros), median(m.query.cpu)/median(m.echo.cpu), m.rs.othersNote())
	}

	var coldIndex *measured
	for _, detail := range []string{wire.DetailIndex, wire.DetailDefinitions, wire.DetailFull} {
		// The same query again and again: the answer of an unchanged catalog.
		// Rounds of repeated queries are as long as a hundredth of a round of calls: twenty
		// (a few milliseconds) left the median round's ratio at the mercy of one wake-up.
		again, err := measure(max(r.opts.Queries, r.opts.Calls/100), full, wire.Query{Detail: detail})
		if err != nil {
			return err
		}
		r.report.add(Figure{Group: "catalog", Name: detail + ", " + what, Unit: UnitCPUMicros,
			Value: median(again.query.cpu), Baseline: floorBaseline, BaselineValue: median(again.floor.cpu), Target: r.target(AtMost, repeatTarget(detail, n)),
			RatioRange: ratioRange(again.query.cpu, again.floor.cpu),
			Note: fmt.Sprintf("the same query repeated; %d of %d visible tools (the query limit), %s on the wire; %s",
				len(again.cat.Tools), total, formatValue(float64(again.respBytes), UnitBytes), wallNote(again))})

		// A query neither end has answered before: each with another limit.
		top := min(total, wire.MaxQueryLimit)
		qs := make([]wire.Query, min(firstLimits, top))
		for i := range qs {
			qs[i] = wire.Query{Detail: detail, Limit: top - i}
		}
		once, err := measure(r.opts.Queries, full, qs...)
		if err != nil {
			return err
		}
		r.report.add(Figure{Group: "catalog", Name: detail + ", first query, " + what, Unit: UnitCPUMicros,
			Value: median(once.query.cpu), Baseline: floorBaseline, BaselineValue: median(once.floor.cpu),
			RatioRange: ratioRange(once.query.cpu, once.floor.cpu),
			Note: fmt.Sprintf("a limit neither end answered before, of a catalog both have answered (limits %d down to %d in turn; not a cold answer); %s; %s", top, top-len(qs)+1, wallNote(once),
				firstBaseline(detail, n))})

		// The first query after the catalog changed: the guard toggles before each query, so
		// the app selects, encodes and compresses the answer anew and the host, holding an
		// answer of another revision, inflates and strictly decodes all of it. (Setting the
		// guard costs a lock and a counter; the Set's guard-dependent parts are rebuilt by
		// the query, as after any change.)
		var flips int
		toggle := func() error { flips++; return setGuard(coldGuards[flips%2]) }
		cold, err := measureWith(r.opts.Queries, toggle, full, wire.Query{Detail: detail})
		if err == nil {
			err = setGuard(catalog.GuardReadWrite)
		}
		if err != nil {
			return err
		}
		r.report.add(Figure{Group: "catalog", Name: detail + ", cold, " + what, Unit: UnitCPUMicros,
			Value: median(cold.query.cpu), Baseline: floorBaseline, BaselineValue: median(cold.floor.cpu),
			RatioRange: ratioRange(cold.query.cpu, cold.floor.cpu),
			Note: fmt.Sprintf("the first query after the catalog changed (the guard toggles between full access and read and write: a new revision, an answer neither end holds; each reuses what the last one shares with it); %s; %s", wallNote(cold),
				coldBaseline(detail, n))})
		if detail == wire.DetailIndex {
			coldIndex = cold
		}
	}

	// The unchanged answer costs about what a small call does: its rounds are as long as a
	// tenth of a round of calls. Twenty of them (0.5 ms) measured the wake-up after the
	// collection that starts each round as much as the answer, and the echo alike.
	unchanged := wire.Query{Detail: wire.DetailIndex, IfRevision: first.Revision, IfAvailabilityRevision: first.AvailabilityRevision}
	same, err := measure(max(r.opts.Queries, r.opts.Calls/10), func(cat *wire.Catalog) error {
		if !cat.Unchanged || len(cat.Tools) != 0 || cat.AvailabilityRevision != "" {
			return fmt.Errorf("bench: expected the unchanged answer, got %d tools (unchanged %t)", len(cat.Tools), cat.Unchanged)
		}
		return nil
	}, unchanged)
	if err != nil {
		return err
	}
	var target *Target
	if n >= 10000 {
		target = r.target(AtMost, 1.0/50)
	}
	r.report.add(Figure{Group: "catalog", Name: "unchanged, " + what, Unit: UnitCPUMicros,
		Value: median(same.query.cpu), Baseline: "index, cold", BaselineValue: median(coldIndex.query.cpu),
		Target: target,
		Note: fmt.Sprintf("%d B on the wire, what a host holding the revision gets instead of the index it has not seen (the cold one); %d queries a round; the floor of the same bytes %s; %s",
			same.respBytes, max(r.opts.Queries, r.opts.Calls/10), formatValue(median(same.floor.cpu), UnitCPUMicros), wallNote(same))})
	return nil
}
