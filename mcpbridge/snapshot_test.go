package mcpbridge

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// screenTree is a ui.get_visual_tree result like the demo's list screen, at revision rev,
// with the given notes (id and title) as rows; rows past the second are scrolled away.
func screenTree(rev int, notes ...[2]string) string {
	var rows []string
	for i, n := range notes {
		rows = append(rows, fmt.Sprintf(`{"id":"note.%s","type":"ListItem","label":%q,"text":"body of %s","role":"listitem","supportedActions":["tap","select"],"visible":%v,"enabled":true,"childCount":0}`, n[0], n[1], n[0], i < 2))
	}
	return fmt.Sprintf(`{"source":"native","snapshotId":"native:%d:0123","revision":%d,"capturedAtUtc":"2026-01-01T00:00:00Z","nodeCount":%d,"totalNodes":%d,"truncated":false,"root":`+
		`{"id":"screen","type":"Screen","label":"Notes","role":"window","supportedActions":[],"visible":true,"enabled":true,"childCount":4,"children":[`+
		`{"id":"title","type":"TitleBar","text":"Notes","role":"header","supportedActions":[],"visible":true,"enabled":true,"childCount":0},`+
		`{"id":"wrap","type":"View","role":"","supportedActions":[],"visible":true,"enabled":true,"childCount":1,"children":[`+
		`{"id":"search","type":"SearchField","label":"Search notes","text":"milk","role":"textbox","supportedActions":["tap","focus","setValue","typeText"],"visible":true,"enabled":true,"focused":true,"childCount":0}]},`+
		`{"id":"list","type":"List","label":"Notes","role":"list","supportedActions":[],"visible":true,"enabled":true,"childCount":%d,"children":[%s]},`+
		`{"id":"dark","type":"Toggle","label":"Dark mode","role":"switch","supportedActions":["tap","toggle","setValue"],"visible":true,"enabled":true,"checked":false,"childCount":0},`+
		`{"id":"sync","type":"Button","text":"Sync","role":"button","supportedActions":["tap"],"visible":true,"enabled":false,"childCount":0}]}}`,
		rev, rev, 6+len(notes), 6+len(notes), len(notes), strings.Join(rows, ","))
}

// uiSession is a session with the standard UI tools over a scripted screen.
func uiSession(t *testing.T) (*fakeBackend, *fakeCatalog, *[]string) {
	f := newFakeBackend(t)
	c := f.addSession("s1", "com.example.notes", wire.PolicyWrite, []wire.ToolEntry{
		tool(wire.VisualTreeToolID, "ui", wire.PolicyRead, "The visual tree."),
		tool(performActionToolID, "ui", wire.PolicyWrite, "Act on a node."),
	})
	rev := 0
	notes := [][2]string{{"n1", "Groceries"}, {"n2", "Ideas"}}
	c.run[wire.VisualTreeToolID] = func(jsontext.Value) (jsontext.Value, *wire.Error) {
		rev++
		return jsontext.Value(screenTree(rev, notes...)), nil
	}
	var actions []string
	c.run[performActionToolID] = func(args jsontext.Value) (jsontext.Value, *wire.Error) {
		actions = append(actions, string(args))
		notes = append([][2]string{{fmt.Sprintf("n%d", len(notes)+1), "New"}}, notes...)
		return jsontext.Value(`{"performed":true}`), nil
	}
	return f, c, &actions
}

