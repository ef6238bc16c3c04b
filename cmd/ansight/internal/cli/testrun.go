package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/flow"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// ExitTestFailed is the official CLI's code for a test that failed: a flow failed.
const ExitTestFailed = 10

// testRunOptions are the flags of 'ansight test run'.
type testRunOptions struct {
	session     string
	appID       string
	demo        bool
	allSessions bool
	vars        []string
	junit       string
	report      string
	parallel    int
	wait        time.Duration
}

func newTestRunCmd(g *globals) *cobra.Command {
	var o testRunOptions
	cmd := &cobra.Command{
		Use:   "run FLOW_OR_DIR...",
		Short: "Run flows against app sessions and report them (terminal, --json, --junit, --report)",
		Long: `Run flows (files, or directories searched for files whose schema is ansight.flow/v1)
against app sessions. Each flow runs against the session --session names, else the one
connected session of --app-id or of the flow's appId, else the only connected session;
--all-sessions runs it against every matching session, and with --fleet against every
host's. One session's flows run one after another, sessions in parallel.

Every flow is checked first: a mistake in one (its file, line, column and step) stops the
run before anything is called, with exit 2. While flows run, each step is shown as it ends;
--json prints one ansight.test-run/v1 object instead. --junit FILE writes JUnit XML for CI
(a testsuite per session, a testcase per flow), --report DIR an HTML page with every step,
its timing, the screenshots, and the failing step's screen and visual tree.

Exit codes: 0 every flow passed, 10 a flow failed, 2 a flow is not valid, 4 no host is
running, 7 no session to run against (or it went away).`,
		Example: "  ansight test run examples/flows --demo\n  ansight test run flows/ --app-id com.ansight.demo.notes --junit junit.xml --report report\n" +
			"  ansight test run login.yaml --var user=ann --all-sessions",
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return g.runTestRun(c.Context(), o, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.session, "session", "", "run every flow against this session")
	fl.StringVar(&o.appID, "app-id", "", "run against the connected session of this app (instead of each flow's appId)")
	fl.BoolVar(&o.demo, "demo", false, "run a host and the demo app in this process and run the flows against it")
	fl.BoolVar(&o.allSessions, "all-sessions", false, "run each flow against every matching connected session")
	fl.StringArrayVar(&o.vars, "var", nil, "a value for ${var.NAME}: NAME=VALUE (repeat)")
	fl.StringVar(&o.junit, "junit", "", "write a JUnit XML report to this file")
	fl.StringVar(&o.report, "report", "", "write an HTML report (index.html and screenshots) to this directory")
	fl.IntVar(&o.parallel, "parallel", 0, "at most this many sessions at once (0: all)")
	fl.DurationVar(&o.wait, "wait", 0, "wait up to this long for the flows' sessions to connect (an app started just before)")
	return cmd
}

func (g *globals) runTestRun(ctx context.Context, o testRunOptions, paths []string) error {
	if o.session != "" && (o.appID != "" || o.allSessions) {
		return usageErrorf("--session names one session: give it without --app-id and --all-sessions")
	}
	vars, flows, err := g.runnableFlows(o, paths)
	if err != nil {
		return err
	}

	b, err := g.testBackend(ctx, o.demo)
	if err != nil {
		return err
	}
	jobs, err := awaitJobs(ctx, b, flows, o)
	if err != nil {
		return err
	}
	progress := g.testProgress(jobs)
	rep := flow.RunAll(ctx, jobs, flow.Options{Vars: vars, Progress: progress}, o.parallel)
	if o.report != "" {
		g.linkRecordings(ctx, b, rep, o.report)
		if err := rep.WriteHTML(o.report); err != nil {
			return fmt.Errorf("--report: %w", err)
		}
	}
	if o.junit != "" {
		if err := writeFileWith(o.junit, rep.WriteJUnit); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	if g.json {
		if err := writeJSON(g.env.Stdout, rep); err != nil {
			return err
		}
	} else {
		g.testSummary(rep, o)
	}
	return testExit(ctx, rep)
}

// runnableFlows reads the --var values and the flows under paths, and refuses the run
// (before anything is called) when a flow is not valid or there is none.
func (g *globals) runnableFlows(o testRunOptions, paths []string) (map[string]string, []*flow.Flow, error) {
	vars, err := flow.ParseVars(o.vars)
	if err != nil {
		return nil, nil, &exitError{code: ExitUsage, err: err}
	}
	entries, err := loadFlows(g.env.Stderr, paths, g.json)
	if err != nil {
		return nil, nil, err
	}
	if err := invalidFlows(g.env.Stderr, entries, vars); err != nil {
		return nil, nil, err
	}
	var flows []*flow.Flow
	for _, e := range entries {
		if e.Flow != nil {
			flows = append(flows, e.Flow)
		}
	}
	if len(flows) == 0 {
		return nil, nil, &exitError{code: ExitUsage, err: errNoFlows}
	}
	return vars, flows, nil
}

// awaitJobs plans the jobs, looking again for up to --wait while no session matches.
func awaitJobs(ctx context.Context, b hostapi.Backend, flows []*flow.Flow, o testRunOptions) ([]flow.Job, error) {
	jobs, err := planJobs(ctx, b, flows, o)
	for deadline := time.Now().Add(o.wait); err != nil && exitCodeOf(ctx, err) == ExitNoSession && time.Now().Before(deadline); {
		// The app under test may still be connecting: look again (as the official CLI's
		// --wait-seconds does).
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		jobs, err = planJobs(ctx, b, flows, o)
	}
	return jobs, err
}

// testBackend is the host the flows run against: the demo in this process, the fleet, or
// the resident host.
func (g *globals) testBackend(ctx context.Context, demo bool) (hostapi.Backend, error) {
	if !demo {
		b, err := g.backend()
		if err != nil {
			return nil, err
		}
		if _, err := b.Status(ctx); err != nil {
			return nil, hostErr(err)
		}
		return b, nil
	}
	b, stop, err := startEmbedded(ctx, g, true)
	if err != nil {
		return nil, fmt.Errorf("start the demo: %w", err)
	}
	g.cleanup = append(g.cleanup, stop)
	return b, nil
}

// planJobs pairs each flow with the sessions it runs against.
func planJobs(ctx context.Context, b hostapi.Backend, flows []*flow.Flow, o testRunOptions) ([]flow.Job, error) {
	list, err := b.Sessions(ctx)
	if err != nil {
		return nil, hostErr(err)
	}
	var connected []hostapi.Session
	for _, s := range list.Sessions {
		if s.State == hostapi.StateConnected {
			connected = append(connected, s)
		}
	}
	var jobs []flow.Job
	add := func(f *flow.Flow, s hostapi.Session) {
		jobs = append(jobs, flow.Job{Flow: f, Target: flow.SessionTarget{Backend: b, SessionID: s.ID},
			SessionID: s.ID, AppID: s.AppID, Host: s.Host})
	}
	for _, f := range flows {
		if o.session != "" {
			s, err := b.Session(ctx, o.session)
			if err != nil {
				return nil, hostErr(err)
			}
			add(f, *s)
			continue
		}
		app := o.appID
		if app == "" && !o.demo {
			app = f.AppID
		}
		var matches []hostapi.Session
		for _, s := range connected {
			if app == "" || s.AppID == app {
				matches = append(matches, s)
			}
		}
		switch {
		case len(matches) == 0 && app != "":
			return nil, &exitError{code: ExitNoSession, err: fmt.Errorf("%s: no connected session of app %q", f.File, app),
				hint: "start the app (or run against the demo with --demo); 'ansight session list' shows the sessions"}
		case len(matches) == 0:
			return nil, &exitError{code: ExitNoSession, err: fmt.Errorf("%s: no app is connected", f.File),
				hint: "start an app with the Ansight SDK, or run against the demo with --demo"}
		case len(matches) > 1 && !o.allSessions:
			ids := make([]string, len(matches))
			for i, m := range matches {
				ids[i] = m.ID
			}
			sort.Strings(ids)
			return nil, &exitError{code: ExitUsage, err: fmt.Errorf("%s: %d sessions match: %s", f.File, len(matches), strings.Join(ids, ", ")),
				hint: "name one with --session, or run against each with --all-sessions"}
		}
		for _, s := range matches {
			add(f, s)
		}
	}
	return jobs, nil
}

// testProgress shows each step as it ends on stderr, unless --json. With several sessions
// every line names its session.
func (g *globals) testProgress(jobs []flow.Job) func(flow.Event) {
	if g.json {
		return nil
	}
	sessions := map[string]bool{}
	for _, j := range jobs {
		sessions[j.SessionID] = true
	}
	w := g.env.Stderr
	return func(e flow.Event) {
		prefix := ""
		if len(sessions) > 1 {
			prefix = e.Result.SessionID + ": "
		}
		s := e.Step
		if s.Status == "" {
			if len(e.Result.Steps) == 1 {
				printf(w, "%s%s (%s)\n", prefix, e.Result.Name, e.Result.File)
			}
			return
		}
		mark := map[flow.Status]string{flow.StatusPassed: "ok  ", flow.StatusFailed: "FAIL", flow.StatusError: "ERR ", flow.StatusSkipped: "skip"}[s.Status]
		printf(w, "%s  %s %s[%d] %s  %s\n", prefix, mark, s.Phase, s.Index, s.Label, (time.Duration(s.DurationMS) * time.Millisecond).String())
		if s.Failure != nil {
			printf(w, "%s       %s\n", prefix, s.Failure.Message)
		}
	}
}

// testSummary prints one line per flow and the totals.
func (g *globals) testSummary(rep *flow.Report, o testRunOptions) {
	w := g.env.Stdout
	for _, r := range rep.Results {
		printf(w, "%-7s %s on %s (%d steps, %s)\n", r.Status, r.Name, r.SessionID, len(r.Steps), (time.Duration(r.DurationMS) * time.Millisecond).String())
		if r.Failure != nil {
			printf(w, "        %s\n", r.Failure.Message)
		}
	}
	line := fmt.Sprintf("%d passed, %d failed", rep.Passed, rep.Failed)
	if rep.Errors > 0 {
		line += fmt.Sprintf(", %d in error", rep.Errors)
	}
	printf(w, "%s, %s\n", line, (time.Duration(rep.DurationMS) * time.Millisecond).String())
	if o.junit != "" {
		printf(w, "JUnit report: %s\n", o.junit)
	}
	if o.report != "" {
		printf(w, "HTML report: %s\n", filepath.Join(o.report, "index.html"))
	}
}

// testExit is the run's exit code: 10 when a flow failed, 7 when the only problems were
// sessions that went away, 10 for a flow in error otherwise.
func testExit(ctx context.Context, rep *flow.Report) error {
	if rep.Failed == 0 && rep.Errors == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return &exitError{code: ExitInterrupted, err: errors.New("interrupted")}
	}
	code := ExitTestFailed
	if rep.Failed == 0 {
		code = ExitNoSession
		for _, r := range rep.Results {
			if r.Status == flow.StatusError && !sessionGone(r) {
				code = ExitTestFailed
			}
		}
	}
	// The report (the summary, or --json's object) already says what did not pass.
	return &exitError{code: code, err: silentError{}}
}

// sessionGone reports whether a flow is in error because its session went away.
func sessionGone(r *flow.Result) bool {
	if r.Failure == nil {
		return false
	}
	msg := r.Failure.Message
	for _, c := range []wire.Code{wire.CodeSessionNotFound, wire.CodeSessionClosed} {
		if strings.Contains(msg, string(c)) {
			return true
		}
	}
	return strings.Contains(msg, "no session") || strings.Contains(msg, "disconnected")
}

// linkRecordings exports each session's recording beside the HTML report and links it
// from its flows (best effort: a host that records nothing has none).
func (g *globals) linkRecordings(ctx context.Context, b hostapi.Backend, rep *flow.Report, dir string) {
	done := map[string]string{}
	for _, r := range rep.Results {
		path, ok := done[r.SessionID]
		if !ok {
			path = filepath.Join(dir, "recordings", safeFileName(r.SessionID)+".zip")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				path = ""
			} else if err := writeFileWith(path, func(w io.Writer) error { return b.Export(ctx, r.SessionID, hostapi.ExportRequest{}, w) }); err != nil {
				os.Remove(path)
				path = ""
			}
			done[r.SessionID] = path
		}
		if path != "" {
			r.Recording = filepath.ToSlash(filepath.Join("recordings", filepath.Base(path)))
		}
	}
}

// safeFileName keeps letters, digits, '.', '-' and '_'.
func safeFileName(s string) string {
	return strings.Map(func(c rune) rune {
		if c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return c
		}
		return '_'
	}, s)
}

// writeFileWith writes a file through write, creating its directory.
func writeFileWith(path string, write func(io.Writer) error) error {
	if err := mkdirFor(path); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
