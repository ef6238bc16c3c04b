package reliability

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// LoadReport is the outcome of a load run.
type LoadReport struct {
	// Sessions is the number of app sessions; Held those still connected when the load
	// ended; Reconnects the connections made beyond one per app (a session that dropped).
	Sessions   int `json:"sessions"`
	Held       int `json:"held"`
	Reconnects int `json:"reconnects"`
	// InFlight and BatchSize are the run's settings.
	InFlight  int `json:"inFlight"`
	BatchSize int `json:"batchSize"`
	// ConnectTime is how long all the sessions took to connect; Elapsed the load phase.
	ConnectTime time.Duration `json:"connectTime"`
	Elapsed     time.Duration `json:"elapsed"`

	// Requests completed and checked: queries (the catalog is the session's own), calls
	// and batches (every result carries the request's nonce and the session's tag).
	Queries    int64 `json:"queries"`
	Calls      int64 `json:"calls"`
	Batches    int64 `json:"batches"`
	BatchItems int64 `json:"batchItems"`
	// Lost requests ended without their response (a transport error: timeout, session
	// closed); Failed ones were answered with tool.error; Misrouted ones were answered with
	// another request's or another session's data. All three must be zero.
	Lost      int64 `json:"lost"`
	Failed    int64 `json:"failed"`
	Misrouted int64 `json:"misrouted"`
	// Problems describes the first few lost, failed or misrouted requests.
	Problems []string `json:"problems,omitempty"`
	// RunErrors are the apps' connect.Run errors (none expected).
	RunErrors []string `json:"runErrors,omitempty"`

	// CallP50 and CallP99 are the round trips of single calls seen by the host's callers,
	// with every session busy (upper edges of 9 % buckets).
	CallP50 time.Duration `json:"callP50"`
	CallP99 time.Duration `json:"callP99"`

	Memory     Memory     `json:"memory"`
	Goroutines Goroutines `json:"goroutines"`
}

// Memory is measured with every session connected and idle, after garbage collection,
// against the host idle before any app connected.
type Memory struct {
	// HostHeapPerSession is the host's live heap per session, from the exact heap profile
	// (0 when LoadOptions.NoHeapProfile).
	HostHeapPerSession int64 `json:"hostHeapPerSession"`
	// HeapPerSession is the process's live heap per session: host and app ends together.
	HeapPerSession int64 `json:"heapPerSession"`
	// StackPerSession is goroutine stack memory per session, both ends.
	StackPerSession int64 `json:"stackPerSession"`
	// HeapIdle is the process's live heap with every session connected.
	HeapIdle uint64 `json:"heapIdle"`
}

// Goroutines counts the process's goroutines at each stage of a run.
type Goroutines struct {
	// Baseline: before the host started. HostIdle: host started, no session.
	Baseline int `json:"baseline"`
	HostIdle int `json:"hostIdle"`
	// Connected: every session connected and idle (both ends in this process).
	Connected int `json:"connected"`
	// HostPerSession is the number of goroutines per session whose stack runs through the
	// host.
	HostPerSession float64 `json:"hostPerSession"`
	// AfterSessions: every app closed, host still running; must come back to HostIdle.
	// AfterHost: host closed too; must come back to Baseline.
	AfterSessions int `json:"afterSessions"`
	AfterHost     int `json:"afterHost"`
}

// Requests is the number of requests completed and checked; a batch counts once.
func (r *LoadReport) Requests() int64 { return r.Queries + r.Calls + r.Batches }

// Check returns an error listing every way the run fell short: a session not held or
// reconnected, a request lost, failed or misrouted, an app that stopped, goroutines that
// did not come back to their baseline.
func (r *LoadReport) Check() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if r.Held != r.Sessions {
		add("%d of %d sessions held to the end", r.Held, r.Sessions)
	}
	if r.Reconnects != 0 {
		add("%d reconnects", r.Reconnects)
	}
	if r.Lost != 0 || r.Failed != 0 || r.Misrouted != 0 {
		add("%d lost, %d failed, %d misrouted responses: %s", r.Lost, r.Failed, r.Misrouted, strings.Join(r.Problems, "; "))
	}
	if r.Requests() == 0 {
		add("no request completed")
	}
	if len(r.RunErrors) != 0 {
		add("apps stopped: %s", strings.Join(r.RunErrors, "; "))
	}
	if g := r.Goroutines; g.AfterSessions > g.HostIdle {
		add("%d goroutines after the sessions closed, %d with the host idle before", g.AfterSessions, g.HostIdle)
	}
	if g := r.Goroutines; g.AfterHost > g.Baseline {
		add("%d goroutines after the host closed, %d before it started", g.AfterHost, g.Baseline)
	}
	return errors.Join(errs...)
}

// WriteText writes the report for people.
func (r *LoadReport) WriteText(w io.Writer) error {
	secs := r.Elapsed.Seconds()
	rate := func(n int64) float64 {
		if secs == 0 {
			return 0
		}
		return float64(n) / secs
	}
	var b strings.Builder
	fmt.Fprintf(&b, "load: %d sessions (held %d, reconnects %d), %d in flight each, connected in %v\n",
		r.Sessions, r.Held, r.Reconnects, r.InFlight, r.ConnectTime.Round(time.Millisecond))
	fmt.Fprintf(&b, "  requests   %d in %v (%.0f/s): %d calls, %d batches of %d (%d items), %d queries\n",
		r.Requests(), r.Elapsed.Round(time.Millisecond), rate(r.Requests()), r.Calls, r.Batches, r.BatchSize, r.BatchItems, r.Queries)
	fmt.Fprintf(&b, "  tool calls %d incl. batch items (%.0f/s); call p50 %v, p99 %v\n",
		r.Calls+r.BatchItems, rate(r.Calls+r.BatchItems), r.CallP50, r.CallP99)
	fmt.Fprintf(&b, "  responses  lost %d, failed %d, misrouted %d\n", r.Lost, r.Failed, r.Misrouted)
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "    %s\n", p)
	}
	m := r.Memory
	if m.HostHeapPerSession != 0 {
		fmt.Fprintf(&b, "  memory     host heap %s per idle session; both ends: heap %s, stacks %s per session\n",
			bytesText(m.HostHeapPerSession), bytesText(m.HeapPerSession), bytesText(m.StackPerSession))
	} else {
		fmt.Fprintf(&b, "  memory     both ends: heap %s, stacks %s per idle session\n", bytesText(m.HeapPerSession), bytesText(m.StackPerSession))
	}
	g := r.Goroutines
	fmt.Fprintf(&b, "  goroutines baseline %d, host idle %d, connected %d (host %.1f per session), after sessions %d, after host %d\n",
		g.Baseline, g.HostIdle, g.Connected, g.HostPerSession, g.AfterSessions, g.AfterHost)
	for _, e := range r.RunErrors {
		fmt.Fprintf(&b, "  app error  %s\n", e)
	}
	if err := r.Check(); err != nil {
		fmt.Fprintf(&b, "  FAILED: %v\n", strings.ReplaceAll(err.Error(), "\n", "; "))
	} else {
		b.WriteString("  ok\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func bytesText(n int64) string {
	switch {
	case n >= 10<<20 || n <= -10<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 10<<10 || n <= -10<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
