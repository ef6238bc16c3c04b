package mcpbridge

import (
	"context"
	"errors"
	"image"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/app"
	appconnect "github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/control"
	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// liveApp is a real host (over loopback sockets) with a real SDK app connected, for the
// bridge's end-to-end tests.
type liveApp struct {
	srv       *host.Server
	backend   *control.Backend
	sessionID string
}

// startLive starts a host whose default wait for an answer is hostTimeout (lowered so that
// the tests need not wait 20 s to pass it) and connects an app with the tools register
// adds. Everything ends with the test.
func startLive(t *testing.T, hostTimeout time.Duration, register func(*app.App) error) *liveApp {
	t.Helper()
	srv, err := host.New(host.Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", StateDir: t.TempDir(),
		KeepAlive: transport.KeepAlive{Interval: -1}, Tools: tools.Options{ArtifactDir: t.TempDir(), Timeout: hostTimeout}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := app.New(app.Options{Guard: catalog.GuardFullAccess})
	if err := register(a); err != nil {
		t.Fatal(err)
	}
	const appID = "com.example.live"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- appconnect.Run(ctx, a, appconnect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{int(srv.DiscoveryAddr().Port())}},
			appconnect.Options{AppID: appID, StateDir: t.TempDir()})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		srv.Close()
	})
	// The test's own deadline (go test -timeout) bounds the wait: a busy machine takes
	// what it takes.
	s, err := srv.WaitSession(t.Context(), func(s *host.Session) bool {
		info := s.Info()
		return info.AppID == appID && info.Opened && info.State == host.StateConnected
	})
	if err != nil {
		t.Fatalf("no app session: %v", err)
	}
	return &liveApp{srv: srv, backend: control.New(srv, control.Options{}), sessionID: s.Info().ID}
}

