package uitree

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// reading is what a node reads as: the fields every client relies on.
func reading(n *Node) string {
	op := 1.0
	if n.Opacity != nil {
		op = *n.Opacity
	}
	checked := "-"
	if n.Checked != nil {
		checked = fmt.Sprint(*n.Checked)
	}
	return fmt.Sprintf("id=%q type=%q aid=%q label=%q vtext=%q text=%q value=%q role=%q actions=%v vis=%v en=%v shown=%v usable=%v "+
		"cur=%v act=%v focus=%v/%v checked=%s secure=%v back=%v bounds=%v z=%v op=%v fg=%q bg=%q stub=%v props=%s page=%v injected=%v",
		n.ID, n.Type, n.AutomationID, n.Label, n.VisualText, n.Text, n.Value, n.Role, n.Actions, n.Visible, n.Enabled, n.shown, n.usable,
		n.CurrentPage, n.ActivePage, n.Focusable, n.Focused, checked, n.Secure, n.NavigatesBack, n.Bounds, n.Z, op,
		n.Foreground, n.Background, n.Stub, n.Properties, n.inActivePage, n.injected)
}

// TestAppendRoundTrip: every fixture, written with Append, passes the gate and reads back
// node for node as it read before (a legacy tree becomes compact v2 and loses nothing).
func TestAppendRoundTrip(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"android-views.json", "ios-uikit.json", "maui-flags.json", "react-props.json", "legacy-go.json"} {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			before := mustParse(t, fixture(t, f))
			out := Append(nil, before)
			if err := Validate(out); err != nil {
				t.Fatalf("Append's output fails the gate: %v\n%s", err, out)
			}
			after := mustParse(t, out)
			if len(after.All()) != len(before.All()) {
				t.Fatalf("%d nodes, want %d", len(after.All()), len(before.All()))
			}
			for i, n := range before.All() {
				if got, want := reading(after.All()[i]), reading(n); got != want {
					t.Errorf("node %d reads\n  %s\nwant\n  %s", i, got, want)
				}
			}
			if after.SnapshotID != before.SnapshotID || after.Revision != before.Revision || after.Source != before.Source ||
				!after.CapturedAt.Equal(before.CapturedAt) || after.Truncated != before.Truncated {
				t.Errorf("payload: %+v, want %+v", after, before)
			}
			if before.Compact() && after.Format != before.Format {
				t.Errorf("format %q, want %q", after.Format, before.Format)
			}
		})
	}
}

// TestAppendBuiltTree: a tree built in code (as the SDK builds one) writes the official
// node schema's required members, a types registry in first-seen order, and leaves a
// secure node's value out.
func TestAppendBuiltTree(t *testing.T) {
	t.Parallel()
	pw := &Node{ID: "pw", Type: "SecureField", Label: "Password", Value: "hunter2", Role: "textbox", Secure: true,
		Visible: true, Enabled: true, Actions: []string{"tap"}}
	root := &Node{ID: "root", Type: "Screen", Visible: true, Enabled: true, Bounds: &Rect{0, 0, 390, 844},
		Children: []*Node{
			{ID: "b1", Type: "Button", Text: "Save", VisualText: "Save", Visible: true, Enabled: false, Actions: []string{"tap"}},
			pw,
			{ID: "b2", Type: "Button", Text: strings.Repeat("é", 300), VisualText: strings.Repeat("é", 300), Visible: false, Enabled: true},
		}}
	tree := &Tree{Format: FormatNative, Platform: "linux", Source: "native", Adapter: "go.ui", SnapshotID: "native:1:ab",
		Revision: 1, CapturedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Root: root}
	out := string(Append(nil, tree))
	if err := Validate([]byte(out)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"format":"ansight.native.visual-tree.compact.v2"`, `"types":["Screen","Button","SecureField"]`,
		`"nodeIdentity":{"scope":"snapshot","source":"native","staleAfterRevision":1}`,
		`"flagBits":{"visible":1,"enabled":2}`, `"nodeCount":4`,
		`{"id":"b1","typeId":1,"role":"button","supportedActions":["tap"],"interactable":false,"visible":true,"enabled":false,"flags":1,"focusable":false,"childCount":0,"visual":{"opacity":1,"text":"Save"}}`,
		`"isPassword":true`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s\n%s", want, out)
		}
	}
	if strings.Contains(out, "hunter2") {
		t.Errorf("a secure value was written:\n%s", out)
	}
	back := mustParse(t, []byte(out))
	long := back.Node("b2")
	if long.Text != strings.Repeat("é", 300) || !strings.Contains(out, strings.Repeat("é", 240)+`..."`) {
		t.Errorf("a long text: visual.text is bounded, the text member whole")
	}
	if got := back.Node("b1").Role; got != "button" {
		t.Errorf("a role-less node is written with its inferred role, got %q", got)
	}
	node := string(AppendNode(nil, back.Node("b1"), Types(root), true))
	if !strings.HasPrefix(node, `{"id":"b1","typeId":1,"type":"Button",`) || strings.Contains(node, "children") {
		t.Errorf("AppendNode: %s", node)
	}
	if !slices.Equal(Types(root), []string{"Screen", "Button", "SecureField"}) {
		t.Errorf("Types %v", Types(root))
	}
}
