package cli

import (
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/fleet"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/player"
	"github.com/ansight-go/ansight/wire"
)

// demoOptions are the flags of 'ansight demo'.
type demoOptions struct {
	keep       bool
	discovery  string
	playerAddr string
	noPlayer   bool
	shotPath   string
	fleetHost  string
}

func newDemoCmd(g *globals) *cobra.Command {
	o := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a host and a demo app, and walk through the protocol (no phone needed)",
		Long: `Start a host and the demo notes app (a simulated phone screen) in this process, connect
them over a real loopback session (UDP enrollment, WebSocket upgrade, control channel),
then walk through what the protocol does: discovery with a compact index, one
definition, a read call, a write call with post-call evidence, a batch, a screenshot saved
as a file, and calls the host refuses.

With --keep-running, both stay up afterwards and the other commands work against them:
  ansight session list
  ansight app tools --app-id com.ansight.demo.notes
With --keep-running and --fleet, the host also joins that device lab (see 'host run').`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return o.run(c.Context(), g) },
	}
	cmd.Flags().BoolVar(&o.keep, "keep-running", false, "leave the host and the demo app running (until Ctrl-C or 'ansight host stop')")
	cmd.Flags().StringVar(&o.shotPath, "screenshot", "ansight-demo-screenshot.png", "where to save the demo's screenshot")
	cmd.Flags().StringVar(&o.discovery, "discovery", "", "with --keep-running: UDP enrollment address (default 127.0.0.1:45123 when free, else any free port; 127.0.0.1:0 never takes the standard port)")
	cmd.Flags().StringVar(&o.playerAddr, "player", player.DefaultAddr, "with --keep-running: loopback address of the web player")
	cmd.Flags().BoolVar(&o.noPlayer, "no-player", false, "with --keep-running: do not serve the web player")
	addFleetHostFlag(cmd, &o.fleetHost)
	return cmd
}

// demoStep is one step of the walkthrough, as --json reports it.
type demoStep struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Summary string `json:"summary"`
}

type demoReport struct {
	Schema     string     `json:"schema"`
	SessionID  string     `json:"sessionId"`
	Screenshot string     `json:"screenshot,omitzero"`
	Steps      []demoStep `json:"steps"`
	OK         bool       `json:"ok"`
}

// demoWalk prints the walkthrough and collects its report.
type demoWalk struct {
	out    io.Writer
	quiet  bool
	report demoReport
	// command writes a follow-up command with the run's host flags (globals.command).
	command func(args string) string
}

func (d *demoWalk) printf(format string, args ...any) {
	if !d.quiet {
		printf(d.out, format, args...)
	}
}

func (d *demoWalk) step(n int, title string) {
	d.printf("\n%d. %s\n", n, title)
}

func (d *demoWalk) done(name string, ok bool, summary string) {
	d.report.Steps = append(d.report.Steps, demoStep{Name: name, OK: ok, Summary: summary})
	mark := "ok"
	if !ok {
		mark = "FAILED"
	}
	d.printf("   → %s: %s\n", mark, summary)
}

// run starts the host and the demo app, walks through the protocol and, with
// --keep-running, keeps both up for the other commands.
func (o *demoOptions) run(ctx context.Context, g *globals) error {
	if !o.keep && (g.fleet.url != "" || o.fleetHost != "") {
		return usageErrorf("the demo joins a fleet only with --keep-running")
	}
	stateDir, release, err := o.stateDir(g)
	if err != nil {
		return err
	}
	defer release()
	rh, cfg, err := o.startHost(ctx, g, stateDir)
	if err != nil {
		return err
	}
	defer rh.close()

	w := &demoWalk{out: g.env.Stdout, quiet: g.json, report: demoReport{Schema: "ansight.demo/v1"}, command: g.command}
	st, _ := rh.Backend().Status(ctx)
	w.printf("ansight demo: a host and the demo notes app, connected over a real loopback session\n")
	w.printf("   host: enrollment udp://%s, websocket ws://%s/ws\n", st.Discovery, st.WebSocket)
	discard := slog.New(slog.DiscardHandler)
	stopApp, err := connectDemoApp(ctx, rh, stateDir, discard)
	if err != nil {
		return err
	}
	defer stopApp()
	sid, err := demoSession(ctx, w, rh.Backend())
	if err != nil {
		return err
	}
	if err := demoSteps(ctx, w, rh.Backend(), sid, o.shotPath); err != nil {
		return err
	}
	if err := w.finish(g); err != nil {
		return err
	}
	if o.keep {
		return o.keepRunning(ctx, g, w, rh, cfg, sid)
	}
	if !g.json {
		w.printf("\nNext: '%s' keeps both up for the other commands; 'ansight --help' lists them.\n", g.command("demo --keep-running"))
	}
	return nil
}

