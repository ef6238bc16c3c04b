package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness is a bridge over a fake host, with a go-sdk client connected in memory.
type harness struct {
	t       *testing.T
	fake    *fakeBackend
	br      *Bridge
	cs      *mcp.ClientSession
	changed chan struct{} // one value per notifications/tools/list_changed
	tools   map[string]*mcp.Tool
}

func newHarness(t *testing.T, fake *fakeBackend, opts Options) *harness {
	t.Helper()
	return connect(t, fake, New(fake, opts))
}

// newClient returns a harness over br, not connected yet, and the go-sdk client to connect
// it with (into h.cs): the client signals h.changed on every list_changed.
func newClient(t *testing.T, fake *fakeBackend, br *Bridge) (*harness, *mcp.Client) {
	h := &harness{t: t, fake: fake, br: br, changed: make(chan struct{}, 16)}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case h.changed <- struct{}{}:
			default: // a waiter re-lists anyway
			}
		},
	})
	return h, client
}

// connect connects a go-sdk client to br in memory.
func connect(t *testing.T, fake *fakeBackend, br *Bridge) *harness {
	t.Helper()
	h, client := newClient(t, fake, br)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := h.br.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.cs, err = client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.cs.Close()
		ss.Wait()
	})
	h.listTools()
	return h
}

// listTools refreshes h.tools.
func (h *harness) listTools() []*mcp.Tool {
	h.t.Helper()
	res, err := h.cs.ListTools(h.t.Context(), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.tools = map[string]*mcp.Tool{}
	for _, t := range res.Tools {
		h.tools[t.Name] = t
	}
	return res.Tools
}

// call calls a tool and checks its structured output against the tool's output schema,
// the way a validating client (the TypeScript SDK) does.
func (h *harness) call(name string, args any) *mcp.CallToolResult {
	h.t.Helper()
	res, err := h.cs.CallTool(h.t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
	if t := h.tools[name]; t != nil && t.OutputSchema != nil && res.StructuredContent != nil {
		checkSchema(h.t, t.OutputSchema, res.StructuredContent)
	}
	return res
}

// text decodes the JSON of a result's first text content into v and returns the text.
func text(t *testing.T, res *mcp.CallToolResult, v any) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatal("no content")
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content[0] is %T", res.Content[0])
	}
	plain := Unframe(tc.Text)
	if v != nil {
		if err := wire.Unmarshal([]byte(plain), v); err != nil {
			t.Fatalf("decode %s: %v", tc.Text, err)
		}
	}
	return plain
}

