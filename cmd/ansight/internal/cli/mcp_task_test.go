package cli

import (
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/mcpbridge"
)

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return c.w.Write(p) }

type countingWriteCloser struct {
	countingWriter
	c io.Closer
}

func (c countingWriteCloser) Close() error { return c.c.Close() }

// TestMCPAgentTaskBytes measures what an agent's client sends and receives over stdio for a
// typical task on the demo (create a note, confirm with a screenshot, toggle dark mode,
// attempt delete-all), through the tools and through a snapshot and its refs, and the size
// of a snapshot of each demo screen against the raw ui.get_visual_tree result. It asserts
// the task's outcomes, not sizes (they are reported with -v; docs/mcp.md has the figures).
func TestMCPAgentTaskBytes(t *testing.T) {
	t.Parallel()
	var up, down atomic.Int64
	cs, wait := mcpRunCounted(t, &up, &down, "--demo")
	defer wait()
	var total [2]int64
	step := func(name string, f func()) {
		u, d := up.Load(), down.Load()
		f()
		u, d = up.Load()-u, down.Load()-d
		total[0] += u
		total[1] += d
		t.Logf("%-44s up %6d B  down %7d B", name, u, d)
	}
	call := func(name string, args any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	text := func(res *mcp.CallToolResult) string { return mcpbridge.Unframe(res.Content[0].(*mcp.TextContent).Text) }
	images := func(res *mcp.CallToolResult) int {
		n := 0
		for _, c := range res.Content {
			if _, ok := c.(*mcp.ImageContent); ok {
				n++
			}
		}
		return n
	}

	t.Log("a typical task through the tools:")
	step("tools/list", func() {
		if l, err := cs.ListTools(t.Context(), nil); err != nil || len(l.Tools) != 9 {
			t.Fatal(l, err)
		}
	})
	step("search 'note'", func() { call("ansight_search_app_tools", map[string]any{"query": "note"}) })
	step("describe notes.create", func() { call("ansight_describe_app_tool", map[string]any{"toolId": "notes.create"}) })
	step("call notes.create, after: screenshot", func() {
		res := call("ansight_call_app_tool", map[string]any{"toolId": "notes.create", "arguments": map[string]any{"title": "Groceries", "body": "milk, eggs"},
			"after": map[string]any{"include": []string{"screenshot"}}})
		if res.IsError || images(res) != 1 {
			t.Fatalf("create: %s", text(res))
		}
	})
	step("search 'dark mode'", func() { call("ansight_search_app_tools", map[string]any{"query": "dark mode"}) })
	step("describe settings.set_dark_mode", func() { call("ansight_describe_app_tool", map[string]any{"toolId": "settings.set_dark_mode"}) })
	step("call settings.set_dark_mode", func() {
		if res := call("ansight_call_app_tool", map[string]any{"toolId": "settings.set_dark_mode", "arguments": map[string]any{"enabled": true}}); res.IsError {
			t.Fatal(text(res))
		}
	})
	step("call notes.delete_all (refused)", func() {
		if res := call("ansight_call_app_tool", map[string]any{"toolId": "notes.delete_all"}); !res.IsError {
			t.Fatal("delete_all ran")
		}
	})
	t.Logf("%-44s up %6d B  down %7d B", "total", total[0], total[1])

	t.Log("the screens, raw and as snapshots:")
	var snap string
	// compare gets the screen's raw visual tree and its snapshot, and reports their sizes.
	compare := func(screen string) {
		var raw string
		step("raw ui.get_visual_tree, "+screen, func() {
			var out struct{ Result json.RawMessage }
			json.Unmarshal([]byte(text(call("ansight_call_app_tool", map[string]any{"toolId": "ui.get_visual_tree"}))), &out)
			raw = string(out.Result)
		})
		step("ansight_snapshot, "+screen, func() { snap = text(call("ansight_snapshot", nil)) })
		t.Logf("%s: snapshot %d B, raw tree %d B (%.1fx)", screen, len(snap), len(raw), float64(len(raw))/float64(len(snap)))
	}
	compare("list screen")
	ref := func(snap, marker string) string {
		for _, l := range strings.Split(snap, "\n") {
			if strings.Contains(l, marker) {
				if i := strings.Index(l, "[ref="); i >= 0 {
					return l[i+5 : i+5+strings.Index(l[i+5:], "]")]
				}
			}
		}
		t.Fatalf("no %s in\n%s", marker, snap)
		return ""
	}
	step("tap Add note by ref, snapshot after", func() {
		res := call("ansight_call_app_tool", map[string]any{"toolId": "ui.perform_action", "snapshot": true,
			"arguments": map[string]any{"reference": ref(snap, `button "Add note"`), "action": "tap"}})
		var out struct{ Snapshot string }
		json.Unmarshal([]byte(text(res)), &out)
		if res.IsError || !strings.Contains(out.Snapshot, `textbox "Title"`) {
			t.Fatalf("%s", text(res))
		}
	})
	compare("editor screen")

	t.Log("the same task through the UI, by refs:")
	total = [2]int64{}
	step("back to the list", func() {
		call("ansight_call_app_tool", map[string]any{"toolId": "ui.perform_action", "arguments": map[string]any{"reference": ref(snap, `button "Back"`), "action": "tap"}})
	})
	total = [2]int64{}
	step("ansight_snapshot with screenshot", func() {
		res := call("ansight_snapshot", map[string]any{"screenshot": true})
		snap = text(res)
		if images(res) != 1 {
			t.Fatal("no image")
		}
	})
	step("toggle dark mode by ref, snapshot after", func() {
		res := call("ansight_call_app_tool", map[string]any{"toolId": "ui.perform_action", "snapshot": true,
			"arguments": map[string]any{"reference": ref(snap, `switch "Dark mode"`), "action": "toggle"}})
		if res.IsError {
			t.Fatal(text(res))
		}
	})
	t.Logf("%-44s up %6d B  down %7d B", "total", total[0], total[1])
}

// TestMCPToolsListBytes measures tools/list over stdio with the demo's tools exposed
// (--expose-app-tools), in each schema profile: the exact schemas the app declares
// (default) and their portable form (--schema-profile portable), which no provider's rules
// refuse. It asserts the portable form's keywords only; the sizes are logged for
// docs/mcp.md (go test -run TestMCPToolsListBytes -v ./cmd/ansight/internal/cli).
func TestMCPToolsListBytes(t *testing.T) {
	t.Parallel()
	for _, profile := range []string{"exact", "portable"} {
		t.Run(profile, func(t *testing.T) {
			var up, down atomic.Int64
			args := []string{"--demo", "--expose-app-tools", "com.ansight.demo.notes"}
			if profile == "portable" {
				args = append(args, "--schema-profile", "portable")
			}
			cs, wait := mcpRunCounted(t, &up, &down, args...)
			defer wait()
			var list *mcp.ListToolsResult
			for { // until the demo app connected and its tools are exposed (go test -timeout bounds it)
				l, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(l.Tools) > 9 {
					list = l
					break
				}
			}
			d := down.Load()
			if _, err := cs.ListTools(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			d = down.Load() - d
			if profile == "portable" { // the input schemas, what function declarations carry
				for _, tool := range list.Tools {
					raw, _ := json.Marshal(tool.InputSchema)
					for _, kw := range []string{`"additionalProperties"`, `"uniqueItems"`, `"$ref"`} {
						if strings.Contains(string(raw), kw) {
							t.Errorf("%s: its portable input schema has %s: %s", tool.Name, kw, raw)
						}
					}
				}
			}
			t.Logf("tools/list, %s schemas: %d tools (9 meta-tools, %d exposed), %d B received", profile, len(list.Tools), len(list.Tools)-9, d)
		})
	}
}
