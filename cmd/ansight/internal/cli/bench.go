package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/cmd/ansight/internal/bench"
	"github.com/ansight-go/ansight/cmd/ansight/internal/reliability"
)

// The measurements the bench command runs; tests substitute tiny runs.
var (
	benchLocal   = bench.RunLocal
	benchSession = bench.RunSession
	benchLoad    = reliability.RunLoad
	benchFlood   = reliability.RunEnrollFlood
	benchRecord  = reliability.RunRecordLoad
	benchRecCap  = reliability.RunRecordCapacity
)

// benchFlags are the bench command's flags.
type benchFlags struct {
	quick   bool
	session string
	callers int
	tool    string

	// --load: the reliability run (internal/reliability).
	load     bool
	sessions int
	duration time.Duration
	inFlight int

	// --enroll-flood: the enrollment flood (internal/reliability); flooder: the
	// misbehaving socket's datagrams (-1: as many as the apps).
	enrollFlood int
	flooder     int

	// --record: the recording load (internal/reliability), with --sessions and --duration
	// when given (sessionsSet, durationSet), telemetry messages and frames per session and
	// second.
	record                   bool
	messages, frames         int
	sessionsSet, durationSet bool
	// --max-sessions with --record: the capacity search up to this many sessions.
	maxSessions int
}

const benchLong = `Measure the protocol end to end over a real loopback session: a host and the demo app
started in this process (UDP enrollment, authenticated WebSocket), called through the host's
protocol client. Every figure is printed next to a baseline measured in the same run on the
same machine, with the ratio:

  small calls        CPU per call (getrusage: host and app are both in this process),
                     latency p50/p90/p99 and throughput, 1 and N concurrent callers, against
                     the floor: the call's and its answer's exact bytes echoed over one
                     coder/websocket connection, same direction, no allocation (and, for one
                     release, the older echo of the same sizes over package transport); the
                     floor writes each message with a system call of its own, while package
                     transport combines concurrent writes, so with N callers a call can cost
                     less than its floor
  batch              one tool.batch of 32 calls against the 32 calls one by one
  catalog            CPU per query of index, definitions and full answers at 100, 1,000 and
                     10,000 tools, repeated, asked for the first time and cold (the first
                     after the catalog changed), against the floor of the same bytes; the
                     unchanged answer against the cold index it saves
  large result       a 1 MiB result (compressed on the wire) against the floor of its bytes
  artifact           a 64 MiB ASFT transfer against a raw binary stream of the same chunks,
                     and the heap's peak growth against a transfer an eighth the size
  ui tap             CPU of ansight ui tap (capture, resolve the selector, act) against the
                     same two calls made directly: ui.get_visual_tree, ui.perform_action
  MCP bridge         CPU per ansight_call_app_tool against the same call over the control
                     socket and the MCP SDK's floor (a tool that returns at once); the
                     bridge's own share is what remains

The report says how busy other processes kept the machine: they slow wall-clock figures
(latency, throughput), CPU per call much less. Targets (ratios, so they hold on any
machine): a small call at most 1.2 times the floor's CPU, 1 and N callers, and at most 4
allocations at each end (the app's, the host's); a repeated
catalog query at most 5 times its floor's CPU (the definitions answer at 1,000 tools and
more: 3 times); the unchanged answer at least 50 times
cheaper than a cold index at 10,000 tools; artifact throughput at least 0.7 of the raw
stream's with the heap flat in the size; a ui tap at most 1.2 times its two calls; the MCP
bridge's own share at most a quarter of its call.

--quick runs everything at full size with fewer repetitions (about two minutes, longer on a busy machine).
--session measures a session of the resident host through its control API instead: the
figures then include the control API's hop, targets do not apply, and only the
measurements whose tools the app offers run.

Two other runs stress one host instead, the apps in a child process of this command:
--load holds --sessions sessions under mixed traffic (lost or misrouted responses, call
latency and CPU per request beside the same mix on one session at rest, measured first in
the same run; memory per session); --enroll-flood N sends N apps' ENROLLMENT_CONNECT at
once, each from its own socket, while one more socket floods (answered, lost, time to
answer, CPU); --record runs a recording host under --sessions apps' telemetry (50
messages and 10 frames a second each by default), rounds with recording off and on in
turn, and reports dropped records, disk and the call latency on against off.

--record --max-sessions N searches instead for the largest number of sessions the machine
holds with recording on, up to N, each sending --messages and --frames a second (20 and 2
unless given): each step runs a new host and senders for --duration
(default 20s) and holds when nothing was dropped, no send or call failed, the senders kept
95% of the pace and the queue was written within a second; counts double from 50 until
one is not held, then bisect to within 5%. Every step is reported. The senders share the
machine's cores with the host. See docs/performance.md.`

