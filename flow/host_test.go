package flow

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/examples/notes"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/control"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/transport"
)

// demoHost is a real host in this process (host.Server behind control.Backend) with the demo
// notes app connected over UDP enrollment and a WebSocket session, as 'ansight demo' runs
// them. The local app's grant is the host's default for local apps: write.
type demoHost struct {
	srv     *host.Server
	backend hostapi.Backend
	session string
}

func startDemoHost(t testing.TB) *demoHost {
	t.Helper()
	dir := t.TempDir()
	opts := host.Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", StateDir: dir,
		Logger: slog.New(slog.DiscardHandler), KeepAlive: transport.KeepAlive{Interval: -1}}
	opts.Tools.ArtifactDir = filepath.Join(dir, "artifacts")
	srv, err := host.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The guard of the demo (every tool listed): the grant alone must refuse critical ones.
	a := app.New(app.Options{Guard: catalog.GuardFullAccess, Logger: slog.New(slog.DiscardHandler)})
	model := notes.New(notes.Options{})
	stopSync, err := model.ServeSync(nil) // as the demo: sync.push uploads to a server
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopSync)
	if err := model.Register(a); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	port := int(srv.DiscoveryAddr().Port())
	go func() {
		defer close(done)
		connect.Run(ctx, a, connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{port}}, connect.Options{
			AppID: "com.ansight.demo.notes", AppName: "Notes", AppVersion: "1.0", DeviceName: "flow test",
			StateDir: filepath.Join(dir, "app"), ReconnectDelay: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		srv.Close()
	})
	// A bound against hanging, not a timing assertion: the session opens in milliseconds.
	wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
	defer wcancel()
	s, err := srv.WaitSession(wctx, func(s *host.Session) bool {
		in := s.Info()
		return in.State == host.StateConnected && in.Opened
	})
	if err != nil {
		t.Fatalf("the demo app did not connect: %v", err)
	}
	return &demoHost{srv: srv, backend: control.New(srv, control.Options{Version: "test", StateDir: dir}), session: s.Info().ID}
}

func (h *demoHost) target() SessionTarget {
	return SessionTarget{Backend: h.backend, SessionID: h.session}
}

// TestDemoSession runs a flow of calls, a batch, a screenshot and a refusal against the
// real demo app behind a real host: the grant is the host's (write), and a flow cannot
// raise it.
func TestDemoSession(t *testing.T) {
	t.Parallel()
	h := startDemoHost(t)
	f := parse(t, `schema: ansight.flow/v1
name: demo notes
steps:
  - call: notes.create
    arguments: {title: Groceries, body: milk}
    save: note
    expect:
      - {path: /title, equals: Groceries}
      - {path: /id, matches: "^n[0-9]+$"}
      - {path: /createdAtUtc, matches: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T"}
  - call: notes.get
    arguments: {id: "${note.id}"}
    expect: [{path: /body, contains: milk}, {path: /id, equals: "${note.id}"}]
  - batch:
      - {call: notes.list}
      - {call: app.get_state}
    expect: [{path: /completed, equals: 2}]
  - screenshot: list
  - call: notes.delete_all
    expectError: {code: tool_policy_not_granted, kind: denied}
    expect: [{path: /refusedByHost, equals: true}]
`)
	r := Run(context.Background(), f, h.target(), Options{SessionID: h.session})
	if r.Status != StatusPassed {
		t.Fatalf("%s: %+v", r.Status, r.Failure)
	}
	shot := r.Steps[3].Screenshot
	if shot == nil || len(shot.PNG) < 1000 || string(shot.PNG[1:4]) != "PNG" {
		t.Fatalf("screenshot: %+v", shot)
	}
	// The refused call never reached the app: the notes are still there.
	c, err := h.backend.Call(context.Background(), h.session, hostapi.CallRequest{ToolID: "notes.list"}, nil)
	if err != nil || !c.Success {
		t.Fatalf("%v %+v", err, c)
	}
	if n := strconv.Quote(string(c.Result.Result)); len(n) < 40 {
		t.Errorf("notes after the refusal: %s", n)
	}
}

// TestDemoFailureEvidence: a failing step keeps the real screen and visual tree.
func TestDemoFailureEvidence(t *testing.T) {
	t.Parallel()
	h := startDemoHost(t)
	f := parse(t, "schema: ansight.flow/v1\nsteps:\n  - call: notes.list\n    expect: {path: /notes, length: 99}\n")
	r := Run(context.Background(), f, h.target(), Options{SessionID: h.session})
	s := r.Steps[0]
	if r.Status != StatusFailed || s.Screenshot == nil || len(s.Tree) == 0 {
		t.Fatalf("%s %+v", r.Status, s)
	}
	if !jsonHas(s.Tree, "snapshotId") {
		t.Errorf("the tree is not ui.get_visual_tree's: %.200s", s.Tree)
	}
}

func jsonHas(v []byte, member string) bool {
	doc, err := parseResult(v)
	return err == nil && doc.get(member) != nil
}

// TestDemoStepNeverAnswers: a call the app takes a minute to answer (ui.wait for a node
// that never appears) ends at the step's timeout, naming the step, and the teardown runs.
func TestDemoStepNeverAnswers(t *testing.T) {
	t.Parallel()
	h := startDemoHost(t)
	f := parse(t, `schema: ansight.flow/v1
steps:
  - call: ui.wait
    arguments: {condition: exists, textContains: "never on the screen", timeoutMilliseconds: 60000}
    timeout: 1s
  - call: notes.list
teardown:
  - call: app.get_state
`)
	r := Run(context.Background(), f, h.target(), Options{SessionID: h.session})
	if r.Status != StatusFailed || statuses(r) != "steps:failed steps:skipped teardown:passed" {
		t.Fatalf("%s %s %+v", r.Status, statuses(r), r.Failure)
	}
	if !strings.Contains(r.Failure.Message, "steps[0] call ui.wait (t.yaml:3:5): the step did not finish within its timeout (1s)") {
		t.Errorf("%s", r.Failure.Message)
	}
}