// stateDir is the host's state directory: the user's, locked, with --keep-running, else a
// temporary one. release unlocks or removes it.
func (o *demoOptions) stateDir(g *globals) (dir string, release func(), err error) {
	if !o.keep {
		dir, err := os.MkdirTemp("", "ansight-demo-")
		if err != nil {
			return "", nil, err
		}
		return dir, func() { os.RemoveAll(dir) }, nil
	}
	dir, err = g.stateDirPath()
	if err != nil {
		return "", nil, err
	}
	lock, err := lockStateDir(dir) // before the tour, not after it
	if err != nil {
		return "", nil, err
	}
	return dir, lock.release, nil
}

// startHost starts the demo's host. The control socket opens only after the walkthrough
// (keepRunning), so that other commands never race with it.
func (o *demoOptions) startHost(ctx context.Context, g *globals, stateDir string) (*runningHost, hostConfig, error) {
	discard := slog.New(slog.DiscardHandler)
	discovery := "127.0.0.1:0"
	if o.keep {
		// A resident demo host takes the standard port when it is free, so that other apps
		// (go run ./examples/demoapp) find it too; --discovery keeps it off the port a host
		// started later needs (the CLI's test scripts, run beside other hosts).
		discovery = o.discovery
		if discovery == "" {
			discovery = freeOrDefault("127.0.0.1:45123")
		}
	}
	playerAddr := o.playerAddr
	if o.noPlayer || !o.keep {
		playerAddr = ""
	}
	cfg := hostConfig{stateDir: stateDir, discovery: discovery, listen: "127.0.0.1:0", logger: discard, version: g.env.Version, player: playerAddr,
		record: o.keep, bindFlags: demoBindFlags}
	if o.keep { // a walkthrough alone never joins a fleet, even with $ANSIGHT_FLEET set
		if err := g.joinFleetConfig(&cfg, o.fleetHost, discard); err != nil {
			return nil, cfg, err
		}
	}
	rh, err := startHost(ctx, cfg)
	var inUse *addrInUseError
	if err != nil && o.discovery == "" && discovery != "127.0.0.1:0" && errors.As(err, &inUse) && inUse.what == listenerEnrollment {
		// Another host took the standard port since freeOrDefault looked (two demos
		// started at once): any port will do.
		cfg.discovery = "127.0.0.1:0"
		rh, err = startHost(ctx, cfg)
	}
	if err != nil {
		return nil, cfg, hostErr(err)
	}
	return rh, cfg, nil
}

// demoSession finds the demo app's connected session.
func demoSession(ctx context.Context, w *demoWalk, b hostapi.Backend) (string, error) {
	sessions, _ := b.Sessions(ctx)
	var sess hostapi.Session
	for _, s := range sessions.Sessions {
		if s.AppID == demoAppID && s.State == hostapi.StateConnected {
			sess = s
		}
	}
	if sess.ID == "" {
		return "", fmt.Errorf("the demo app connected, but the host lists no session for it")
	}
	w.report.SessionID = sess.ID
	w.printf("   app:  %s enrolled in local mode as session %s (grant: %s)\n", sess.AppID, sess.ID, sess.MaxToolPolicy)
	return sess.ID, nil
}

// finish reports the walkthrough: its JSON report, or that every step passed; a failed
// step fails the command.
func (d *demoWalk) finish(g *globals) error {
	d.report.OK = true
	for _, s := range d.report.Steps {
		d.report.OK = d.report.OK && s.OK
	}
	if g.json {
		if err := writeJSON(g.env.Stdout, d.report); err != nil {
			return err
		}
	} else if d.report.OK {
		d.printf("\nAll steps passed.\n")
	}
	if !d.report.OK {
		return &exitError{code: ExitFailure, err: fmt.Errorf("the demo failed a step")}
	}
	return nil
}