func TestSnapshot(t *testing.T) {
	t.Parallel()
	f, c, actions := uiSession(t)
	h := newHarness(t, f, Options{})
	res := h.call(ToolSnapshot, nil)
	snap := res.Content[0].(*mcp.TextContent).Text
	want := `# UI snapshot (source native, revision 1, 8 nodes). Act with ui.perform_action {"reference":"eN","action":…}.
<untrusted-app-content>
- window "Notes"
  - header "Notes"
  - textbox "Search notes": "milk" [focused] [ref=e1] [actions=tap,focus,setValue,typeText]
  - list "Notes"
    - listitem "Groceries": "body of n1" [ref=e2] [actions=tap,select]
    - listitem "Ideas": "body of n2" [ref=e3] [actions=tap,select]
  - switch "Dark mode" [unchecked] [ref=e4] [actions=tap,toggle,setValue]
  - button "Sync" [disabled] [ref=e5]
</untrusted-app-content>`
	if res.IsError || snap != want || res.StructuredContent != nil || res.Content[0].(*mcp.TextContent).Meta[MetaUntrusted] != true {
		t.Fatalf("snapshot:\n%s\nwant:\n%s", snap, want)
	}
	raw := screenTree(1, [2]string{"n1", "Groceries"}, [2]string{"n2", "Ideas"})
	t.Logf("snapshot %d bytes, the raw tree %d bytes", len(snap), len(raw))

	// An action takes a ref: the host's UI operation (as ansight ui) captures afresh and
	// acts on the ref's node with that capture's reference, and the fresh snapshot after
	// it keeps the refs of the nodes it had.
	res = h.call(ToolCallAppTool, map[string]any{"toolId": performActionToolID, "arguments": map[string]any{"reference": "e4", "action": "toggle"}, "snapshot": true})
	var out callOutput
	text(t, res, &out)
	if res.IsError || len(*actions) != 1 || (*actions)[0] != `{"reference":{"source":"native","snapshotId":"native:2:0123","revision":2,"nodeId":"dark"},"action":"toggle"}` {
		t.Fatalf("action %v: %+v", *actions, out)
	}
	if !strings.Contains(out.Snapshot, `listitem "New": "body of n3" [ref=e6]`) || !strings.Contains(out.Snapshot, `listitem "Ideas": "body of n2" [offscreen] [ref=e3]`) ||
		!strings.Contains(out.Snapshot, `switch "Dark mode" [unchecked] [ref=e4]`) {
		t.Fatalf("snapshot after the action:\n%s", out.Snapshot)
	}
	// e2 is still "note.n1" (Groceries), now the second row: refs name node ids, never a
	// position.
	text(t, h.call(ToolCallAppTool, map[string]any{"toolId": performActionToolID, "arguments": map[string]any{"reference": "e2", "action": "tap"}}), nil)
	if last := (*actions)[1]; !strings.Contains(last, `"revision":4,"nodeId":"note.n1"`) {
		t.Fatalf("e2: %s", last)
	}

	// A ref acts on the element it named, not on whatever holds its node id by then: the
	// switch e4 became another button, so the action fails and nothing is tapped.
	c.run[wire.VisualTreeToolID] = func(jsontext.Value) (jsontext.Value, *wire.Error) {
		return jsontext.Value(strings.Replace(screenTree(9, [2]string{"n1", "Groceries"}),
			`"id":"dark","type":"Toggle","label":"Dark mode","role":"switch"`, `"id":"dark","type":"Button","label":"Delete all","role":"button"`, 1)), nil
	}
	res = h.call(ToolCallAppTool, map[string]any{"toolId": performActionToolID, "arguments": map[string]any{"reference": "e4", "action": "tap"}})
	if e := errorOf(t, res); e.Code != "ui_target_not_found" || !strings.Contains(e.Message, "the screen changed") || !strings.Contains(e.Message, ToolSnapshot) || len(*actions) != 2 {
		t.Fatalf("e4 after the screen changed: %+v, actions %v", e, *actions)
	}

	for _, tc := range []struct {
		ref  string
		code wire.Code
	}{{"e99", wire.CodeUnknownRef}, {"x", wire.CodeUnknownRef}} {
		e := errorOf(t, h.call(ToolCallAppTool, map[string]any{"toolId": performActionToolID, "arguments": map[string]any{"reference": tc.ref, "action": "tap"}}))
		if e.Code != tc.code || e.Retryable || !strings.Contains(e.Hint, ToolSnapshot) {
			t.Errorf("%s: %+v", tc.ref, e)
		}
	}
	// In a batch, too; and a full reference passes untouched.
	full := map[string]any{"source": "native", "snapshotId": "x", "revision": 9, "nodeId": "dark"}
	res = h.call(ToolCallAppTools, map[string]any{"calls": []any{
		map[string]any{"toolId": performActionToolID, "arguments": map[string]any{"reference": "e5", "action": "tap"}},
		map[string]any{"toolId": performActionToolID, "arguments": map[string]any{"reference": full, "action": "tap"}},
	}})
	if res.IsError || !strings.Contains((*actions)[2], `"nodeId":"sync"`) || !strings.Contains((*actions)[3], `"snapshotId":"x"`) {
		t.Fatalf("batch: %v", (*actions)[2:])
	}
}