// checkSchema validates instance against schema with a standard JSON Schema validator.
func checkSchema(t *testing.T, schema, instance any) {
	t.Helper()
	sb, _ := json.Marshal(schema)
	ib, _ := json.Marshal(instance)
	s, err := jsonschema.UnmarshalJSON(strings.NewReader(string(sb)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("out.json", s); err != nil {
		t.Fatal(err)
	}
	compiled, err := c.Compile("out.json")
	if err != nil {
		t.Fatalf("compile output schema: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(ib)))
	if err != nil {
		t.Fatal(err)
	}
	if err := compiled.Validate(inst); err != nil {
		t.Fatalf("structured content does not match the output schema: %v\n%s", err, ib)
	}
}

// errorOf decodes a failed result and checks it is an MCP tool error.
func errorOf(t *testing.T, res *mcp.CallToolResult) *callError {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want isError, got %s", text(t, res, nil))
	}
	var f struct {
		Error *callError `json:"error"`
	}
	text(t, res, &f)
	if f.Error == nil || f.Error.Code == "" || f.Error.Message == "" {
		t.Fatalf("error without code or message: %s", text(t, res, nil))
	}
	return f.Error
}

func oneSession(t *testing.T) *fakeBackend {
	f := newFakeBackend(t)
	f.addSession("s1", "com.example.notes", wire.PolicyCritical, demoTools())
	return f
}

func TestMetaToolsListed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, oneSession(t), Options{})
	want := []string{ToolCallAppTool, ToolCallAppTools, ToolDescribeApp, ToolListSessions, ToolReadResult, ToolRecordFlow, ToolSearchAppTools,
		ToolSnapshot, ToolTakeScreenshot}
	var got []string
	for _, tl := range h.listTools() {
		got = append(got, tl.Name)
		// The snapshot answers plain text: the one tool without an output schema.
		if tl.Description == "" || tl.InputSchema == nil || (tl.OutputSchema == nil) != (tl.Name == ToolSnapshot) || tl.Annotations == nil {
			t.Errorf("%s: description, schemas and annotations are required", tl.Name)
		}
		if !clientToolName.MatchString(tl.Name) {
			t.Errorf("%s: not a name every client accepts", tl.Name)
		}
		// Reading tools are idempotent; the call tools keep MCP's defaults (destructive).
		a := tl.Annotations
		if a.ReadOnlyHint != a.IdempotentHint || a.DestructiveHint != nil || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations %+v", tl.Name, a)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	if !h.tools[ToolSearchAppTools].Annotations.ReadOnlyHint || h.tools[ToolCallAppTool].Annotations.ReadOnlyHint {
		t.Error("search is read-only, call is not")
	}
	if init := h.cs.InitializeResult(); init.Instructions == "" || init.ServerInfo.Name != "ansight" {
		t.Errorf("initialize: %+v", init)
	}
}

func TestListSessions(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	f.addSession("s2", "com.example.other", wire.PolicyRead, nil)
	f.disconnect("s2")
	f.mu.Lock()
	f.sessions[0].Label = "checkout bug \u202e" // one the host would refuse now (a recording from an older host): framed, it is escaped
	f.mu.Unlock()
	h := newHarness(t, f, Options{AllowCritical: true})
	for _, tc := range []struct {
		args any
		want []string
	}{
		{nil, []string{"s1"}},
		{map[string]any{"includeDisconnected": true}, []string{"s1", "s2"}},
	} {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			res := h.call(ToolListSessions, tc.args)
			var out listSessionsOutput
			text(t, res, &out)
			var ids []string
			for _, s := range out.Sessions {
				ids = append(ids, s.SessionID)
			}
			if res.IsError || !slices.Equal(ids, tc.want) || !out.AllowCritical {
				t.Errorf("args %v: sessions %v, want %v (%+v)", tc.args, ids, tc.want, out)
			}
			if s := out.Sessions[0]; s.AppID != "com.example.notes" || s.MaxToolPolicy != wire.PolicyCritical || s.Device != "test device" || s.State != hostapi.StateConnected {
				t.Errorf("session: %+v", s)
			}
			if s := out.Sessions[0]; s.Label != "checkout bug \u202e" {
				t.Errorf("label %q, want the host's", s.Label)
			}
			// The label travels with the apps' words, framed: its hidden character escaped.
			if raw := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(raw, `"label":"checkout bug \u202e"`) {
				t.Errorf("label not framed and escaped:\n%s", raw)
			}
			if len(out.Sessions) > 1 && out.Sessions[1].Label != "" {
				t.Errorf("a session without a label: %q", out.Sessions[1].Label)
			}
		})
	}
}

func TestSessionSelection(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	f.addSession("s2", "com.example.other", wire.PolicyRead, []wire.ToolEntry{tool("other.read", "x", wire.PolicyRead, "Other.")})
	f.addSession("s3", "com.example.gone", wire.PolicyRead, nil)
	f.disconnect("s3")
	h := newHarness(t, f, Options{})
	for _, tc := range []struct {
		name string
		args map[string]any
		want string // session id, or error code
	}{
		{"ambiguous", map[string]any{}, string(wire.CodeSessionAmbiguous)},
		{"by app", map[string]any{"appId": "com.example.other"}, "s2"},
		{"by id", map[string]any{"sessionId": "s1"}, "s1"},
		{"id and app agree", map[string]any{"sessionId": "s1", "appId": "com.example.notes"}, "s1"},
		{"id and app disagree", map[string]any{"sessionId": "s1", "appId": "com.example.other"}, string(wire.CodeBadRequest)},
		{"unknown id", map[string]any{"sessionId": "nope"}, string(wire.CodeSessionNotFound)},
		{"disconnected", map[string]any{"sessionId": "s3"}, string(wire.CodeSessionClosed)},
		{"app not connected", map[string]any{"appId": "com.example.gone"}, string(wire.CodeNoSession)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := h.call(ToolSearchAppTools, tc.args)
			if !res.IsError {
				var out searchOutput
				text(t, res, &out)
				if out.SessionID != tc.want {
					t.Fatalf("session %s, want %s", out.SessionID, tc.want)
				}
				return
			}
			e := errorOf(t, res)
			if e.Code != wire.Code(tc.want) || e.Hint == "" {
				t.Fatalf("error %+v, want code %s with a hint", e, tc.want)
			}
			if tc.want == string(wire.CodeSessionAmbiguous) && !strings.Contains(string(e.Details), `"s2"`) {
				t.Errorf("ambiguity details should list the sessions: %s", e.Details)
			}
		})
	}
}

func TestNoSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFakeBackend(t), Options{})
	e := errorOf(t, h.call(ToolSearchAppTools, nil))
	if e.Code != wire.CodeNoSession || !strings.Contains(e.Hint, "--demo") {
		t.Fatalf("%+v", e)
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, oneSession(t), Options{})
	ids := func(out searchOutput) []string {
		var s []string
		for _, e := range out.Tools {
			s = append(s, e.ID)
		}
		return s
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
		// check inspects the answer further.
		check func(t *testing.T, out searchOutput)
	}{
		{name: "defaults: executable, within the grant, no critical",
			want: []string{"notes.create", "notes.get", "notes.list", wire.ScreenshotToolID},
			check: func(t *testing.T, out searchOutput) {
				if out.TotalCount != 4 || out.Count != 4 || out.Truncated || out.Revision != "rev-1" || out.AppID != "com.example.notes" ||
					out.NotCallable != 2 {
					t.Errorf("counts: %+v", out)
				}
				for _, e := range out.Tools {
					if e.ID == "notes.get" && (e.Description != "Get one note by id." || !slices.Equal(e.Prerequisites, []string{"notes.list"})) {
						t.Errorf("notes.get entry: %+v", e)
					}
				}
			}},
		{name: "query", args: map[string]any{"query": "note CREATE"}, want: []string{"notes.create"}},
		{name: "policy", args: map[string]any{"policy": "write"}, want: []string{"notes.create"}},
		{name: "category", args: map[string]any{"category": "ui"}, want: []string{wire.ScreenshotToolID}},
		{name: "all, with denials", args: map[string]any{"executableOnly": false},
			want: []string{"notes.create", "notes.delete_all", "notes.get", "notes.list", "sync.push", wire.ScreenshotToolID},
			check: func(t *testing.T, out searchOutput) {
				for _, e := range out.Tools {
					switch e.ID {
					case "notes.delete_all":
						if e.Executable == nil || *e.Executable || e.Denial == nil || e.Denial.Code != wire.CodeCriticalNotAllowed || !strings.Contains(e.Denial.Reason, "--allow-critical") {
							t.Errorf("critical entry: %+v", e)
						}
					case "sync.push":
						if e.Denial == nil || e.Denial.Code != "signed_out" {
							t.Errorf("unavailable entry: %+v", e)
						}
					default:
						if e.Executable != nil || e.Denial != nil {
							t.Errorf("callable entry with a denial: %+v", e)
						}
					}
				}
			}},
		{name: "truncated", args: map[string]any{"maxResults": 2},
			want: []string{"notes.create", "notes.get"},
			check: func(t *testing.T, out searchOutput) {
				if !out.Truncated || out.TotalCount != 4 || out.Count != 2 || out.Categories["notes"] != 3 || out.Categories["ui"] != 1 {
					t.Errorf("truncation: %+v", out)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := h.call(ToolSearchAppTools, tc.args)
			var out searchOutput
			raw := text(t, res, &out)
			if res.IsError || !slices.Equal(ids(out), tc.want) {
				t.Fatalf("ids %v, want %v\n%s", ids(out), tc.want, raw)
			}
			if strings.Contains(raw, "Schema") {
				t.Errorf("the compact index must not carry schemas: %s", raw)
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

// TestSearchAboveTheGrant: tools above the grant are left out by default (counted), and
// listed with why when the agent asks for tools it cannot call, so that it can tell the
// user.
func TestSearchAboveTheGrant(t *testing.T) {
	t.Parallel()
	f := newFakeBackend(t)
	f.addSession("s1", "app", wire.PolicyRead, demoTools())
	h := newHarness(t, f, Options{AllowCritical: true})
	var out searchOutput
	text(t, h.call(ToolSearchAppTools, nil), &out)
	for _, e := range out.Tools {
		if e.Policy != wire.PolicyRead {
			t.Errorf("offered a tool above the read grant: %+v", e)
		}
	}
	if out.AboveGrant != 3 || out.GrantHint != "" { // notes.create, notes.delete_all, sync.push
		t.Errorf("aboveGrant = %d, grantHint %q", out.AboveGrant, out.GrantHint)
	}

	out = searchOutput{}
	text(t, h.call(ToolSearchAppTools, map[string]any{"executableOnly": false}), &out)
	above := 0
	for _, e := range out.Tools {
		if e.Policy == wire.PolicyRead {
			continue
		}
		above++
		if e.Executable == nil || *e.Executable || e.Denial == nil || e.Denial.Code != wire.CodePolicyNotGranted ||
			!strings.Contains(e.Denial.Reason, "Needs a "+string(e.Policy)+" grant; the session has read") {
			t.Errorf("above-grant entry: %+v %+v", e, e.Denial)
		}
	}
	if above != 3 || out.AboveGrant != 3 || !strings.Contains(out.GrantHint, "--max-tool-policy critical") {
		t.Errorf("listed %d above the grant: %+v", above, out)
	}
}

// TestHintsFitTheMode: a demo or an embedded host does not suggest pairing commands that
// cannot apply to it.
func TestHintsFitTheMode(t *testing.T) {
	t.Parallel()
	for mode, want := range map[HostMode]string{
		HostResident: "ansight pairing issue --max-tool-policy critical",
		HostEmbedded: "without --embedded-host",
		HostDemo:     "the demo cannot grant more",
	} {
		f := newFakeBackend(t)
		f.addSession("s1", "app", wire.PolicyWrite, demoTools())
		h := newHarness(t, f, Options{HostMode: mode, AllowCritical: true})
		e := errorOf(t, h.call(ToolCallAppTool, map[string]any{"toolId": "notes.delete_all"}))
		if e.Code != wire.CodePolicyNotGranted || e.Retryable || !strings.Contains(e.Hint, want) {
			t.Errorf("mode %d: %+v", mode, e)
		}
		if mode == HostDemo && strings.Contains(e.Hint, "pairing") {
			t.Errorf("the demo suggests pairing: %s", e.Hint)
		}
		f.disconnect("s1")
		e = errorOf(t, h.call(ToolSearchAppTools, nil))
		if mode == HostDemo && strings.Contains(e.Hint, "--demo") {
			t.Errorf("the demo suggests --demo: %s", e.Hint)
		}
	}
}

func TestSearchArgumentErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, oneSession(t), Options{})
	for _, args := range []map[string]any{
		{"maxResults": 51},
		{"maxResults": 0},
		{"policy": "delete"},
		{"executableOnly": "yes"},
		{"extra": 1},
		{"query": strings.Repeat("x", 201)},
	} {
		e := errorOf(t, h.call(ToolSearchAppTools, args))
		if e.Code != wire.CodeArgumentsSchemaInvalid || e.RefusedBy != refusedByBridge || len(e.Details) == 0 || !strings.Contains(e.Hint, ToolSearchAppTools) {
			t.Errorf("%v: %+v", args, e)
		}
	}
	if got := len(h.fake.received()); got != 0 {
		t.Errorf("%d calls reached the app", got)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	h := newHarness(t, oneSession(t), Options{})

	var out describeOutput
	res := h.call(ToolDescribeApp, map[string]any{"toolId": "notes.get"})
	text(t, res, &out)
	if res.IsError || out.Tool.ID != "notes.get" || len(out.Tool.ArgumentsSchema) == 0 || len(out.Tool.ResultSchema) == 0 ||
		out.Tool.Executable != nil || out.Revision != "rev-1" || out.SessionID != "s1" {
		t.Fatalf("describe: %+v", out)
	}

	res = h.call(ToolDescribeApp, map[string]any{"toolId": "notes.delete_all"})
	out = describeOutput{}
	text(t, res, &out)
	if res.IsError || out.Tool.Denial == nil || out.Tool.Denial.Code != wire.CodeCriticalNotAllowed || out.Tool.Executable == nil || *out.Tool.Executable {
		t.Fatalf("a critical tool is described with the bridge's denial: %+v", out.Tool)
	}

	if e := errorOf(t, h.call(ToolDescribeApp, map[string]any{"toolId": "nope"})); e.Code != wire.CodeNotFound || !strings.Contains(e.Hint, ToolSearchAppTools) {
		t.Errorf("unknown tool: %+v", e)
	}
	if e := errorOf(t, h.call(ToolDescribeApp, map[string]any{})); e.Code != wire.CodeArgumentsSchemaInvalid {
		t.Errorf("missing toolId: %+v", e)
	}
}

func TestDescribeRefusesToolsAboveTheGrant(t *testing.T) {
	t.Parallel()
	f := newFakeBackend(t)
	f.addSession("s1", "app", wire.PolicyRead, demoTools())
	h := newHarness(t, f, Options{AllowCritical: true})
	e := errorOf(t, h.call(ToolDescribeApp, map[string]any{"toolId": "notes.create"}))
	if e.Code != wire.CodePolicyNotGranted || e.Kind != wire.KindDenied || !strings.Contains(e.Hint, "--max-tool-policy write") {
		t.Fatalf("%+v", e)
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"Short.", 20, "Short."},
		{"  First line.\nSecond line.", 20, "First line."},
		{"First line.\r\nSecond.", 20, "First line."},
		{"Lists the notes, most recently updated first", 20, "Lists the notes, mo…"},
		{"Ünïcödé wörds everywhere here", 10, "Ünïcödé w…"},
		{"a, b, c, d, e", 5, "a, b…"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got := oneLine(tc.in, tc.max)
			if got != tc.want || len([]rune(got)) > tc.max {
				t.Errorf("oneLine(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
		})
	}
}
