package mcpbridge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/wire"
)

// appTools are the names of the listed tools that are not meta-tools, sorted.
func appTools(tools []*mcp.Tool) []string {
	var names []string
	for _, t := range tools {
		if !strings.HasPrefix(t.Name, "ansight_") {
			names = append(names, t.Name)
		}
	}
	slices.Sort(names)
	return names
}

// waitTools waits for list_changed notifications until the listed app tools are want.
// The test's deadline bounds the wait.
func (h *harness) waitTools(want ...string) {
	h.t.Helper()
	for {
		if got := appTools(h.listTools()); slices.Equal(got, want) {
			return
		}
		select {
		case <-h.changed:
		case <-h.t.Context().Done():
			h.t.Fatalf("app tools are %v, want %v", appTools(h.listTools()), want)
		}
	}
}

func (h *harness) sync() bool {
	h.t.Helper()
	changed, err := h.br.exposed.sync(h.t.Context())
	if err != nil {
		h.t.Fatal(err)
	}
	return changed
}

func TestExposeAppTools(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	f.catalogs["s1"].run["notes.get"] = func(jsontext.Value) (jsontext.Value, *wire.Error) {
		return nil, &wire.Error{Code: "note_not_found", Message: "no note", Details: jsontext.Value(`{"id":"n9"}`)}
	}
	h := newHarness(t, f, Options{ExposeAppTools: "s1"})
	if !h.cs.InitializeResult().Capabilities.Tools.ListChanged {
		t.Fatal("exposing tools needs the listChanged capability")
	}
	if !h.sync() {
		t.Fatal("the first sync exposes tools")
	}
	// Not the critical tool (no --allow-critical), not the unavailable one.
	h.waitTools("notes.create", "notes.get", "notes.list", wire.ScreenshotToolID)

	list, create := h.tools["notes.list"], h.tools["notes.create"]
	if !list.Annotations.ReadOnlyHint || list.Annotations.DestructiveHint != nil {
		t.Errorf("read tool annotations: %+v", list.Annotations)
	}
	if create.Annotations.ReadOnlyHint || create.Annotations.DestructiveHint == nil || *create.Annotations.DestructiveHint {
		t.Errorf("write tool annotations: %+v", create.Annotations)
	}
	if in := create.InputSchema.(map[string]any); in["additionalProperties"] != false || in["properties"] == nil {
		t.Errorf("input schema: %v", in)
	}
	if !strings.Contains(h.tools["notes.get"].Description, "Call first: notes.list.") || create.OutputSchema == nil {
		t.Errorf("notes.get: %+v", h.tools["notes.get"])
	}

	if h.sync() {
		t.Error("an unchanged catalog changed the exposed tools")
	}

	// Availability changes are announced.
	f.setAvailable("s1", "sync.push", true)
	if !h.sync() {
		t.Fatal("sync.push became available")
	}
	h.waitTools("notes.create", "notes.get", "notes.list", "sync.push", wire.ScreenshotToolID)
	f.setAvailable("s1", "notes.create", false)
	h.sync()
	h.waitTools("notes.get", "notes.list", "sync.push", wire.ScreenshotToolID)

	// Calls go to the app; results are structured when the tool declares an object result.
	res := h.call("notes.list", map[string]any{"text": "x"})
	if res.IsError || text(t, res, nil) != `{"ok":true}` || res.StructuredContent == nil {
		t.Fatalf("notes.list: %+v", res)
	}
	e := errorOf(t, h.call("notes.get", nil))
	if e.Code != "note_not_found" || string(e.Details) != `{"id":"n9"}` {
		t.Fatalf("notes.get: %+v", e)
	}

	// The app disconnects: nothing is left to call.
	f.disconnect("s1")
	h.sync()
	h.waitTools()
}