// TestSnapshotWithScreenshot: the screenshot comes as the tree call's evidence: one round
// trip, one image.
func TestSnapshotWithScreenshot(t *testing.T) {
	t.Parallel()
	f, c, _ := uiSession(t)
	shot := writePNG(t, f.dir, 390, 844)
	c.artifacts[wire.VisualTreeToolID] = func() []hostapi.Artifact { return []hostapi.Artifact{pngArtifact(shot)} }
	h := newHarness(t, f, Options{})
	res := h.call(ToolSnapshot, map[string]any{"screenshot": true})
	if got := images(t, res); res.IsError || len(got) != 1 || got[0] != [2]int{390, 844} {
		t.Fatalf("%v %+v", got, res.Content)
	}
	calls := f.received()
	if len(calls) != 1 || calls[0].After == nil || calls[0].After.Include[0] != "screenshot" || string(calls[0].Arguments) != `{"includeBounds":false,"maxNodes":1000}` {
		t.Fatalf("calls %+v", calls)
	}
}

func TestSnapshotFailures(t *testing.T) {
	t.Parallel()
	f := oneSession(t) // no ui.get_visual_tree
	h := newHarness(t, f, Options{})
	res := h.call(ToolSnapshot, nil)
	if e := errorOf(t, res); e.Code != wire.CodeNotFound {
		t.Fatalf("%+v", e)
	}
	var out callOutput
	text(t, h.call(ToolCallAppTool, map[string]any{"toolId": "notes.list", "snapshot": true}), &out)
	if !out.Success || !strings.HasPrefix(out.Snapshot, "not taken: tool_not_found") {
		t.Fatalf("%+v", out)
	}
	if e := errorOf(t, h.call(ToolSnapshot, map[string]any{"maxNodes": 0})); e.Code != wire.CodeArgumentsSchemaInvalid {
		t.Fatalf("%+v", e)
	}
}

// TestSnapshotOfOfficialTrees: the official Android runtime's and UIKit's compact v2
// trees (typeId, no type; values in visual; an SDK overlay surface), and the legacy
// per-node form older SDKs send, read as ours do: roles
// and names, values, states, refs for actionable nodes, the overlay surface left out.
func TestSnapshotOfOfficialTrees(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		fixture string
		want    []string
		absent  []string
	}{
		{"android-views.json", []string{
			`- text "Notes"`,
			`- textbox "Search notes": "milk" [focused] [ref=e1] [actions=tap,typeText,focus]`,
			`- textbox "PIN" [ref=e2] [actions=tap,typeText,focus]`,
			`- scrollview [ref=e3] [actions=scroll,swipe]`,
			`- button "Save" [ref=e4]`,
			`- button "Delete" [disabled] [ref=e5]`,
			`- button "Dark mode": "false" [ref=e6]`,
			`- button "Help" [offscreen] [ref=e7]`,
		}, []string{"overlay", "ansight.overlay.surface"}},
		{"legacy-go.json", []string{ // an older Go SDK's per-node form
			`- window "Notes"`,
			`- textbox "Search notes": "milk" [focused] [ref=e1] [actions=tap,focus,setValue,typeText]`,
			`- switch "Dark mode" [unchecked] [ref=e2] [actions=tap,toggle,setValue]`,
		}, nil},
		{"ios-uikit.json", []string{
			`- textbox "ada@example.com" [ref=e1] [actions=tap,typeText,focus]`,
			`- button "Sign in" [ref=e3]`,
			`- switch "RememberSwitch": "true" [ref=e4]`,
		}, nil},
	} {
		t.Run(tt.fixture, func(t *testing.T) {
			t.Parallel()
			tree, err := os.ReadFile(filepath.Join("..", "wire", "uitree", "testdata", "official", tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			f := newFakeBackend(t)
			c := f.addSession("s1", "com.example.official", wire.PolicyWrite, []wire.ToolEntry{
				tool(wire.VisualTreeToolID, "ui", wire.PolicyRead, "The visual tree."),
			})
			c.run[wire.VisualTreeToolID] = func(jsontext.Value) (jsontext.Value, *wire.Error) { return tree, nil }
			h := newHarness(t, f, Options{})
			snap := text(t, h.call(ToolSnapshot, nil), nil)
			for _, w := range tt.want {
				if !strings.Contains(snap, w+"\n") {
					t.Errorf("snapshot lacks %q:\n%s", w, snap)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(snap, a) {
					t.Errorf("snapshot shows %q:\n%s", a, snap)
				}
			}
		})
	}
}