// keepRunning serves the control socket and keeps the host and the app up until Ctrl-C or
// 'ansight host stop'.
func (o *demoOptions) keepRunning(ctx context.Context, g *globals, w *demoWalk, rh *runningHost, cfg hostConfig, sid string) error {
	if err := rh.serveControl(); err != nil {
		return err
	}
	if !g.json {
		w.printf("\nThe host and the demo app keep running (control socket %s). In another terminal:\n", rh.SocketPath())
		for _, c := range []string{"session list", "app tools " + sid, "app call " + sid + " notes.list", "app screenshot " + sid + " -o screen.png",
			"session logs " + sid + " -f", "session network " + sid} {
			w.printf("   %s\n", g.command(c))
		}
		if u := rh.PlayerURL(); u != "" {
			w.printf("Or open the web player: %s\n", u)
		}
		if m := rh.Member(); m != nil {
			w.printf("The host is in fleet %s as %s: 'ansight --fleet %s session list' shows it from any machine.\n",
				m.Fleet(), m.Host(), fleet.RedactURL(cfg.fleet.URL))
		}
		w.printf("Press Ctrl-C (or run '%s') to stop.\n", g.command("host stop"))
	}
	select {
	case <-ctx.Done():
	case <-rh.Done():
	}
	return nil
}

// demoTour walks one session of the demo app through the protocol.
type demoTour struct {
	w        *demoWalk
	b        hostapi.Backend
	sid      string
	shotPath string
}

