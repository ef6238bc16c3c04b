package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// timed runs op n times from callers goroutines and returns every run's duration and what
// the whole used: wall-clock and CPU time. The first error stops every caller.
func timed(ctx context.Context, n, callers int, op func(context.Context) error) (latencies, span, error) {
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
	for c := range per {
		per[c] = make(latencies, 0, n/callers+1)
	}
	// Collect the garbage of what ran before, so that this round pays for its own
	// collections only: a round after a more allocating one would otherwise pay for both.
	runtime.GC()
	start := sampleUsage()
	for c := range callers {
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
	used := until(start, sampleUsage())
	if firstErr != nil {
		return nil, span{}, firstErr
	}
	all := make(latencies, 0, n)
	for _, l := range per {
		all = append(all, l...)
	}
	return all, used, nil
}

// series is what one operation of an alternation measured, round by round.
type series struct {
	lat  latencies // every operation's duration, pooled over the rounds
	rate []float64 // operations per second, per round
	cpu  []float64 // CPU µs per operation (this process: both ends), per round
}

// rounds is an alternation's outcome: one series per operation, and the CPUs other
// processes kept busy during each round (-1 where unknown).
type rounds struct {
	ops    []series
	others []float64
}

// alternate runs each of ops for n operations with callers goroutines, one after the
// other, round after round, so that the load of other processes falls on all alike.
func (r *run) alternate(ctx context.Context, n, callers int, ops ...func(context.Context) error) (*rounds, error) {
	return alternateRounds(ctx, r.opts.Rounds, n, callers, ops...)
}

// alternateRounds is alternate with its number of rounds.
func alternateRounds(ctx context.Context, count, n, callers int, ops ...func(context.Context) error) (*rounds, error) {
	out := &rounds{ops: make([]series, len(ops))}
	for range count {
		for i, op := range ops {
			lat, used, err := timed(ctx, n, callers, op)
			if err != nil {
				return nil, err
			}
			s := &out.ops[i]
			s.lat = append(s.lat, lat...)
			s.rate = append(s.rate, perSecond(n, used.Wall.D()))
			s.cpu = append(s.cpu, used.PerOp(n))
			out.others = append(out.others, used.Others)
		}
	}
	return out, nil
}

// othersNote says how busy other processes kept the machine during the rounds.
func (rs *rounds) othersNote() string {
	if len(rs.others) == 0 || rs.others[0] < 0 {
		return "the load of other processes is unknown here"
	}
	return fmt.Sprintf("other processes kept %.2f CPUs busy meanwhile (median round)", median(rs.others))
}

// callPair is a call as an operation and its baselines: the floor (its exact bytes
// echoed) and the older echo of the same sizes over package transport.
type callPair struct {
	op, floor, echo   func(context.Context) error
	reqSize, respSize int
	payload           []byte // the response payload of the first call
}

// callAndEcho makes call once, to learn its response and capture its bytes, and returns it
// with its echoes.
func (r *run) callAndEcho(ctx context.Context, s session, call wire.Call) (callPair, error) {
	out, err := s.call(ctx, call)
	if err != nil {
		return callPair{}, err
	}
	op := func(ctx context.Context) error { _, err := s.call(ctx, call); return err }
	ex, err := r.exchange(ctx, op, s.id(), wire.TypeCall, wire.TypeResult, call, out.payload)
	if err != nil {
		return callPair{}, err
	}
	req, resp := len(ex.request), len(ex.answer)
	return callPair{
		op:      op,
		floor:   func(ctx context.Context) error { return r.floor.roundTrip(ctx, ex) },
		echo:    func(ctx context.Context) error { return r.echo.roundTrip(ctx, req, resp) },
		reqSize: req, respSize: resp, payload: out.payload,
	}, nil
}

// emptyArguments is the small tool's arguments.
var emptyArguments = jsontext.Value(`{}`)

// Baselines of the call figures.
const (
	floorBaseline = "floor: coder/websocket echo of the same bytes, 0 allocations"
	echoBaseline  = "older echo, same sizes (package transport, 7 allocations)"
)

// calls measures small calls, one caller then Callers at a time, against the floor (the
// exact bytes of the call and its answer echoed, no allocation) and, for one release,
// against the older echo of the same sizes over package transport, both at the same
// concurrency. The targets are on CPU per call.
func (r *run) calls(ctx context.Context, s session) error {
	m, err := r.callAndEcho(ctx, s, wire.Call{ToolID: r.opts.Tool, Arguments: emptyArguments})
	if err != nil {
		return err
	}
	// Warm every path up: connections, pools, the host's catalog cache.
	if _, err := r.alternate(ctx, min(r.opts.Calls, 200), 1, m.op, m.floor, m.echo); err != nil {
		return err
	}
	sizes := fmt.Sprintf("%s: request %d B, response %d B; %d calls in each of %d rounds", r.opts.Tool, m.reqSize, m.respSize, r.opts.Calls, r.opts.Rounds)
	callerCounts := []int{1}
	if r.opts.Callers > 1 {
		callerCounts = append(callerCounts, r.opts.Callers)
	}
	if r.viaControl {
		r.report.skip("call CPU", "the host and the app run in other processes, so this process's CPU time is not the call's")
	}
	if !r.viaControl {
		host, app, err := endAllocs(ctx, min(r.opts.Calls, 2000), m.op)
		if err != nil {
			return err
		}
		for _, end := range []struct {
			name string
			v    float64
		}{{"the host's end (and the caller)", host}, {"the app's end", app}} {
			r.report.add(Figure{Group: "calls", Name: "allocations per call, " + end.name, Unit: UnitAllocs,
				Value: end.v, Baseline: "the target's budget, 4 an end", BaselineValue: 4, Target: r.target(AtMost, 1),
				Note: "the memory profile at a rate of one over the calls of 1 caller, each allocation's end by its stack; the floor makes none; at 24060c7 the host's end made 4, the app's 6"})
		}
	}
	for i, callers := range callerCounts {
		rs, err := r.alternate(ctx, r.opts.Calls, callers, m.op, m.floor, m.echo)
		if err != nil {
			return err
		}
		call, fl, echo := &rs.ops[0], &rs.ops[1], &rs.ops[2]
		who := "1 caller"
		if callers > 1 {
			who = fmt.Sprintf("%d callers", callers)
		}
		note := ""
		if i == 0 {
			note = sizes + "; "
		}
		if !r.viaControl {
			r.report.add(Figure{Group: "calls", Name: "CPU per call, " + who, Unit: UnitCPUMicros,
				Value: median(call.cpu), Baseline: floorBaseline, BaselineValue: median(fl.cpu), Target: r.target(AtMost, 1.2),
				RatioRange: ratioRange(call.cpu, fl.cpu),
				Note:       note + "user + system time of this process (host, app and callers: both ends), median round; ratio range: the rounds' own; " + rs.othersNote()})
			r.report.add(Figure{Group: "calls", Name: "CPU per call vs the older echo, " + who, Unit: UnitCPUMicros,
				Value: median(call.cpu), Baseline: echoBaseline, BaselineValue: median(echo.cpu),
				RatioRange: ratioRange(call.cpu, echo.cpu),
				Note:       "last round's baseline (its target was 1.3), reported beside the floor for one release"})
		}
		r.report.add(Figure{Group: "calls", Name: "call throughput, " + who, Unit: UnitCallsPerSec,
			Value: median(call.rate), Baseline: floorBaseline, BaselineValue: median(fl.rate),
			Note: fmt.Sprintf("wall clock, slowed by other processes' load; the older echo %.0f calls/s", median(echo.rate))})
		for _, pc := range []float64{50, 90, 99} {
			r.report.add(Figure{Group: "calls", Name: fmt.Sprintf("call p%.0f, %s", pc, who), Unit: UnitMicros,
				Value: micros(call.lat.percentile(pc)), Baseline: floorBaseline, BaselineValue: micros(fl.lat.percentile(pc))})
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
	rs, err := r.alternate(ctx, n, 1, op, singles)
	if err != nil {
		return err
	}
	batch, seq := rs.ops[0].lat.percentile(50), rs.ops[1].lat.percentile(50)
	r.report.add(Figure{Group: "batch", Name: fmt.Sprintf("batch of %d calls", len(calls)), Unit: UnitMicros,
		Value: micros(batch), Baseline: fmt.Sprintf("%d single calls in a row", len(calls)), BaselineValue: micros(seq),
		Note: fmt.Sprintf("median of %d; per call %.1f µs in a batch, %.1f µs alone; 1 round trip instead of %d",
			n*r.opts.Rounds, micros(batch)/float64(len(calls)), micros(seq)/float64(len(calls)), len(calls))})
	return nil
}