// bridge connects a go-sdk client to a bridge over the live host, in memory.
func (l *liveApp) bridge(t *testing.T, opts Options) *mcp.ClientSession {
	t.Helper()
	br := New(l.backend, opts)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := br.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "live", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// savedScreen shows a status "Saved" once saved is set.
type savedScreen struct{ saved *atomic.Bool }

func (s savedScreen) Capture(context.Context) (*ui.Node, error) {
	root := &ui.Node{ID: "root", Role: "window", Label: "Editor", Bounds: &ui.Bounds{Width: 100, Height: 100}}
	if s.saved.Load() {
		root.Children = []*ui.Node{{ID: "status", Role: "status", Label: "Saved", Bounds: &ui.Bounds{Width: 50, Height: 10}}}
	}
	return root, nil
}
func (savedScreen) Perform(context.Context, string, ui.Action) (map[string]any, error) {
	return nil, nil
}
func (savedScreen) Render(context.Context) (image.Image, error) {
	return image.NewGray(image.Rect(0, 0, 4, 4)), nil
}

// blocking registers a read tool that runs until release is closed (or its context ends),
// with keywords.
func blocking(a *app.App, id, keywords string, release <-chan struct{}) error {
	return a.Register(app.Tool{Definition: catalog.Definition{ID: id, Name: id, Description: "Runs until released.", Category: "test",
		Policy: wire.PolicyRead, Keywords: keywords, ArgumentsSchema: jsontext.Value(`{"type":"object"}`),
		ResultSchema: jsontext.Value(`{"type":"object","properties":{"done":{"type":"boolean"}}}`)},
		Handler: func(ctx context.Context, _ *app.Call) (any, error) {
			select {
			case <-release:
				return map[string]bool{"done": true}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}})
}

// TestLongCallsThroughMCP: through the bridge, over a real host and app, a ui.wait longer
// than the host's default waits as long as it asks for; a tool that says nothing is cut at
// the default with a hint giving the timeoutMs to send, and succeeds with it; a tool that
// declares hint:duration gets it. The host's default is lowered to 300 ms: the same holds
// for a 25 s ui.wait against the real 20 s (tools.TestLongCallsJustWork checks the limits
// themselves, in a bubble).
func TestLongCallsThroughMCP(t *testing.T) {
	t.Parallel()
	const hostDefault = 300 * time.Millisecond
	var saved atomic.Bool
	slow, declared := make(chan struct{}), make(chan struct{})
	live := startLive(t, hostDefault, func(a *app.App) error {
		if err := ui.Register(a, savedScreen{&saved}, ui.Options{}); err != nil {
			return err
		}
		if err := blocking(a, "data.slow", "", slow); err != nil {
			return err
		}
		return blocking(a, "data.export", "export "+catalog.HintDuration+"=30", declared)
	})
	cs := live.bridge(t, Options{})
	call := func(args map[string]any) (*mcp.CallToolResult, *callError) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolCallAppTool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var out callOutput
		text(t, res, &out)
		return res, out.Error
	}

	t.Run("ui.wait longer than the default", func(t *testing.T) {
		// The condition comes true well after the host's default: the call is still waited for.
		go func() { time.Sleep(3 * hostDefault); saved.Store(true) }()
		res, e := call(map[string]any{"toolId": "ui.wait", "arguments": `{"textContains":"Saved","condition":"exists","timeoutMilliseconds":25000}`})
		if res.IsError {
			t.Fatalf("ui.wait: %+v", e)
		}
	})
	t.Run("a tool that says nothing", func(t *testing.T) {
		res, e := call(map[string]any{"toolId": "data.slow"})
		if !res.IsError || e.Code != wire.CodeTimeout {
			t.Fatalf("want a timeout, got %+v", e)
		}
		for _, want := range []string{"data.slow did not answer within 300ms (the host's default)", "raise the limit with timeoutMs"} {
			if !strings.Contains(e.Message, want) {
				t.Errorf("message %q lacks %q", e.Message, want)
			}
		}
		if !strings.Contains(e.Hint, "call again with timeoutMs: 600") {
			t.Errorf("hint %q", e.Hint)
		}
		// Following the hint: the agent's own limit.
		go func() { time.Sleep(2 * hostDefault); close(slow) }()
		if res, e := call(map[string]any{"toolId": "data.slow", "timeoutMs": 60000}); res.IsError {
			t.Fatalf("with timeoutMs: %+v", e)
		}
	})
	t.Run("a tool that declares its duration", func(t *testing.T) {
		go func() { time.Sleep(2 * hostDefault); close(declared) }()
		if res, e := call(map[string]any{"toolId": "data.export"}); res.IsError {
			t.Fatalf("hint:duration: %+v", e)
		}
	})
}

// TestDroppedHTTPStreamCancelsTheAppTool: an MCP client over HTTP starts a call of a tool
// of our SDK and drops its request's stream mid-call: the host gives the call up and, the
// app having advertised tool.cancel, the tool's handler sees its context cancelled (cause
// app.ErrCancelled); the host waits for nothing more from it.
func TestDroppedHTTPStreamCancelsTheAppTool(t *testing.T) {
	t.Parallel()
	started, causes := make(chan struct{}, 1), make(chan error, 1)
	live := startLive(t, tools.DefaultTimeout, func(a *app.App) error {
		return a.Register(app.Tool{Definition: catalog.Definition{ID: "data.watch", Name: "Watch", Description: "Runs until cancelled.",
			Category: "test", Policy: wire.PolicyRead, ArgumentsSchema: jsontext.Value(`{"type":"object"}`),
			ResultSchema: jsontext.Value(`{"type":"object"}`)},
			Handler: func(ctx context.Context, _ *app.Call) (any, error) {
				started <- struct{}{}
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return nil, ctx.Err()
			}})
	})
	endpoint := serveHTTP(t, New(live.backend, Options{HTTPNoAuth: true, HTTPResumeWindow: -1}))
	s := openRaw(t, endpoint, "2025-06-18")
	ctx, drop := context.WithCancel(t.Context())
	resp := s.post(ctx, callBody(1, "data.watch"))
	<-started // the app runs the tool
	drop()
	resp.Body.Close()
	if cause := <-causes; !errors.Is(cause, app.ErrCancelled) {
		t.Fatalf("the tool's context ended with %v, want the host's tool.cancel", cause)
	}
	sess, ok := live.srv.Session(live.sessionID)
	if !ok {
		t.Fatal("no session")
	}
	for sess.Tools().Busy() { // the host stopped waiting; settles as the request unwinds
		if t.Context().Err() != nil {
			t.Fatal("the host still waits for the call")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestConditionalCallLive: the real host runs a conditional call while the session's
// catalog revision and grant are the ones it names, and refuses it with session_changed
// otherwise, before the app sees it; a batch's calls cannot be conditional.
func TestConditionalCallLive(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	l := startLive(t, 5*time.Second, func(a *app.App) error {
		return a.Register(app.Tool{Definition: catalog.Definition{ID: "test.count", Name: "test.count", Description: "Counts its calls.", Category: "test",
			Policy: wire.PolicyRead, ArgumentsSchema: jsontext.Value(`{"type":"object"}`), ResultSchema: jsontext.Value(`{"type":"object"}`)},
			Handler: func(context.Context, *app.Call) (any, error) { ran.Add(1); return map[string]any{}, nil }})
	})
	ctx := t.Context()
	if _, err := l.backend.Tools(ctx, l.sessionID, hostapi.ToolsRequest{}); err != nil { // the host fetches the catalog
		t.Fatal(err)
	}
	s, err := l.backend.Session(ctx, l.sessionID)
	if err != nil || s.Revision == "" {
		t.Fatalf("%+v %v", s, err)
	}
	for _, tc := range []struct {
		revision string
		grant    wire.Policy
		changed  bool
	}{
		{s.Revision, s.MaxToolPolicy, false},
		{s.Revision, "", false},
		{"", s.MaxToolPolicy, false},
		{"sha256:0", s.MaxToolPolicy, true},
		{s.Revision, wire.PolicyRead + "x", true},
	} {
		before := ran.Load()
		res, err := l.backend.Call(ctx, l.sessionID, hostapi.CallRequest{ToolID: "test.count", IfRevision: tc.revision, IfGrant: tc.grant}, nil)
		switch {
		case tc.changed && (wire.CodeOf(err) != wire.CodeSessionChanged || ran.Load() != before):
			t.Errorf("%+v: %v, the app ran it: %v", tc, err, ran.Load() != before)
		case !tc.changed && (err != nil || !res.Success || ran.Load() != before+1):
			t.Errorf("%+v: %+v %v", tc, res, err)
		}
	}
	_, err = l.backend.Batch(ctx, l.sessionID, hostapi.BatchRequest{Calls: []hostapi.CallRequest{{ToolID: "test.count", IfRevision: s.Revision}}}, nil)
	if wire.CodeOf(err) != wire.CodeBadRequest {
		t.Errorf("a conditional call in a batch: %v", err)
	}
}
