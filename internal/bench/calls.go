package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// timed runs op n times from callers goroutines and returns every run's duration and the
// wall-clock time of the whole. The first error stops every caller.
func timed(ctx context.Context, n, callers int, op func(context.Context) error) (latencies, time.Duration, error) {
	callers = max(1, min(callers, n))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	per := make([]latencies, callers)
	start := time.Now()
	for c := range callers {
		per[c] = make(latencies, 0, n/callers+1)
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				t := time.Now()
				if err := op(ctx); err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
				per[c] = append(per[c], time.Since(t))
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if firstErr != nil {
		return nil, 0, firstErr
	}
	all := make(latencies, 0, n)
	for _, l := range per {
		all = append(all, l...)
	}
	return all, wall, nil
}

// pair is a measurement and its baseline over alternating rounds.
type pair struct {
	lat, baseLat   latencies
	rate, baseRate []float64
}

// alternate runs op and base for n operations each with callers goroutines, round after
// round, and pools what they measured.
func (r *run) alternate(ctx context.Context, n, callers int, op, base func(context.Context) error) (*pair, error) {
	p := &pair{}
	for range r.opts.Rounds {
		lat, wall, err := timed(ctx, n, callers, op)
		if err != nil {
			return nil, err
		}
		p.lat = append(p.lat, lat...)
		p.rate = append(p.rate, perSecond(n, wall))
		lat, wall, err = timed(ctx, n, callers, base)
		if err != nil {
			return nil, err
		}
		p.baseLat = append(p.baseLat, lat...)
		p.baseRate = append(p.baseRate, perSecond(n, wall))
	}
	return p, nil
}

// callPair is a call as an operation and its baseline: a WebSocket echo of the same
// request and response sizes.
type callPair struct {
	op, echo          func(context.Context) error
	reqSize, respSize int
	payload           []byte // the response payload of the first call
}

// callAndEcho makes call once, to learn its response, and returns it with its echo.
func (r *run) callAndEcho(ctx context.Context, s session, call wire.Call) (callPair, error) {
	out, err := s.call(ctx, call)
	if err != nil {
		return callPair{}, err
	}
	req, resp, err := messageSizes(s.id(), wire.TypeCall, wire.TypeResult, call, out.payload)
	if err != nil {
		return callPair{}, err
	}
	return callPair{
		op:      func(ctx context.Context) error { _, err := s.call(ctx, call); return err },
		echo:    func(ctx context.Context) error { return r.echo.roundTrip(ctx, req, resp) },
		reqSize: req, respSize: resp, payload: out.payload,
	}, nil
}

// emptyArguments is the small tool's arguments.
var emptyArguments = jsontext.Value(`{}`)

// calls measures small calls, one caller then Callers at a time, against a WebSocket echo of
// the same message sizes at the same concurrency.
func (r *run) calls(ctx context.Context, s session) error {
	m, err := r.callAndEcho(ctx, s, wire.Call{ToolID: r.opts.Tool, Arguments: emptyArguments})
	if err != nil {
		return err
	}
	op, echo, reqSize, respSize := m.op, m.echo, m.reqSize, m.respSize
	// Warm both paths up: connections, pools, the host's catalog cache.
	if _, err := r.alternate(ctx, min(r.opts.Calls, 200), 1, op, echo); err != nil {
		return err
	}
	baseline := "WebSocket echo, same bytes"
	sizes := fmt.Sprintf("%s: request %d B, response %d B; %d calls in each of %d rounds", r.opts.Tool, reqSize, respSize, r.opts.Calls, r.opts.Rounds)
	callerCounts := []int{1}
	if r.opts.Callers > 1 {
		callerCounts = append(callerCounts, r.opts.Callers)
	}
	for i, callers := range callerCounts {
		p, err := r.alternate(ctx, r.opts.Calls, callers, op, echo)
		if err != nil {
			return err
		}
		who := "1 caller"
		if callers > 1 {
			who = fmt.Sprintf("%d callers", callers)
		}
		var target *Target
		if callers == r.opts.Callers {
			target = r.target(AtLeast, 0.67)
		}
		note := ""
		if i == 0 {
			note = sizes
		}
		r.report.add(Figure{Group: "calls", Name: "call throughput, " + who, Unit: UnitCallsPerSec,
			Value: median(p.rate), Baseline: baseline, BaselineValue: median(p.baseRate), Target: target, Note: note})
		for _, pc := range []float64{50, 90, 99} {
			r.report.add(Figure{Group: "calls", Name: fmt.Sprintf("call p%.0f, %s", pc, who), Unit: UnitMicros,
				Value: micros(p.lat.percentile(pc)), Baseline: baseline, BaselineValue: micros(p.baseLat.percentile(pc))})
		}
	}
	return nil
}

// batch measures one tool.batch of 32 small calls against the same 32 calls one after
// another.
func (r *run) batch(ctx context.Context, s session) error {
	calls := make([]wire.Call, wire.MaxBatchSize)
	for i := range calls {
		calls[i] = wire.Call{ToolID: r.opts.Tool, Arguments: emptyArguments}
	}
	op := func(ctx context.Context) error { return s.batch(ctx, calls) }
	singles := func(ctx context.Context) error {
		for _, c := range calls {
			if _, err := s.call(ctx, c); err != nil {
				return err
			}
		}
		return nil
	}
	n := max(3, r.opts.Calls/(8*wire.MaxBatchSize))
	if _, err := r.alternate(ctx, 2, 1, op, singles); err != nil {
		return err
	}
	p, err := r.alternate(ctx, n, 1, op, singles)
	if err != nil {
		return err
	}
	batch, seq := p.lat.percentile(50), p.baseLat.percentile(50)
	r.report.add(Figure{Group: "batch", Name: fmt.Sprintf("batch of %d calls", len(calls)), Unit: UnitMicros,
		Value: micros(batch), Baseline: fmt.Sprintf("%d single calls in a row", len(calls)), BaselineValue: micros(seq),
		Note: fmt.Sprintf("median of %d; per call %.1f µs in a batch, %.1f µs alone; 1 round trip instead of %d",
			n*r.opts.Rounds, micros(batch)/float64(len(calls)), micros(seq)/float64(len(calls)), len(calls))})
	return nil
}
