package reliability

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
	"github.com/ansight-go/ansight/host"
)

// LoadReport is the outcome of a load run.
type LoadReport struct {
	// Sessions is the number of app sessions; Held those still connected when the load
	// ended; Reconnects the connections made beyond one per app (a session that dropped).
	Sessions   int `json:"sessions"`
	Held       int `json:"held"`
	Reconnects int `json:"reconnects"`
	// InFlight and BatchSize are the run's settings; AppProcess says the apps ran in a
	// child process (the host's memory and CPU are then its own).
	InFlight   int  `json:"inFlight"`
	BatchSize  int  `json:"batchSize"`
	AppProcess bool `json:"appProcess"`
	// ConnectTime is how long all the sessions took to connect; Elapsed the load phase.
	ConnectTime usage.Millis `json:"connectMs"`
	Elapsed     usage.Millis `json:"elapsedMs"`

	// Requests completed and checked: queries (the catalog is the session's own), calls
	// and batches (every result carries the request's nonce and the session's tag).
	Queries    int64 `json:"queries"`
	Calls      int64 `json:"calls"`
	Batches    int64 `json:"batches"`
	BatchItems int64 `json:"batchItems"`
	// Lost requests ended without their response (a transport error: timeout, session
	// closed); Failed ones were answered with tool.error; Misrouted ones were answered with
	// another request's or another session's data; the baseline's count too. All three
	// must be zero.
	Lost      int64 `json:"lost"`
	Failed    int64 `json:"failed"`
	Misrouted int64 `json:"misrouted"`
	// Problems describes the first few lost, failed or misrouted requests.
	Problems []string `json:"problems,omitempty"`
	// RunErrors are the apps' connect.Run errors (none expected).
	RunErrors []string `json:"runErrors,omitempty"`

	// CallP50 and CallP99 are the round trips of single calls seen by the host's callers,
	// with every session busy (within 1/16, never above the longest).
	CallP50 usage.Millis `json:"callP50Ms"`
	CallP99 usage.Millis `json:"callP99Ms"`

	// HostCPU is the host process's CPU time during the load phase (the apps' too when
	// they share its process), AppsCPU the app process's; Machine the load phase's wall
	// time and the machine's other work.
	HostCPU usage.Millis `json:"hostCpuMs"`
	AppsCPU usage.Millis `json:"appsCpuMs,omitzero"`
	Machine usage.Span   `json:"machine"`
	// Baseline is the same mix at rest, measured in the same run just before the load.
	Baseline LoadBaseline `json:"baseline,omitzero"`
	// FileLimit is the host process's open-file limit and what its sessions need.
	FileLimit host.FileLimit `json:"fileLimit"`

	Memory     Memory     `json:"memory"`
	Goroutines Goroutines `json:"goroutines"`
}

// LoadBaseline is the load's mix of requests at rest: one worker on one session, one
// request at a time, every other session connected and idle, measured just before the
// load in the same run. The load's latency and CPU per request are compared with it.
type LoadBaseline struct {
	// Requests completed (a batch counts once), Calls among them.
	Requests int64 `json:"requests"`
	Calls    int64 `json:"calls"`
	// CallP50 and CallP99 are the round trips of single calls.
	CallP50 usage.Millis `json:"callP50Ms"`
	CallP99 usage.Millis `json:"callP99Ms"`
	// HostCPU, AppsCPU and Machine are as LoadReport's, over the baseline's span (whose
	// Wall is its duration).
	HostCPU usage.Millis `json:"hostCpuMs"`
	AppsCPU usage.Millis `json:"appsCpuMs,omitzero"`
	Machine usage.Span   `json:"machine"`
}

// Memory is measured with every session connected and idle, after garbage collection,
// against the host idle before any app connected.
type Memory struct {
	// HostHeapPerSession is the host's live heap per session: with the apps in a child
	// process, this process's growth; otherwise from the exact heap profile (0 when
	// LoadOptions.NoHeapProfile). HostStackPerSession is the host's goroutine stacks per
	// session (apps in a child process only), AppHeapPerSession the app process's heap
	// per session.
	HostHeapPerSession  int64 `json:"hostHeapPerSession"`
	HostStackPerSession int64 `json:"hostStackPerSession,omitzero"`
	AppHeapPerSession   int64 `json:"appHeapPerSession,omitzero"`
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
	return shortfalls(errs)
}