func TestExposeFollowsTheAppAcrossReconnects(t *testing.T) {
	t.Parallel()
	f := newFakeBackend(t)
	f.addSession("s1", "com.example.notes", wire.PolicyWrite, []wire.ToolEntry{tool("notes.list", "notes", wire.PolicyRead, "List.")})
	h := newHarness(t, f, Options{ExposeAppTools: "com.example.notes"})
	h.sync()
	h.waitTools("notes.list")
	f.disconnect("s1")
	f.addSession("s2", "com.example.notes", wire.PolicyWrite, []wire.ToolEntry{
		tool("notes.list", "notes", wire.PolicyRead, "List."), tool("notes.count", "notes", wire.PolicyRead, "Count."),
	})
	h.sync()
	h.waitTools("notes.count", "notes.list")
	before := len(f.received())
	if res := h.call("notes.count", nil); res.IsError {
		t.Fatal(text(t, res, nil))
	}
	if got := f.received(); len(got) != before+1 {
		t.Fatal("the call did not reach the new session")
	}
}

func TestExposeCriticalNeedsAllowCritical(t *testing.T) {
	t.Parallel()
	h := newHarness(t, oneSession(t), Options{ExposeAppTools: "s1", AllowCritical: true})
	h.sync()
	h.waitTools("notes.create", "notes.delete_all", "notes.get", "notes.list", wire.ScreenshotToolID)
	if d := h.tools["notes.delete_all"].Annotations.DestructiveHint; d == nil || !*d {
		t.Error("a critical tool is destructive")
	}
}

// TestRunWatches runs the bridge as a command does (Run over a transport) and sees a change
// announced by the watch loop alone.
func TestRunWatches(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	br := New(f, Options{ExposeAppTools: "s1", PollInterval: time.Millisecond})
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- br.Run(ctx, st) }()
	h, client := newClient(t, f, br)
	var err error
	if h.cs, err = client.Connect(ctx, ct, nil); err != nil {
		t.Fatal(err)
	}
	// Run synced once before serving: the first list is complete.
	if got := appTools(h.listTools()); len(got) != 4 {
		t.Fatalf("first list: %v", got)
	}
	f.setAvailable("s1", "sync.push", true)
	h.waitTools("notes.create", "notes.get", "notes.list", "sync.push", wire.ScreenshotToolID)
	h.cs.Close()
	if err := <-done; err != nil {
		t.Fatalf("Run after the client left: %v", err)
	}
	cancel()
}

func TestClientSchema(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in     string
		closed bool
		want   string // "" for an error
	}{
		{"", true, `{"type":"object","additionalProperties":false}`},
		{"", false, ""},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","properties":{"a":{}}}`, true,
			`{"additionalProperties":false,"properties":{"a":{}},"type":"object"}`},
		{`{"type":"object","additionalProperties":true}`, true, `{"additionalProperties":true,"type":"object"}`},
		{`{"type":"object","anyOf":[{"required":["a"]}]}`, true, `{"anyOf":[{"required":["a"]}],"type":"object","unevaluatedProperties":false}`},
		{`{"type":"object","properties":{"ref":{"type":"object","properties":{"id":{"type":"string"}}}}}`, true,
			`{"additionalProperties":false,"properties":{"ref":{"type":"object","properties":{"id":{"type":"string"}},"additionalProperties":false}},"type":"object"}`},
		{`{"type":"object","properties":{"a":{}}}`, false, `{"properties":{"a":{}},"type":"object"}`},
		{`{"type":"array"}`, true, ""},
		{`{"type":["object","null"]}`, true, ""},
		{`[]`, true, ""},
	} {
		t.Run(fmt.Sprintf("%s closed=%v", tc.in, tc.closed), func(t *testing.T) {
			t.Parallel()
			got, err := clientSchema(jsontext.Value(tc.in), tc.closed)
			if tc.want == "" {
				if err == nil {
					t.Errorf("%s: accepted as %s", tc.in, got)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("%s (closed %v) = %s, %v; want %s", tc.in, tc.closed, got, err, tc.want)
			}
		})
	}
}

func TestCheckToolName(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"ui.get_screenshot":     true,
		"a-b_c.D9":              true,
		"":                      false,
		strings.Repeat("x", 64): true,
		strings.Repeat("x", 65): false,
		"notes list":            false,
		"notes/list":            false,
		"ansight_list_sessions": false,
		"ansight.list_sessions": true,
		"caf\u00e9.get":         false,
	} {
		if err := checkToolName(name); (err == nil) != ok {
			t.Errorf("%q: %v", name, err)
		}
	}
}
