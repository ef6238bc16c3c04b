package uitree

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func ids(nodes []*Node) string {
	var s []string
	for _, n := range nodes {
		s = append(s, n.ID)
	}
	return strings.Join(s, ",")
}

// TestSelectorSemantics holds the official rules: exact by default, Contains for
// substrings, case-insensitive unless asked, AND of criteria, Android resource ids,
// ancestors, actions and states with ancestors.
func TestSelectorSemantics(t *testing.T) {
	t.Parallel()
	android := mustParse(t, fixture(t, "android-views.json"))
	maui := mustParse(t, fixture(t, "maui-flags.json"))
	for _, tt := range []struct {
		name string
		tree *Tree
		sel  Selector
		want string
	}{
		{"exact text", android, Selector{Text: "Save"}, "0.0.3.0"},
		{"exact is not a substring", android, Selector{Text: "Sav"}, ""},
		{"contains", android, Selector{Text: "sav", Contains: true}, "0.0.3.0"},
		{"case-insensitive by default", android, Selector{Text: "SAVE"}, "0.0.3.0"},
		{"case-sensitive", android, Selector{Text: "SAVE", CaseSensitive: true}, ""},
		{"trimmed criterion", android, Selector{Text: "  Save "}, "0.0.3.0"},
		{"AND of criteria", android, Selector{Role: "button", Text: "Notes"}, ""},
		{"role", android, Selector{Role: "TextBox"}, "0.0.1,0.0.2"},
		{"resource id by name", android, Selector{AutomationID: "save"}, "0.0.3.0"},
		{"resource id qualified", android, Selector{AutomationID: "com.example.notes:id/save"}, "0.0.3.0"},
		{"resource ids both qualified differ", android, Selector{AutomationID: "other:id/save"}, ""},
		{"resource name never by contains", android, Selector{AutomationID: "sav", Contains: true}, "0.0.3.0"},
		{"ancestor", android, Selector{Ancestor: "list", Role: "button"}, "0.0.3.0,0.0.3.2,0.0.3.1"},
		{"action", android, Selector{Action: "typetext"}, "0.0.1,0.0.2"},
		{"enabled false", android, Selector{Role: "button", Enabled: ptr(false)}, "0.0.3.1"},
		{"visible false", android, Selector{Role: "button", Visible: ptr(false)}, "0.0.4"},
		{"node id never fuzzy", android, Selector{NodeID: "0.0", Contains: true}, "0.0"},
		{"overlay surface never matches", android, Selector{AutomationID: "ansight.overlay.surface"}, ""},
		{"flags with ancestors", maui, Selector{AutomationID: "SaveButton", Enabled: ptr(true)}, "accounts-save,offscreen-save"},
		{"type", maui, Selector{Type: "entry"}, "accounts-name"},
		{"type contains", maui, Selector{Type: "page", Contains: true}, "page-accounts,page-settings"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ids(tt.tree.Find(tt.sel)); got != tt.want {
				t.Fatalf("Find(%s) = %q, want %q", tt.sel.String(), got, tt.want)
			}
		})
	}
}

// TestSelectionOrder: action-ready matches first, then the active page's, then those
// with usable bounds, then document order; Index applies after.
func TestSelectionOrder(t *testing.T) {
	t.Parallel()
	tree := mustParse(t, fixture(t, "maui-flags.json"))
	// settings-save is first in the document but under a disabled page and not in the
	// active page; offscreen-save is in the active page but outside the viewport.
	if got := ids(tree.Find(Selector{AutomationID: "SaveButton"})); got != "accounts-save,offscreen-save,settings-save" {
		t.Fatalf("order %q", got)
	}
	for _, tt := range []struct {
		index *int
		want  string
	}{{nil, "accounts-save"}, {ptr(0), "accounts-save"}, {ptr(1), "offscreen-save"}, {ptr(2), "settings-save"}} {
		n, err := tree.Resolve(Selector{AutomationID: "SaveButton", Index: tt.index})
		if err != nil || n.ID != tt.want {
			t.Errorf("Resolve index %v = %v, %v; want %s", tt.index, n, err, tt.want)
		}
	}
	_, err := tree.Resolve(Selector{AutomationID: "SaveButton", Index: ptr(3)})
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.Matches != 3 || !strings.Contains(err.Error(), "matched 3 node(s), but index 3 was requested") {
		t.Fatalf("out of range: %v", err)
	}
}

// TestDuplicateIDs: a second node with the same id is dropped (the first wins).
func TestDuplicateIDs(t *testing.T) {
	t.Parallel()
	tree := mustParse(t, []byte(`{"root":{"id":"r","type":"Window","children":[
		{"id":"b","type":"Button","label":"Go"},{"id":"b","type":"Button","label":"Go"},{"type":"Button","label":"Go"},{"type":"Button","label":"Go"}]}}`))
	if got := tree.Find(Selector{Text: "go"}); len(got) != 3 {
		t.Fatalf("matches %d, want 3 (id-less nodes are never duplicates)", len(got))
	}
}

// TestNearest: a selector that matches nothing gets the closest nodes, and what each lacks.
func TestNearest(t *testing.T) {
	t.Parallel()
	tree := mustParse(t, fixture(t, "android-views.json"))
	_, err := tree.Resolve(Selector{Text: "Sve", Role: "button"})
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.Matches != 0 || len(nf.Nearest) == 0 {
		t.Fatalf("Resolve = %v", err)
	}
	best := nf.Nearest[0]
	if best.Node.ID != "0.0.3.0" || !slices.Equal(best.Missed, []string{"text"}) || best.Score <= 0 || best.Score >= 1 {
		t.Fatalf("best candidate %s score %.2f missed %v", best.Node.ID, best.Score, best.Missed)
	}
	for i := 1; i < len(nf.Nearest); i++ {
		if nf.Nearest[i].Score > nf.Nearest[i-1].Score {
			t.Fatalf("candidates out of order: %+v", nf.Nearest)
		}
	}
	if c := tree.Nearest(Selector{Text: "save", CaseSensitive: true}, 3); len(c) == 0 || c[0].Node.ID != "0.0.3.0" {
		t.Fatalf("a case difference is near: %+v", c)
	}
}

// TestHitTest: the topmost shown node at a point, then the nearest that takes an action.
func TestHitTest(t *testing.T) {
	t.Parallel()
	tree := mustParse(t, fixture(t, "android-views.json"))
	if n := tree.HitTest(100, 600, nil); n == nil || n.ID != "0.0.3.0" {
		t.Fatalf("hit %v", n)
	}
	scroll := func(n *Node) bool { return n.Supports("scroll") }
	if n := tree.HitTest(100, 600, scroll); n == nil || n.ID != "0.0.3" {
		t.Fatalf("scrollable at the point: %v", n)
	}
	if n := tree.HitTest(100, 2150, nil); n == nil || n.ID != "0.0" {
		t.Fatalf("a hidden node is never hit: %v", n)
	}
	if x, y, ok := tree.Point(0.5, 0.25); !ok || x != 540 || y != 600 {
		t.Fatalf("Point = %v %v %v", x, y, ok)
	}
}
