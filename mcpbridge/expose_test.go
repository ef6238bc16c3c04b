package mcpbridge

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
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
	h.waitTools("notes_create", "notes_get", "notes_list", "ui_get_screenshot")

	list, create := h.tools["notes_list"], h.tools["notes_create"]
	if !list.Annotations.ReadOnlyHint || !list.Annotations.IdempotentHint || list.Annotations.DestructiveHint != nil {
		t.Errorf("read tool annotations: %+v", list.Annotations)
	}
	// notes.create is marked additive in its keywords: not destructive.
	if create.Annotations.ReadOnlyHint || create.Annotations.DestructiveHint == nil || *create.Annotations.DestructiveHint || create.Annotations.IdempotentHint {
		t.Errorf("write tool annotations: %+v", create.Annotations)
	}
	if create.Meta[MetaToolID] != "notes.create" || create.Meta[MetaPolicy] != "write" || !strings.Contains(create.Description, "[app tool notes.create, policy write]") {
		t.Errorf("the app's id: %+v %s", create.Meta, create.Description)
	}
	if in := create.InputSchema.(map[string]any); in["additionalProperties"] != false || in["properties"] == nil {
		t.Errorf("input schema: %v", in)
	}
	if !strings.Contains(h.tools["notes_get"].Description, "Call first: notes_list.") || create.OutputSchema == nil {
		t.Errorf("notes.get: %+v", h.tools["notes_get"])
	}

	if h.sync() {
		t.Error("an unchanged catalog changed the exposed tools")
	}

	// Availability changes are announced.
	f.setAvailable("s1", "sync.push", true)
	if !h.sync() {
		t.Fatal("sync.push became available")
	}
	h.waitTools("notes_create", "notes_get", "notes_list", "sync_push", "ui_get_screenshot")
	if d := h.tools["sync_push"].Annotations.DestructiveHint; d == nil || !*d {
		t.Error("a write tool not marked additive is destructive")
	}
	f.setAvailable("s1", "notes.create", false)
	h.sync()
	h.waitTools("notes_get", "notes_list", "sync_push", "ui_get_screenshot")

	// Calls go to the app; results are structured when the tool declares an object result.
	res := h.call("notes_list", map[string]any{"text": "x"})
	if res.IsError || text(t, res, nil) != `{"ok":true}` || res.StructuredContent == nil {
		t.Fatalf("notes.list: %+v", res)
	}
	e := errorOf(t, h.call("notes_get", nil))
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
	h.waitTools("notes_list")
	f.disconnect("s1")
	f.addSession("s2", "com.example.notes", wire.PolicyWrite, []wire.ToolEntry{
		tool("notes.list", "notes", wire.PolicyRead, "List."), tool("notes.count", "notes", wire.PolicyRead, "Count."),
	})
	h.sync()
	h.waitTools("notes_count", "notes_list")
	before := len(f.received())
	if res := h.call("notes_count", nil); res.IsError {
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
	h.waitTools("notes_create", "notes_delete_all", "notes_get", "notes_list", "ui_get_screenshot")
	if d := h.tools["notes_delete_all"].Annotations.DestructiveHint; d == nil || !*d {
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
	h.waitTools("notes_create", "notes_get", "notes_list", "sync_push", "ui_get_screenshot")
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
		{"", true, `{"type":"object","properties":{},"additionalProperties":false}`},
		{"", false, ""},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","properties":{"a":{}}}`, true,
			`{"additionalProperties":false,"properties":{"a":{}},"type":"object"}`},
		{`{"type":"object","additionalProperties":true}`, true, `{"additionalProperties":true,"properties":{},"type":"object"}`},
		{`{"type":"object","anyOf":[{"required":["a"]}]}`, true, `{"anyOf":[{"required":["a"]}],"properties":{},"type":"object","unevaluatedProperties":false}`},
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

// TestExposedNames checks that every exposed name passes the strictest client pattern,
// leaves room for a client's prefix, stands for one id only, and does not depend on the
// order of the catalog.
func TestExposedNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("segment.", 15) + "tool"
	ids := []string{
		"notes.create", "notes_create", // the exact id keeps its name, the dotted one is told apart
		"ui.get_screenshot", "a-b_c.D9", "ansight_list_sessions", "ansight.list_sessions",
		long, long + "2", "x",
	}
	names := exposedNames(ids)
	servers := docServerNames(t)
	want := map[string]string{
		"notes_create":      "notes_create",
		"ui.get_screenshot": "ui_get_screenshot",
		"a-b_c.D9":          "a-b_c_D9",
		"x":                 "x",
	}
	for id, name := range want {
		if names[id] != name {
			t.Errorf("%s: %q, want %q", id, names[id], name)
		}
	}
	seen := map[string]string{}
	for _, id := range ids {
		name := names[id]
		if !clientToolName.MatchString(name) || len(name) > maxExposedNameLength || strings.HasPrefix(name, "ansight_") {
			t.Errorf("%s: name %q", id, name)
		}
		for _, server := range servers {
			if full := "mcp__" + server + "__" + name; len(full) > 64 {
				t.Errorf("%s: %s is %d characters, over 64", id, full, len(full))
			}
		}
		if other, dup := seen[name]; dup {
			t.Errorf("%s and %s are both %q", id, other, name)
		}
		seen[name] = id
	}
	if names["notes.create"] == "notes_create" || !strings.HasPrefix(names["notes.create"], "notes_create_") {
		t.Errorf("notes.create: %q", names["notes.create"])
	}
	reversed := slices.Clone(ids)
	slices.Reverse(reversed)
	if again := exposedNames(reversed); !maps.Equal(again, names) {
		t.Errorf("names depend on the order: %v vs %v", again, names)
	}
}

// docServerNames are the MCP server names the README and docs/mcp.md give clients:
// 'claude mcp add [flags] NAME …' and the keys of "mcpServers" / "servers" objects.
func docServerNames(t *testing.T) []string {
	t.Helper()
	withValue := map[string]bool{"-s": true, "--scope": true, "-t": true, "--transport": true, "-H": true, "--header": true, "-e": true, "--env": true}
	jsonKey := regexp.MustCompile(`^\s*"([A-Za-z0-9_.-]+)": \{ "(?:type|command|url)"`)
	seen := map[string]bool{}
	for _, file := range []string{"../README.md", "../docs/mcp.md"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if m := jsonKey.FindStringSubmatch(line); m != nil {
				seen[m[1]] = true
			}
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "claude mcp add ")
			if !ok {
				continue
			}
			f := strings.Fields(rest)
			for i := 0; i < len(f); i++ {
				if withValue[f[i]] {
					i++
				} else if !strings.HasPrefix(f[i], "-") {
					seen[f[i]] = true
					break
				}
			}
		}
	}
	if !seen["ansight"] || !seen["ansight-demo"] {
		t.Fatalf("server names found in the docs: %v; want ansight and ansight-demo among them", seen)
	}
	return slices.Sorted(maps.Keys(seen))
}
