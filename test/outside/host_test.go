package outside_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/app/diag"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/app/telemetry"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/hostrun"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/mcpbridge"
	"github.com/ansight-go/ansight/player"
	"github.com/ansight-go/ansight/wire"
)

const outsideAppID = "com.example.outside"

type greetIn struct {
	Name string `json:"name"`
}

type greetOut struct {
	Text string `json:"text"`
}

// hostWithApp starts a complete host (package hostrun: the session server, its recorder,
// the web player, the control socket) and an app built from public packages only,
// connected over real loopback sockets (UDP enrollment, authenticated WebSocket), and
// returns the host with the app's open session. The app has the tool demo.greet, and those
// register adds. Everything stops when the test ends.
func hostWithApp(t *testing.T, ctx context.Context, register ...func(*app.App) error) (*hostrun.Host, *host.Session) {
	t.Helper()
	dir, err := os.MkdirTemp("", "outside") // short: a Unix socket's path is limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	web, err := player.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := hostrun.Start(t.Context(), hostrun.Options{
		StateDir: dir,
		Host:     host.Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0"},
		Version:  "outside",
		Record:   true,
		Player:   web,
		Control:  true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	srv := h.Server()

	a := app.New(app.Options{})
	err = app.Register(a, catalog.Definition{ID: "demo.greet", Name: "Greet", Category: "demo", Policy: wire.PolicyRead,
		Description: "Greets someone by name."},
		func(ctx context.Context, c *app.Call, in greetIn) (greetOut, error) {
			return greetOut{Text: "Hello, " + in.Name + "!"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range register {
		if err := r(a); err != nil {
			t.Fatal(err)
		}
	}
	local := connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{int(srv.DiscoveryAddr().Port())}}
	conn, err := connect.Dial(ctx, a, local, connect.Options{AppID: outsideAppID, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	sess, err := srv.WaitSession(ctx, func(s *host.Session) bool { return s.AppID() == outsideAppID && s.Opened() })
	if err != nil {
		t.Fatalf("the host never saw the app's session open: %v", err)
	}
	return h, sess
}

// A host and an app built from public packages only: the host reads the app's catalog and
// calls its tool. This is what a module outside ansight-go can assemble.
func TestHostDrivesAppFromOutside(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, sess := hostWithApp(t, ctx)

	cat, err := sess.Tools().Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Tools) != 1 || cat.Tools[0].ID != "demo.greet" {
		t.Fatalf("catalog = %+v", cat.Tools)
	}
	res, err := sess.Tools().Call(ctx, wire.Call{ToolID: "demo.greet", Arguments: []byte(`{"name":"Ada"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var got greetOut
	if err := wire.Unmarshal(res.Payload.Result, &got); err != nil || got.Text != "Hello, Ada!" {
		t.Errorf("result = %s (%v)", res.Raw, err)
	}
}

// The host's tooling from outside, over the same public host API (hostapi): an MCP server
// (mcpbridge) over the host's backend, which a real MCP client (the official Go SDK's)
// calls the app's tool through; the web player the complete host serves, which lists the
// session and builds the tool's form; and the control socket, as the CLI and scripts use it.
func TestToolingFromOutside(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	h, sess := hostWithApp(t, ctx)
	var backend hostapi.Backend = h.Backend()

	t.Run("mcp server", func(t *testing.T) {
		cs := mcpClient(t, ctx, backend)
		if isErr, text := callAppTool(t, ctx, cs, "demo.greet", map[string]any{"name": "Ada"}); isErr || !strings.Contains(text, "Hello, Ada!") {
			t.Errorf("ansight_call_app_tool = error %v, %s", isErr, text)
		}
	})

	t.Run("player", func(t *testing.T) {
		opened, err := url.Parse(h.PlayerURL())
		if err != nil || opened.Query().Get("token") == "" {
			t.Fatalf("player URL %q (%v)", h.PlayerURL(), err)
		}
		get := func(path string) string {
			t.Helper()
			u := *opened
			u.Path = path
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %s %s (%v)", path, resp.Status, body, err)
			}
			return string(body)
		}
		if body := get("/api/sessions"); !strings.Contains(body, `"`+sess.ID()+`"`) {
			t.Errorf("the player does not list the session %s: %s", sess.ID(), body)
		}
		var tool player.ToolForm
		if err := wire.Unmarshal(jsontext.Value(get("/api/sessions/"+sess.ID()+"/tools/demo.greet")), &tool); err != nil {
			t.Fatal(err)
		}
		if f := tool.Form; f == nil || f.Kind != player.KindObject || len(f.Properties) != 1 ||
			f.Properties[0].Name != "name" || f.Properties[0].Field.Kind != player.KindString {
			t.Errorf("form of demo.greet = %+v", f)
		}
	})

	t.Run("control socket", func(t *testing.T) {
		c := hostapi.NewClient(h.SocketPath())
		st, err := c.Status(ctx)
		if err != nil || st.Version != "outside" || st.Player == "" || st.Recording == nil {
			t.Fatalf("Status = %+v, %v", st, err)
		}
		res, err := c.Call(ctx, sess.ID(), hostapi.CallRequest{ToolID: "demo.greet", Arguments: jsontext.Value(`{"name":"Bo"}`)}, nil)
		if err != nil || !res.Success || !strings.Contains(string(res.Result.Result), "Hello, Bo!") {
			t.Errorf("Call = %+v, %v", res, err)
		}
	})
}

// mcpClient serves backend with an MCP server (mcpbridge) and connects a real MCP client,
// the official Go SDK's, to it in memory. Both stop when the test ends.
func mcpClient(t *testing.T, ctx context.Context, backend hostapi.Backend) *mcp.ClientSession {
	t.Helper()
	bridge := mcpbridge.New(backend, mcpbridge.Options{Name: "outside"})
	clientT, serverT := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- bridge.Run(ctx, serverT) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "outside-client", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		if err := <-served; err != nil {
			t.Errorf("bridge.Run = %v", err)
		}
	})
	return cs
}

// callAppTool calls an app's tool through the bridge's ansight_call_app_tool and returns
// whether the result is an error, and its text.
func callAppTool(t *testing.T, ctx context.Context, cs *mcp.ClientSession, toolID string, args map[string]any) (bool, string) {
	t.Helper()
	in := map[string]any{"toolId": toolID}
	if args != nil {
		in["arguments"] = args
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpbridge.ToolCallAppTool, Arguments: in})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += mcpbridge.Unframe(tc.Text) // app text comes framed as data
		}
	}
	return res.IsError, text
}

// A Go service that registers app/diag in one line, looked inside by an agent through the
// MCP bridge: its runtime, a heap profile received as a file (through the artifact its
// tool points at), its log tail, and a CPU
// profile asked for too long, refused with the bound.
func TestDiagnosticsThroughMCPFromOutside(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	tel := telemetry.New(telemetry.Options{MetricsInterval: -1})
	slog.New(tel.Handler(nil, nil)).Warn("cache miss storm", "misses", 412)
	h, _ := hostWithApp(t, ctx, func(a *app.App) error { return diag.Register(a, diag.Options{Telemetry: tel}) })
	cs := mcpClient(t, ctx, h.Backend())

	if isErr, text := callAppTool(t, ctx, cs, diag.RuntimeToolID, nil); isErr || !strings.Contains(text, `"goVersion":"go1.`) {
		t.Errorf("%s = error %v, %.300s", diag.RuntimeToolID, isErr, text)
	}
	if isErr, text := callAppTool(t, ctx, cs, diag.LogTailToolID, map[string]any{"lines": 10}); isErr || !strings.Contains(text, "cache miss storm") {
		t.Errorf("%s = error %v, %.300s", diag.LogTailToolID, isErr, text)
	}
	// The profile tool points at the profile it kept; artifacts.request brings the file.
	isErr, text := callAppTool(t, ctx, cs, diag.HeapProfileToolID, nil)
	var ref struct {
		Result struct {
			Artifact files.ArtifactRef `json:"artifact"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(text), &ref); err != nil || isErr || ref.Result.Artifact.Request.ToolID != files.RequestArtifactToolID {
		t.Fatalf("%s = error %v, %.500s (%v)", diag.HeapProfileToolID, isErr, text, err)
	}
	req := ref.Result.Artifact.Request
	isErr, text = callAppTool(t, ctx, cs, req.ToolID, map[string]any{"providerId": req.Arguments.ProviderID, "artifactId": req.Arguments.ArtifactID})
	var out struct {
		Artifacts []hostapi.Artifact `json:"artifacts"`
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil || isErr || len(out.Artifacts) != 1 || out.Artifacts[0].Status != "complete" {
		t.Fatalf("%s = error %v, %.500s (%v)", req.ToolID, isErr, text, err)
	}
	if b, err := os.ReadFile(out.Artifacts[0].Path); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b { // gzip: a pprof file
		t.Errorf("the heap profile file %s: %d bytes, %v", out.Artifacts[0].Path, len(b), err)
	}
	if isErr, text := callAppTool(t, ctx, cs, diag.CPUProfileToolID, map[string]any{"seconds": 31}); !isErr || !strings.Contains(text, "maximum") {
		t.Errorf("%s for 31 s = error %v, %.300s; want refused with the maximum", diag.CPUProfileToolID, isErr, text)
	}
}