// demoSteps runs the walkthrough's steps in order; the first that cannot run ends it.
func demoSteps(ctx context.Context, w *demoWalk, b hostapi.Backend, sid, shotPath string) error {
	t := &demoTour{w: w, b: b, sid: sid, shotPath: shotPath}
	for _, step := range []func(context.Context) error{t.discovery, t.definition, t.read, t.write, t.batch, t.screenshot, t.refusals, t.telemetry} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// call is one call of the tour, which must reach the app.
func (t *demoTour) call(ctx context.Context, req hostapi.CallRequest) (*hostapi.Call, error) {
	return t.b.Call(ctx, t.sid, req, nil)
}

// 1. Discovery: the compact index, then the same question answered as unchanged.
func (t *demoTour) discovery(ctx context.Context) error {
	t.w.step(1, "Discovery: the compact index (no schemas)")
	idx, err := t.b.Tools(ctx, t.sid, hostapi.ToolsRequest{})
	if err != nil {
		return err
	}
	idxBytes, _ := json.Marshal(idx)
	for _, e := range idx.Tools {
		t.w.printf("   %-24s %-8s %s\n", e.ID, e.Policy, entryState(&e))
	}
	t.w.done("index", idx.Count > 0, fmt.Sprintf("%d tools in %d bytes, revision %s", idx.Count, len(idxBytes), shortRevision(idx.Revision)))

	again, err := t.b.Tools(ctx, t.sid, hostapi.ToolsRequest{IfRevision: idx.Revision})
	if err != nil {
		return err
	}
	t.w.done("unchanged", again.Unchanged, "asked again with ifRevision: the catalog is unchanged, nothing listed")
	return nil
}

// 2. One definition.
func (t *demoTour) definition(ctx context.Context) error {
	t.w.step(2, "One definition, with its schemas: notes.create")
	def, err := t.b.Tool(ctx, t.sid, "notes.create")
	if err != nil {
		return err
	}
	t.w.printf("   arguments: %s\n", compactJSON(def.Tool.ArgumentsSchema, 110))
	t.w.done("definition", len(def.Tool.ArgumentsSchema) > 0, "definitionRevision "+shortRevision(def.Tool.DefinitionRevision))
	return nil
}

// 3. A read call.
func (t *demoTour) read(ctx context.Context) error {
	t.w.step(3, "A read call: notes.list")
	res, err := t.call(ctx, hostapi.CallRequest{ToolID: "notes.list", Arguments: jsontext.Value(`{}`)})
	if err != nil {
		return err
	}
	t.w.printf("   result: %s\n", resultSnippet(res))
	t.w.done("read", res.Success, fmt.Sprintf("%d ms", res.DurationMS))
	return nil
}

// 4. A write call with evidence.
func (t *demoTour) write(ctx context.Context) error {
	t.w.step(4, "A write call with post-call evidence: notes.create, then the visual tree")
	res, err := t.call(ctx, hostapi.CallRequest{ToolID: "notes.create",
		Arguments: jsontext.Value(`{"title":"Try ansight","body":"Created by ansight demo"}`),
		After:     &wire.After{Include: []string{wire.EvidenceVisualTree}}})
	if err != nil {
		return err
	}
	t.w.printf("   result: %s\n", resultSnippet(res))
	ev := "no evidence"
	if res.Result != nil {
		if o, ok := res.Result.Evidence[wire.EvidenceVisualTree]; ok && o.Success {
			ev = fmt.Sprintf("evidence visualTree: %d nodes, the new note among them: %v", strings.Count(string(o.Result), `"id":`), strings.Contains(string(o.Result), "Try ansight"))
		}
	}
	t.w.done("write+evidence", res.Success && strings.Contains(ev, "true"), ev)
	return nil
}

// 5. A batch: tap the new note's row, then read the screen, in one request.
func (t *demoTour) batch(ctx context.Context) error {
	t.w.step(5, "A batch: tap the new note's row, then read the screen, in one request")
	find, err := t.call(ctx, hostapi.CallRequest{ToolID: "ui.query_nodes", Arguments: jsontext.Value(`{"textContains":"Try ansight","maxResults":1}`)})
	if err != nil {
		return err
	}
	ref, ok := firstReference(find)
	if !ok {
		t.w.done("batch", false, "ui.query_nodes found no row for the new note: "+resultSnippet(find))
		return nil
	}
	tap, _ := json.Marshal(map[string]any{"reference": ref, "action": "tap"})
	batch, err := t.b.Batch(ctx, t.sid, hostapi.BatchRequest{Calls: []hostapi.CallRequest{
		{CallID: "open", ToolID: "ui.perform_action", Arguments: tap},
		{CallID: "state", ToolID: "app.get_state", Arguments: jsontext.Value(`{}`)},
		{CallID: "title", ToolID: "ui.query_nodes", Arguments: jsontext.Value(`{"role":"textField","maxResults":2}`)},
	}}, nil)
	if err != nil {
		return err
	}
	if batch.Result == nil {
		t.w.done("batch", false, string(batch.Error.Code)+": "+batch.Error.Message)
		return nil
	}
	for _, it := range batch.Result.Results {
		outcome := compactJSON(it.Result, 70)
		if !it.Success && it.Error != nil {
			outcome = string(it.Error.Code) + ": " + it.Error.Message
		}
		t.w.printf("   [%d] %-17s %-6s %s\n", it.Index, it.ToolID, it.CallID, outcome)
	}
	t.w.done("batch", batch.Success, fmt.Sprintf("%d of %d calls in one request, %d ms", batch.Result.Completed, batch.Result.Requested, batch.DurationMS))
	return nil
}

// 6. A screenshot over the binary stream, saved where --screenshot says.
func (t *demoTour) screenshot(ctx context.Context) error {
	t.w.step(6, "A screenshot: ui.get_screenshot, the PNG streamed over ASFT")
	res, err := t.call(ctx, hostapi.CallRequest{ToolID: wire.ScreenshotToolID, Arguments: jsontext.Value(`{"format":"png"}`)})
	if err != nil {
		return err
	}
	shotOK, summary := false, "no screenshot"
	if res.Error != nil {
		summary = string(res.Error.Code) + ": " + res.Error.Message
	}
	for _, a := range res.Artifacts {
		if a.Status != "complete" {
			summary = "transfer " + a.Status + ": " + a.Error
			continue
		}
		if err := mkdirFor(t.shotPath); err != nil {
			return err
		}
		if err := moveFile(a.Path, t.shotPath); err != nil {
			return err
		}
		abs, _ := filepath.Abs(t.shotPath)
		wd, ht, err := imageSize(abs)
		if err != nil {
			summary = "the file is not an image: " + err.Error()
			break
		}
		t.w.report.Screenshot = abs
		shotOK, summary = true, fmt.Sprintf("saved %s (%dx%d, %s)", abs, wd, ht, humanBytes(a.SizeBytes))
	}
	t.w.done("screenshot", shotOK, summary)
	return nil
}

// 7. Calls the host refuses, and one the app refuses.
func (t *demoTour) refusals(ctx context.Context) error {
	t.w.step(7, "Refusals: a critical tool above the session's grant, and a tool not available yet")
	res, err := t.call(ctx, hostapi.CallRequest{ToolID: "notes.delete_all", Arguments: jsontext.Value(`{}`)})
	if err != nil {
		return err
	}
	t.w.done("denied", res.Error != nil && res.Error.Kind == wire.KindDenied, refusalSummary(res))
	res, err = t.call(ctx, hostapi.CallRequest{ToolID: "sync.push", Arguments: jsontext.Value(`{}`)})
	if err != nil {
		return err
	}
	t.w.done("unavailable", res.Error != nil && res.Error.Kind == wire.KindUnavailable, refusalSummary(res))
	return nil
}

// 8. Telemetry: an HTTP request of the app, reported by the SDK and recorded.
func (t *demoTour) telemetry(ctx context.Context) error {
	t.w.step(8, "Telemetry: the app syncs its notes over HTTP; the SDK reports the request to the host")
	return demoSync(ctx, t.w, t.b, t.sid)
}

// demoSync signs in, pushes the notes to the demo's sync server (an HTTP request made
// through the SDK's telemetry RoundTripper) and signs out again, leaving the app as it
// was. When the host records, it waits for the request's network record.
func demoSync(ctx context.Context, w *demoWalk, b hostapi.Backend, sid string) error {
	calls := []hostapi.CallRequest{
		{ToolID: "account.sign_in", Arguments: jsontext.Value(`{"userName":"demo"}`)},
		{ToolID: "sync.push", Arguments: jsontext.Value(`{}`)},
		{ToolID: "account.sign_out", Arguments: jsontext.Value(`{}`)},
	}
	var push *hostapi.Call
	for _, c := range calls {
		res, err := b.Call(ctx, sid, c, nil)
		if err != nil {
			return err
		}
		if !res.Success {
			w.done("telemetry", false, c.ToolID+": "+resultSnippet(res))
			return nil
		}
		if c.ToolID == "sync.push" {
			push = res
		}
	}
	w.printf("   sync.push: %s\n", resultSnippet(push))
	// The record comes after the call's answer (telemetry never holds up a tool call):
	// follow the recording until it is there.
	fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var rec hostapi.Record
	errFound := errors.New("found")
	err := b.Follow(fctx, sid, hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordNetwork}}, func(r hostapi.Record) error {
		rec = r
		return errFound
	})
	switch {
	case errors.Is(err, errFound):
		w.done("telemetry", true, fmt.Sprintf("recorded: %s (%s)", rec.Text, w.command("session network "+sid)))
	case wire.CodeOf(err) == wire.CodeRecordingOff:
		w.done("telemetry", true, "the notes went to the sync server (this host records nothing: 'ansight demo --keep-running' keeps the request)")
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		w.done("telemetry", false, "the sync's network request was not recorded: "+fmt.Sprint(err))
	}
	return nil
}

