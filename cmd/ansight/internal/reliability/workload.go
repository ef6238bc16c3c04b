package reliability

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
	"github.com/ansight-go/ansight/wire"
)

// counters are the workload's tallies, shared by every worker.
type counters struct {
	queries, calls, batches, batchItems atomic.Int64
	lost, failed, misrouted             atomic.Int64
	latency                             histogram // one-call round trips

	mu      sync.Mutex
	samples []string // the first few problems, for the report
}

const maxSamples = 8

func (c *counters) problem(kind *atomic.Int64, format string, args ...any) {
	kind.Add(1)
	c.mu.Lock()
	if len(c.samples) < maxSamples {
		c.samples = append(c.samples, fmt.Sprintf(format, args...))
	}
	c.mu.Unlock()
}

// mixComplete reports whether each kind of request has completed at least once.
func (c *counters) mixComplete() bool {
	return c.queries.Load() > 0 && c.calls.Load() > 0 && c.batches.Load() > 0
}

// wentWrong reports whether a request was lost, failed or misrouted.
func (c *counters) wentWrong() bool {
	return c.lost.Load() > 0 || c.failed.Load() > 0 || c.misrouted.Load() > 0
}

// more reports whether a worker sends another request: before the deadline, and after it
// while opts.CompleteMix asks for the kinds of request c lacks (not once one went wrong:
// the report fails then anyway, and a request that keeps failing would never complete
// the mix).
func (c *counters) more(ctx context.Context, deadline time.Time, opts LoadOptions) bool {
	if ctx.Err() != nil {
		return false
	}
	if time.Now().Before(deadline) {
		return true
	}
	return opts.CompleteMix && !c.mixComplete() && !c.wentWrong()
}

// problems adds c's lost, failed and misrouted requests to rep's.
func (c *counters) problems(rep *LoadReport) {
	rep.Lost += c.lost.Load()
	rep.Failed += c.failed.Load()
	rep.Misrouted += c.misrouted.Load()
	c.mu.Lock()
	rep.Problems = append(rep.Problems, c.samples[:min(len(c.samples), maxSamples-len(rep.Problems))]...)
	c.mu.Unlock()
}

// runBaseline measures the workload's mix at rest, the baseline of the load's figures in
// the same run: one worker on session s, every other session connected and idle, for
// opts.Baseline after a tenth of that to warm up (the session's first requests). Its lost,
// failed or misrouted requests are the report's too. With opts.CompleteMix, the warm-up and
// the baseline each run on until they have completed every kind of request.
func runBaseline(ctx context.Context, s loadSession, f appFleet, opts LoadOptions, rep *LoadReport) {
	var warm counters
	worker(ctx, s, 0, time.Now().Add(opts.Baseline/10), opts, &warm)
	warm.problems(rep)

	var c counters
	start, apps := usage.Now(), f.cpu()
	worker(ctx, s, 0, time.Now().Add(opts.Baseline), opts, &c)
	apps = f.cpu() - apps
	machine := start.Since(apps)
	c.problems(rep)
	rep.Baseline = LoadBaseline{
		Requests: c.queries.Load() + c.calls.Load() + c.batches.Load(),
		Calls:    c.calls.Load(),
		CallP50:  usage.Millis(c.latency.quantile(0.50)),
		CallP99:  usage.Millis(c.latency.quantile(0.99)),
		HostCPU:  machine.Process,
		AppsCPU:  usage.Millis(apps),
		Machine:  machine,
	}
}

// runWorkload runs opts.InFlight workers on every session until opts.Duration has passed
// (and, with opts.CompleteMix, the mix has completed).
func runWorkload(ctx context.Context, sessions []loadSession, opts LoadOptions, rep *LoadReport) {
	var c counters
	start := time.Now()
	deadline := start.Add(opts.Duration)
	var wg sync.WaitGroup
	for _, s := range sessions {
		for w := range opts.InFlight {
			wg.Go(func() { worker(ctx, s, w, deadline, opts, &c) })
		}
	}
	wg.Wait()
	rep.Elapsed = usage.Millis(time.Since(start))
	rep.Queries, rep.Calls = c.queries.Load(), c.calls.Load()
	rep.Batches, rep.BatchItems = c.batches.Load(), c.batchItems.Load()
	c.problems(rep)
	rep.CallP50, rep.CallP99 = usage.Millis(c.latency.quantile(0.50)), usage.Millis(c.latency.quantile(0.99))
}

