package mcpbridge

import (
	"cmp"
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// serveHTTP runs br.Serve on a loopback port until the test ends and returns the endpoint.
func serveHTTP(t *testing.T, br *Bridge) string {
	t.Helper()
	l, err := ListenLoopback("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- br.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + l.Addr().String() + HTTPPath
}

// httpClient is a client whose idle connections are closed when the test ends (goleak).
// With a token, it sends it as a bearer token in every request.
func httpClient(t *testing.T, token ...string) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	if len(token) == 0 {
		return &http.Client{Transport: tr}
	}
	return &http.Client{Transport: bearer{tr, token[0]}}
}

type bearer struct {
	next  http.RoundTripper
	token string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

const testToken = "test-token-0123456789"

// TestHTTP drives the bridge with the go-sdk client over streamable HTTP, in the current
// protocol (server/discover, subscriptions/listen) and in the initialize-handshake one that
// most clients speak today: every meta-tool, and list_changed.
func TestHTTP(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol "+version, func(t *testing.T) {
			f := oneSession(t)
			f.withScreenshot(t, f.catalogs["s1"], 100, 50)
			br := New(f, Options{ExposeAppTools: "s1", PollInterval: time.Millisecond, HTTPToken: testToken})
			endpoint := serveHTTP(t, br)

			h, client := newClient(t, f, br)
			var err error
			h.cs, err = client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: httpClient(t, testToken)},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer h.cs.Close()
			h.waitTools("notes_create", "notes_get", "notes_list", "ui_get_screenshot")

			var sessions listSessionsOutput
			text(t, h.call(ToolListSessions, nil), &sessions)
			var search searchOutput
			text(t, h.call(ToolSearchAppTools, map[string]any{"query": "notes"}), &search)
			var desc describeOutput
			text(t, h.call(ToolDescribeApp, map[string]any{"toolId": "notes.list"}), &desc)
			var call callOutput
			text(t, h.call(ToolCallAppTool, map[string]any{"toolId": "notes.list"}), &call)
			var batch batchOutput
			text(t, h.call(ToolCallAppTools, map[string]any{"calls": []any{map[string]any{"toolId": "notes.list"}}}), &batch)
			shot := h.call(ToolTakeScreenshot, nil)
			if len(sessions.Sessions) != 1 || search.Count != 3 || desc.Tool.ID != "notes.list" || !call.Success || !batch.Success ||
				shot.IsError || len(shot.Content) != 2 {
				t.Fatalf("sessions %+v\nsearch %+v\ndescribe %+v\ncall %+v\nbatch %+v\nshot %+v", sessions, search, desc, call, batch, shot)
			}
			if e := errorOf(t, h.call(ToolCallAppTool, map[string]any{"toolId": "notes.delete_all"})); e.Code != wire.CodeCriticalNotAllowed {
				t.Fatalf("critical: %+v", e)
			}

			// The watch loop announces an availability change over the event stream.
			f.setAvailable("s1", "sync.push", true)
			h.waitTools("notes_create", "notes_get", "notes_list", "sync_push", "ui_get_screenshot")
		})
	}
}