func newBenchCmd(g *globals) *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the protocol end to end, each figure beside a baseline from the same run",
		Long:  benchLong,
		Example: `  ansight bench --quick
  ansight bench --json > bench.json
  ansight bench --session com-ansight-demo-notes-001 --tool app.get_state
  ansight bench --load --sessions 10000 --duration 30s
  ansight bench --enroll-flood 10000
  ansight bench --record                                   # 50 sessions, 50 messages and 10 frames a second each
  ansight bench --record --sessions 40 --messages 20 --frames 2
  ansight bench --record --messages 20 --frames 2 --max-sessions 5000   # the largest count held`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			f.sessionsSet, f.durationSet = c.Flags().Changed("sessions"), c.Flags().Changed("duration")
			if f.maxSessions != 0 { // the capacity search's own load unless told
				if !c.Flags().Changed("messages") {
					f.messages = 20
				}
				if !c.Flags().Changed("frames") {
					f.frames = 2
				}
			}
			return runBench(c.Context(), g, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.quick, "quick", false, "fewer repetitions: about two minutes, longer on a busy machine")
	fl.StringVar(&f.session, "session", "", "measure this session of the resident host (through its control API) instead of the in-process demo app")
	fl.IntVar(&f.callers, "callers", 8, "concurrent callers of the second call measurement (1..64)")
	fl.StringVar(&f.tool, "tool", bench.DefaultTool, "the small read tool to call, with {} as arguments")
	fl.BoolVar(&f.load, "load", false, "instead: hold --sessions app sessions on a host in this process, the apps in a child process, under mixed traffic; report lost or misrouted responses, call latency and CPU per request beside the same mix at rest, memory per idle session and goroutines")
	fl.IntVar(&f.sessions, "sessions", reliability.DefaultSessions, "with --load: concurrent app sessions")
	fl.DurationVar(&f.duration, "duration", reliability.DefaultDuration, "with --load: how long every session sends requests")
	fl.IntVar(&f.inFlight, "in-flight", reliability.DefaultInFlight, "with --load: requests each session keeps in flight (1..64)")
	fl.IntVar(&f.enrollFlood, "enroll-flood", 0, "instead: this many apps send ENROLLMENT_CONNECT at once, each from its own socket, while one socket floods; report answered, lost, time to answer and CPU")
	fl.IntVar(&f.flooder, "flooder", -1, "with --enroll-flood: datagrams the flooding socket sends (default: as many as the apps; 0: no flooder)")
	fl.BoolVar(&f.record, "record", false, "instead: a recording host under telemetry from --sessions apps (default 50) in a child process, rounds with recording off and on in turn over --duration (default 60s); report dropped records, disk and the call latency on against off")
	fl.IntVar(&f.messages, "messages", 50, "with --record: telemetry messages each session sends a second")
	fl.IntVar(&f.frames, "frames", 10, "with --record: live frames each session sends a second")
	fl.IntVar(&f.maxSessions, "max-sessions", 0, fmt.Sprintf("with --record: search for the largest number of sessions, up to this many (at most %d), held with recording on and nothing dropped; --duration is each step's length (default 20s)", reliability.MaxRecordSessions))
	return cmd
}

// benchOptions turns the flags into the measurements' options.
func benchOptions(f benchFlags) (bench.Options, error) {
	opts := bench.DefaultOptions()
	if f.quick {
		opts = bench.QuickOptions()
	}
	if f.callers < 1 || f.callers > 64 {
		return opts, usageErrorf("--callers must be 1..64, not %d", f.callers)
	}
	if f.tool == "" {
		return opts, usageErrorf("--tool must name a tool")
	}
	opts.Callers, opts.Tool = f.callers, f.tool
	return opts, nil
}

