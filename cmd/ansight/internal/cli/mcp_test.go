package cli

import (
	"bufio"
	"bytes"
	"context"
	"image/png"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/mcpbridge"
)

// mcpRun runs 'ansight mcp args...' in process with pipes for stdin and stdout, and
// connects a go-sdk client to it. Closing the client ends the command.
func mcpRun(t *testing.T, args ...string) (*mcp.ClientSession, func() int) {
	t.Helper()
	return mcpRunCounted(t, nil, nil, args...)
}

// mcpRunCounted is mcpRun counting the bytes the client sends (up) and receives (down),
// when up and down are not nil.
func mcpRunCounted(t *testing.T, up, down *atomic.Int64, args ...string) (*mcp.ClientSession, func() int) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background()) // go test's -timeout bounds a hang
	code := make(chan int, 1)
	go func() {
		var stdout io.Writer = outW
		if down != nil {
			stdout = countingWriter{outW, down}
		}
		code <- Main(ctx, Env{Args: append([]string{"mcp"}, args...), Stdin: inR, Stdout: stdout, Stderr: &stderr})
		outW.Close()
	}()
	var clientOut io.WriteCloser = inW
	if up != nil {
		clientOut = countingWriteCloser{countingWriter{inW, up}, inW}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-test", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: clientOut}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	wait := func() int {
		cs.Close()
		inW.Close()
		defer cancel()
		select {
		case c := <-code:
			return c
		case <-ctx.Done():
			t.Fatalf("ansight mcp did not end; stderr: %s", stderr.String())
			return -1
		}
	}
	return cs, wait
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// callJSON calls a tool and decodes its text content (field names case-insensitively, so
// that tests can use short anonymous structs).
func callJSON(t *testing.T, cs *mcp.ClientSession, name string, args any, v any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(mcpbridge.Unframe(res.Content[0].(*mcp.TextContent).Text)), v, json.MatchCaseInsensitiveNames(true)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return res
}

// TestMCPDemo drives 'ansight mcp --demo' (a real host and the demo app in process) over
// stdio with the go-sdk client: the path an agent client takes.
func TestMCPDemo(t *testing.T) {
	t.Parallel()
	cs, wait := mcpRun(t, "--demo")
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(list.Tools) != 9 {
		t.Fatalf("tools: %v %v", list, err)
	}

	var sessions struct {
		Sessions []struct{ SessionID, AppID, MaxToolPolicy string }
	}
	callJSON(t, cs, "ansight_list_sessions", nil, &sessions)
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].AppID != demoAppID {
		t.Fatalf("sessions: %+v", sessions)
	}

	var search struct {
		Count, TotalCount int
		Tools             []struct{ ID, Policy string }
	}
	callJSON(t, cs, "ansight_search_app_tools", map[string]any{"query": "notes"}, &search)
	if search.Count == 0 {
		t.Fatalf("search: %+v", search)
	}

	var desc struct{ Tool struct{ ID string } }
	callJSON(t, cs, "ansight_describe_app_tool", map[string]any{"toolId": "notes.list"}, &desc)
	var call struct{ Success bool }
	callJSON(t, cs, "ansight_call_app_tool", map[string]any{"toolId": "notes.list"}, &call)
	if desc.Tool.ID != "notes.list" || !call.Success {
		t.Fatalf("describe %+v call %+v", desc, call)
	}

	shot := callJSON(t, cs, "ansight_take_screenshot", nil, nil)
	img, ok := shot.Content[len(shot.Content)-1].(*mcp.ImageContent)
	if shot.IsError || !ok {
		t.Fatalf("screenshot: %+v", shot.Content)
	}
	if _, err := png.DecodeConfig(bytes.NewReader(img.Data)); err != nil {
		t.Fatalf("screenshot image: %v", err)
	}

	var batch struct {
		Success   bool
		Completed int
	}
	callJSON(t, cs, "ansight_call_app_tools", map[string]any{"calls": []any{
		map[string]any{"toolId": "notes.list"}, map[string]any{"toolId": "app.get_state"},
	}}, &batch)
	if !batch.Success || batch.Completed != 2 {
		t.Fatalf("batch: %+v", batch)
	}

	// The sync tools are unavailable until an account signs in.
	var unavailable struct {
		Error struct{ Code, Kind, Hint string }
	}
	res := callJSON(t, cs, "ansight_call_app_tool", map[string]any{"toolId": "sync.push"}, &unavailable)
	if !res.IsError || unavailable.Error.Kind != "unavailable" || unavailable.Error.Hint == "" {
		t.Fatalf("unavailable: %+v", unavailable)
	}

	// Local apps are granted write: the demo's critical tools are refused by the bridge.
	var denied struct{ Error struct{ Code, Hint string } }
	res = callJSON(t, cs, "ansight_call_app_tool", map[string]any{"toolId": "notes.delete_all"}, &denied)
	if !res.IsError || denied.Error.Code != "tool_policy_not_granted" || denied.Error.Hint == "" {
		t.Fatalf("critical: %+v", denied)
	}

	// The embedded host records: the agent's own calls come back as a flow.
	var rec struct {
		Origin string
		Steps  int
		Flow   string
	}
	res = callJSON(t, cs, "ansight_record_flow", nil, &rec)
	if res.IsError || rec.Steps < 3 || !strings.Contains(rec.Flow, "call: \"notes.list\"") || !strings.HasPrefix(rec.Origin, "mcp:") {
		t.Fatalf("record flow: %+v", rec)
	}
	if code := wait(); code != ExitOK {
		t.Fatalf("exit code %d", code)
	}
}

func TestMCPFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"mcp", "--http", "0.0.0.0:0", "--embedded-host"},
		{"mcp", "--screenshot-max-width", "10"},
		{"mcp", "--image-max-size", "10"},
		{"mcp", "--max-result-bytes", "100"},
		{"mcp", "--no-auth"},
		{"mcp", "--http", "127.0.0.1:0", "--allow-origin", "localhost:3000"},
		{"mcp", "extra"},
	} {
		var out, errb bytes.Buffer
		if code := Main(t.Context(), Env{Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, ExitUsage, errb.String())
		}
	}
}

// TestMCPHTTP serves --http on a free loopback port and checks it answers MCP there, with
// the token it printed and not without.
func TestMCPHTTP(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	code := make(chan int, 1)
	go func() {
		code <- Main(ctx, Env{Args: []string{"mcp", "--embedded-host", "--http", "127.0.0.1:0"}, Stdin: strings.NewReader(""),
			Stdout: io.Discard, Stderr: pw})
		pw.Close()
	}()
	r := bufio.NewReader(pr)
	line, err := r.ReadString('\n')
	i := strings.Index(line, "http://")
	if err != nil || i < 0 {
		t.Fatalf("no endpoint line: %q %v", line, err)
	}
	endpoint := strings.Fields(line[i:])[0]
	line, err = r.ReadString('\n')
	token, ok := strings.CutPrefix(strings.TrimSpace(line), "clients send the header: Authorization: Bearer ")
	if err != nil || !ok || len(token) < 32 {
		t.Fatalf("no token line: %q %v", line, err)
	}
	go io.Copy(io.Discard, pr)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	if _, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: tr}}, nil); err == nil {
		t.Fatal("connected without the token")
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearerTransport{tr, token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sessions struct{ Sessions []any }
	callJSON(t, cs, "ansight_list_sessions", nil, &sessions)
	if sessions.Sessions == nil || len(sessions.Sessions) != 0 {
		t.Fatalf("sessions: %+v", sessions)
	}
	cs.Close()
	cancel()
	if c := <-code; c != ExitOK && c != ExitInterrupted {
		t.Fatalf("exit code %d", c)
	}
}

// bearerTransport sends a bearer token with every request.
type bearerTransport struct {
	next  http.RoundTripper
	token string
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