func TestHTTPGuards(t *testing.T) {
	t.Parallel()
	endpoint := serveHTTP(t, New(oneSession(t), Options{HTTPToken: testToken, AllowedOrigins: []string{"http://localhost:6274"}}))
	c := httpClient(t)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		name, host, origin, path, method string
		token                            string // "-" for none
		want                             int
		wantCORS                         bool
	}{
		{name: "loopback, no origin", want: http.StatusOK},
		{name: "localhost name", host: "localhost", want: http.StatusOK},
		{name: "no token", token: "-", want: http.StatusUnauthorized},
		{name: "wrong token", token: "test-token-0123456788", want: http.StatusUnauthorized},
		{name: "token as a query", token: "-", path: HTTPPath + "?token=" + testToken, want: http.StatusUnauthorized},
		{name: "allowed origin", origin: "http://localhost:6274", want: http.StatusOK, wantCORS: true},
		{name: "allowed origin, other case", origin: "HTTP://LOCALHOST:6274", want: http.StatusOK, wantCORS: true},
		{name: "allowed origin, preflight without token", origin: "http://localhost:6274", method: http.MethodOptions, token: "-", want: http.StatusNoContent, wantCORS: true},
		{name: "allowed origin without token", origin: "http://localhost:6274", token: "-", want: http.StatusUnauthorized, wantCORS: true},
		{name: "other localhost port", origin: "http://localhost:3000", want: http.StatusForbidden},
		{name: "ipv6 loopback origin", origin: "https://[::1]:8443", want: http.StatusForbidden},
		{name: "preflight of another origin", origin: "http://localhost:3000", method: http.MethodOptions, token: "-", want: http.StatusForbidden},
		{name: "rebinding host", host: "attacker.example:80", want: http.StatusForbidden},
		{name: "LAN host", host: "192.168.1.2", want: http.StatusForbidden},
		{name: "foreign origin", origin: "https://attacker.example", want: http.StatusForbidden},
		{name: "null origin", origin: "null", want: http.StatusForbidden},
		{name: "origin with userinfo", origin: "http://localhost:6274@attacker.example", want: http.StatusForbidden},
		{name: "other path", path: "/other", want: http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := endpoint
			if tc.path != "" {
				u = strings.TrimSuffix(endpoint, HTTPPath) + tc.path
			}
			req, _ := http.NewRequestWithContext(t.Context(), cmp.Or(tc.method, http.MethodPost), u, strings.NewReader(initialize))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			switch tc.token {
			case "":
				req.Header.Set("Authorization", "Bearer "+testToken)
			case "-":
			default:
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); (got != "") != tc.wantCORS || tc.wantCORS && got != tc.origin {
				t.Fatalf("Access-Control-Allow-Origin %q", got)
			}
			if resp.StatusCode == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

// TestHTTPNeedsAToken checks that Serve refuses to run open unless told to, and refuses an
// allow-list entry that is not an origin.
func TestHTTPNeedsAToken(t *testing.T) {
	t.Parallel()
	for _, opts := range []Options{{}, {HTTPToken: "x", AllowedOrigins: []string{"localhost:6274"}}, {HTTPNoAuth: true, AllowedOrigins: []string{"null"}}} {
		l, err := ListenLoopback("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := New(oneSession(t), opts).Serve(t.Context(), l); err == nil {
			t.Errorf("%+v: served", opts)
		}
		l.Close()
	}
	// --no-auth: answered without a token.
	endpoint := serveHTTP(t, New(oneSession(t), Options{HTTPNoAuth: true}))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: httpClient(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs.Close()
}

func TestListenLoopback(t *testing.T) {
	t.Parallel()
	for addr, ok := range map[string]bool{
		"127.0.0.1:0":   true,
		"[::1]:0":       true,
		"localhost:0":   true,
		":0":            true,
		"0.0.0.0:0":     false,
		"[::]:0":        false,
		"192.0.2.1:0":   false,
		"example.com:0": false,
		"127.0.0.1":     false, // no port
	} {
		l, err := ListenLoopback(addr)
		if (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
		if err != nil {
			continue
		}
		if ip := l.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
			t.Errorf("%s listens on %v", addr, ip)
		}
		l.Close()
	}
}

// TestOverControlSocket runs the bridge over the control API's socket client, as
// 'ansight mcp' does against a resident host: the bridge sees the same Backend.
func TestOverControlSocket(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	f.withScreenshot(t, f.catalogs["s1"], 100, 50)
	sock := filepath.Join(t.TempDir(), hostapi.SocketName)
	l, err := hostapi.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: hostapi.NewHandler(f)}
	go srv.Serve(l)
	defer srv.Close()
	h := connect(t, f, New(hostapi.NewClient(sock), Options{}))

	var search searchOutput
	text(t, h.call(ToolSearchAppTools, nil), &search)
	var call callOutput
	text(t, h.call(ToolCallAppTool, map[string]any{"toolId": "notes.create", "arguments": map[string]any{"text": "x"}}), &call)
	if search.Count != 4 || !call.Success {
		t.Fatalf("search %+v call %+v", search, call)
	}
	if e := errorOf(t, h.call(ToolCallAppTool, map[string]any{"sessionId": "nope", "toolId": "x"})); e.Code != wire.CodeSessionNotFound {
		t.Fatalf("%+v", e)
	}
	if shot := h.call(ToolTakeScreenshot, nil); shot.IsError || len(shot.Content) != 2 {
		t.Fatalf("%+v", shot)
	}
	// A host that is gone is an error the agent can read.
	srv.Close()
	h.br.backend = hostapi.NewClient(filepath.Join(t.TempDir(), "none.sock"))
	if e := errorOf(t, h.call(ToolListSessions, nil)); e.Code != wire.CodeHostUnavailable || !strings.Contains(e.Hint, "ansight host run") {
		t.Fatalf("%+v", e)
	}
}