// worker sends a fixed mix until the deadline (or, with opts.CompleteMix, until c has
// every kind of request, see counters.more): per 8 requests, one catalog query, two
// batches and five single calls (alternating a read and a write tool).
func worker(ctx context.Context, s loadSession, w int, deadline time.Time, opts LoadOptions, c *counters) {
	for i := 0; c.more(ctx, deadline, opts); i++ {
		nonce := fmt.Sprintf("%s.w%d.%d", s.tag, w, i)
		rctx, cancel := context.WithTimeout(ctx, opts.CallTimeout+5*time.Second)
		switch i % 8 {
		case 0:
			query(rctx, s, c)
		case 3, 6:
			batch(rctx, s, nonce, opts.BatchSize, c)
		default:
			tool := toolEcho
			if i%2 == 1 {
				tool = toolMark
			}
			call(rctx, s, tool, nonce, c)
		}
		cancel()
	}
}

// requestError counts err as a lost response (a transport failure: the request got no
// answer) or a failed one (the app answered with tool.error, which this workload never
// provokes).
func requestError(c *counters, s loadSession, what string, err error) {
	if _, ok := errors.AsType[*wire.Error](err); ok {
		c.problem(&c.failed, "%s %s: %v", s.tag, what, err)
		return
	}
	c.problem(&c.lost, "%s %s: %v", s.tag, what, err)
}

func query(ctx context.Context, s loadSession, c *counters) {
	cat, err := s.sess.Tools().Query(ctx, wire.Query{Detail: "index"})
	if err != nil {
		requestError(c, s, "tool.query", err)
		return
	}
	mine := identityTool(s.tag)
	found := false
	for _, e := range cat.Tools {
		if e.ID == mine {
			found = true
		} else if strings.HasPrefix(e.ID, "load.id.") {
			c.problem(&c.misrouted, "%s tool.query: the catalog lists %s", s.tag, e.ID)
			return
		}
	}
	if !found {
		c.problem(&c.misrouted, "%s tool.query: the catalog does not list %s", s.tag, mine)
		return
	}
	c.queries.Add(1)
}

func nonceArgs(nonce string) jsontext.Value {
	return jsontext.Value(`{"nonce":"` + nonce + `"}`) // nonces are plain ASCII
}

// checkEcho reports what is wrong with an echo result, or "".
func checkEcho(raw jsontext.Value, tag, nonce string) string {
	var out echoOut
	if err := wire.Unmarshal(raw, &out); err != nil {
		return fmt.Sprintf("unreadable result %s: %v", raw, err)
	}
	if out.Nonce != nonce || out.App != tag {
		return fmt.Sprintf("answered nonce %q from %q, want %q from %q", out.Nonce, out.App, nonce, tag)
	}
	return ""
}

func call(ctx context.Context, s loadSession, tool, nonce string, c *counters) {
	start := time.Now()
	res, err := s.sess.Tools().Call(ctx, wire.Call{ToolID: tool, Arguments: nonceArgs(nonce), CallID: nonce})
	if err != nil {
		requestError(c, s, "tool.call", err)
		return
	}
	c.latency.add(time.Since(start))
	if res.Payload.ToolID != tool {
		c.problem(&c.misrouted, "%s tool.call %s: result of %s", s.tag, tool, res.Payload.ToolID)
		return
	}
	if msg := checkEcho(res.Payload.Result, s.tag, nonce); msg != "" {
		c.problem(&c.misrouted, "%s tool.call: %s", s.tag, msg)
		return
	}
	c.calls.Add(1)
}