func runBench(ctx context.Context, g *globals, f benchFlags) error {
	if runs := btoi(f.load) + btoi(f.enrollFlood != 0) + btoi(f.record); runs > 1 {
		return usageErrorf("--load, --enroll-flood and --record are separate runs: give one of them")
	}
	if f.maxSessions != 0 && !f.record {
		return usageErrorf("--max-sessions is a --record run: give --record too")
	}
	if f.load {
		return runLoad(ctx, g, f)
	}
	if f.record {
		return runRecordLoad(ctx, g, f)
	}
	if f.enrollFlood != 0 {
		return runEnrollFlood(ctx, g, f)
	}
	opts, err := benchOptions(f)
	if err != nil {
		return err
	}
	if !g.json {
		opts.Progress = func(m string) { fmt.Fprintf(g.env.Stderr, "measuring %s...\n", m) }
	}
	var rep *bench.Report
	if f.session != "" {
		b, err := g.backend()
		if err != nil {
			return err
		}
		rep, err = benchSession(ctx, b, f.session, opts)
		if err != nil {
			return hostErr(err)
		}
	} else {
		rep, err = benchLocal(ctx, opts)
		if err != nil {
			return err
		}
	}
	if g.json {
		return writeJSON(g.env.Stdout, rep)
	}
	return writeReport(g.env.Stdout, rep.WriteTable)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runRecordLoad runs the recording load; telemetry dropped, sends or calls that failed
// are an error.
func runRecordLoad(ctx context.Context, g *globals, f benchFlags) error {
	if f.session != "" {
		return usageErrorf("--record runs its own host and apps; it cannot be combined with --session")
	}
	opts := reliability.RecordLoadOptions{Messages: f.messages, Frames: f.frames, Progress: stressProgress(g)}
	if f.sessionsSet {
		opts.Sessions = f.sessions
	}
	if f.durationSet {
		opts.Duration = f.duration
	}
	if opts.Sessions < 0 || opts.Sessions > reliability.MaxRecordSessions || f.messages < 0 || f.messages > 1000 || f.frames < 0 || f.frames > 60 {
		return usageErrorf("with --record: --sessions must be 1..%d, --messages 0..1000, --frames 0..60", reliability.MaxRecordSessions)
	}
	if f.maxSessions != 0 {
		if f.sessionsSet {
			return usageErrorf("--max-sessions searches the session count: it cannot be combined with --sessions")
		}
		if f.maxSessions < 50 || f.maxSessions > reliability.MaxRecordSessions {
			return usageErrorf("--max-sessions must be 50..%d", reliability.MaxRecordSessions)
		}
		copts := reliability.RecordCapacityOptions{Messages: f.messages, Frames: f.frames, Limit: f.maxSessions, Progress: opts.Progress}
		if f.durationSet {
			copts.Step = f.duration
		}
		rep, err := benchRecCap(ctx, copts)
		if err != nil {
			return err
		}
		return writeStressReport(g, rep)
	}
	rep, err := benchRecord(ctx, opts)
	if err != nil {
		return err
	}
	return writeStressReport(g, rep)
}

// runLoad runs the reliability load test; a run that lost, failed or misrouted a response,
// or left goroutines behind, is an error.
func runLoad(ctx context.Context, g *globals, f benchFlags) error {
	if f.session != "" {
		return usageErrorf("--load runs its own host and apps; it cannot be combined with --session")
	}
	// The apps run in a child process: each side has its own file descriptors (10,000
	// sessions need 10,000 on each), and the host's memory and CPU are measured alone.
	if f.sessions < 1 || f.sessions > 10000 || f.inFlight < 1 || f.inFlight > 64 {
		return usageErrorf("--sessions must be 1..10000 and --in-flight 1..64")
	}
	opts := reliability.LoadOptions{Sessions: f.sessions, Duration: f.duration, InFlight: f.inFlight, AppProcess: true,
		Progress: stressProgress(g)}
	rep, err := benchLoad(ctx, opts)
	if err != nil {
		return err
	}
	return writeStressReport(g, rep)
}