// WriteText writes the report for people.
func (r *LoadReport) WriteText(w io.Writer) error {
	secs := r.Elapsed.D().Seconds()
	rate := func(n int64) float64 {
		if secs == 0 {
			return 0
		}
		return float64(n) / secs
	}
	var b strings.Builder
	where := "apps in this process"
	if r.AppProcess {
		where = "apps in a child process"
	}
	fmt.Fprintf(&b, "load: %d sessions (held %d, reconnects %d), %d in flight each, %s, connected in %v\n",
		r.Sessions, r.Held, r.Reconnects, r.InFlight, where, r.ConnectTime.D().Round(time.Millisecond))
	fmt.Fprintf(&b, "  requests   %d in %v (%.0f/s): %d calls, %d batches of %d (%d items), %d queries\n",
		r.Requests(), r.Elapsed.D().Round(time.Millisecond), rate(r.Requests()), r.Calls, r.Batches, r.BatchSize, r.BatchItems, r.Queries)
	fmt.Fprintf(&b, "  tool calls %d incl. batch items (%.0f/s); call p50 %v, p99 %v\n",
		r.Calls+r.BatchItems, rate(r.Calls+r.BatchItems), roundMicros(r.CallP50), roundMicros(r.CallP99))
	fmt.Fprintf(&b, "  responses  lost %d, failed %d, misrouted %d\n", r.Lost, r.Failed, r.Misrouted)
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "    %s\n", p)
	}
	if n := r.Requests(); n > 0 {
		cpu := fmt.Sprintf("host %v (%.0f µs per request)", r.HostCPU.D().Round(time.Millisecond), perRequest(r.HostCPU, n))
		if r.AppProcess {
			cpu += fmt.Sprintf(", apps %v (%.0f µs per request)", r.AppsCPU.D().Round(time.Millisecond), perRequest(r.AppsCPU, n))
		} else {
			cpu = "host and apps " + strings.TrimPrefix(cpu, "host ")
		}
		fmt.Fprintf(&b, "  CPU        %s; %s\n", cpu, r.Machine.Conditions())
	}
	if base := r.Baseline; base.Requests > 0 {
		fmt.Fprintf(&b, "  at rest    the same mix on 1 session, 1 request at a time, the others idle: %d requests in %v (%.0f/s), call p50 %v, p99 %v\n",
			base.Requests, base.Machine.Wall.D().Round(time.Millisecond), float64(base.Requests)/base.Machine.Wall.D().Seconds(),
			roundMicros(base.CallP50), roundMicros(base.CallP99))
		fmt.Fprintf(&b, "             CPU %s; %s\n", r.cpuText(base.HostCPU, base.AppsCPU, base.Requests), base.Machine.Conditions())
		if n := r.Requests(); n > 0 {
			fmt.Fprintf(&b, "  load/rest  call p50 %s, p99 %s; CPU per request %s\n",
				ratioText(r.CallP50.D(), base.CallP50.D()), ratioText(r.CallP99.D(), base.CallP99.D()), r.cpuRatios(base, n))
		}
	}
	m := r.Memory
	if r.AppProcess {
		fmt.Fprintf(&b, "  memory     host heap %s, stacks %s per idle session; apps' heap %s per session\n",
			bytesText(m.HostHeapPerSession), bytesText(m.HostStackPerSession), bytesText(m.AppHeapPerSession))
	} else if m.HostHeapPerSession != 0 {
		fmt.Fprintf(&b, "  memory     host heap %s per idle session; both ends: heap %s, stacks %s per session\n",
			bytesText(m.HostHeapPerSession), bytesText(m.HeapPerSession), bytesText(m.StackPerSession))
	} else {
		fmt.Fprintf(&b, "  memory     both ends: heap %s, stacks %s per idle session\n", bytesText(m.HeapPerSession), bytesText(m.StackPerSession))
	}
	fmt.Fprintf(&b, "  files      %s\n", r.FileLimit)
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

func perRequest(cpu usage.Millis, n int64) float64 {
	return float64(cpu.D().Nanoseconds()) / 1e3 / float64(n)
}

func roundMicros(d usage.Millis) time.Duration { return d.D().Round(time.Microsecond) }

// cpuText is CPU per request: "host 31 µs, apps 27 µs per request", or "host and apps
// 58 µs per request" when they share a process.
func (r *LoadReport) cpuText(host, apps usage.Millis, n int64) string {
	if r.AppProcess {
		return fmt.Sprintf("host %.0f µs, apps %.0f µs per request", perRequest(host, n), perRequest(apps, n))
	}
	return fmt.Sprintf("host and apps %.0f µs per request", perRequest(host, n))
}

// cpuRatios compares the load's CPU per request with the baseline's.
func (r *LoadReport) cpuRatios(base LoadBaseline, n int64) string {
	ratio := func(load, rest usage.Millis) string {
		return ratioFloat(perRequest(load, n), perRequest(rest, base.Requests), "µs")
	}
	if r.AppProcess {
		return "host " + ratio(r.HostCPU, base.HostCPU) + ", apps " + ratio(r.AppsCPU, base.AppsCPU)
	}
	return "host and apps " + ratio(r.HostCPU, base.HostCPU)
}

// ratioText is "604ms / 41µs = 14732×".
func ratioText(load, rest time.Duration) string {
	load, rest = load.Round(time.Microsecond), rest.Round(time.Microsecond)
	if rest <= 0 {
		return fmt.Sprintf("%v / %v", load, rest)
	}
	return fmt.Sprintf("%v / %v = %s×", load, rest, ratioDigits(float64(load)/float64(rest)))
}

// ratioFloat is "29 / 23 µs = 1.26×".
func ratioFloat(load, rest float64, unit string) string {
	if rest <= 0 {
		return fmt.Sprintf("%.0f / %.0f %s", load, rest, unit)
	}
	return fmt.Sprintf("%.0f / %.0f %s = %s×", load, rest, unit, ratioDigits(load/rest))
}

// ratioDigits gives a ratio three significant digits, no more than its integer part.
func ratioDigits(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
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

// shortfalls is the one error of a report's Check: its shortfalls on one line, joined by
// "; ", because the CLI prints an error as one line (errors.Join's newlines came out as
// a literal \n).
func shortfalls(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}