func batch(ctx context.Context, s loadSession, nonce string, size int, c *counters) {
	calls := make([]wire.Call, size)
	for k := range calls {
		n := fmt.Sprintf("%s.b%d", nonce, k)
		calls[k] = wire.Call{ToolID: toolEcho, Arguments: nonceArgs(n), CallID: n}
	}
	res, err := s.sess.Tools().Batch(ctx, false, calls)
	if err != nil {
		requestError(c, s, "tool.batch", err)
		return
	}
	p := res.Payload
	if !p.Success || p.Completed != size || p.Requested != size || len(p.Results) != size {
		c.problem(&c.misrouted, "%s tool.batch: success=%v completed=%d requested=%d results=%d, want %d",
			s.tag, p.Success, p.Completed, p.Requested, len(p.Results), size)
		return
	}
	for k, item := range p.Results {
		if item.Index != k || item.CallID != calls[k].CallID || !item.Success {
			c.problem(&c.misrouted, "%s tool.batch item %d: index %d callId %q success %v", s.tag, k, item.Index, item.CallID, item.Success)
			return
		}
		if msg := checkEcho(item.Result, s.tag, calls[k].CallID); msg != "" {
			c.problem(&c.misrouted, "%s tool.batch item %d: %s", s.tag, k, msg)
			return
		}
	}
	c.batches.Add(1)
	c.batchItems.Add(int64(size))
}

// histogram counts durations in logarithmic buckets: 8 per power of two (resolution about
// 9 %), from 1 ns to 2^40 ns (18 minutes), and keeps the smallest and largest duration
// added: a quantile is its bucket's midpoint held within them, so that it is never above
// the maximum (a bucket's upper edge overstated it by up to 12.5 %: "p99 1.572ms, max
// 1.481ms") and a histogram of one value answers that value.
type histogram struct {
	buckets  [41 * 8]atomic.Int64
	min, max atomic.Int64 // nanoseconds; min is 0 until the first add
}

func bucketOf(d time.Duration) int {
	ns := uint64(max(d, 1))
	e := bits.Len64(ns) - 1 // 2^e <= ns < 2^(e+1)
	var frac uint64
	if e >= 3 {
		frac = (ns >> (e - 3)) & 7
	} else {
		frac = (ns << (3 - e)) & 7
	}
	return min(e*8+int(frac), 41*8-1)
}

// middle returns the midpoint of bucket b: within 1/16 of any duration in it.
func middle(b int) time.Duration {
	e, frac := b/8, uint64(b%8)
	lo := (uint64(1) << e) + (frac<<e)/8
	return time.Duration(lo + (uint64(1)<<e)/16)
}

func (h *histogram) add(d time.Duration) {
	d = max(d, 1)
	h.buckets[bucketOf(d)].Add(1)
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			break
		}
	}
	for {
		m := h.min.Load()
		if (m != 0 && int64(d) >= m) || h.min.CompareAndSwap(m, int64(d)) {
			break
		}
	}
}

// maximum returns the largest duration added (0 when empty).
func (h *histogram) maximum() time.Duration { return time.Duration(h.max.Load()) }

// quantile returns quantile q: the smallest or largest duration added for the first and
// last rank, else the midpoint of the bucket holding it, within them (0 when empty).
func (h *histogram) quantile(q float64) time.Duration {
	var total int64
	for i := range h.buckets {
		total += h.buckets[i].Load()
	}
	if total == 0 {
		return 0
	}
	rank := int64(q*float64(total-1)) + 1
	switch rank { // the extremes are known exactly
	case 1:
		return time.Duration(h.min.Load())
	case total:
		return h.maximum()
	}
	b := len(h.buckets) - 1
	var seen int64
	for i := range h.buckets {
		seen += h.buckets[i].Load()
		if seen >= rank {
			b = i
			break
		}
	}
	return min(max(middle(b), time.Duration(h.min.Load())), h.maximum())
}