// firstReference returns the node reference of the first match of a ui.query_nodes result.
func firstReference(res *hostapi.Call) (jsontext.Value, bool) {
	if res.Result == nil {
		return nil, false
	}
	var r struct {
		Matches []struct {
			Reference jsontext.Value `json:"reference"`
		} `json:"matches"`
	}
	if err := json.Unmarshal(res.Result.Result, &r); err != nil || len(r.Matches) == 0 || len(r.Matches[0].Reference) == 0 {
		return nil, false
	}
	return r.Matches[0].Reference, true
}

func refusalSummary(res *hostapi.Call) string {
	if res.Error == nil {
		return "the call was not refused"
	}
	by := "the app"
	if res.Error.RefusedByHost {
		by = "the host (the app never saw the call)"
	}
	return fmt.Sprintf("%s refused by %s: %s", res.Error.Code, by, res.Error.Message)
}

func resultSnippet(res *hostapi.Call) string {
	if res.Error != nil {
		return string(res.Error.Code) + ": " + res.Error.Message
	}
	if res.Result == nil {
		return "(none)"
	}
	return compactJSON(res.Result.Result, 110)
}

func compactJSON(v jsontext.Value, n int) string {
	c := v.Clone()
	c.Compact()
	return oneLine(string(c), n)
}

func imageSize(path string) (int, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	cfg, _, err := image.DecodeConfig(f)
	if err != nil {
		return 0, 0, err
	}
	return cfg.Width, cfg.Height, nil
}
