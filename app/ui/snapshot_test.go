package ui

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// sampleTree is a small window with a text field, a button and a hidden label.
func sampleTree() *Node {
	return &Node{ID: "root", Type: "Window", Role: "window", Children: []*Node{
		{ID: "name", Type: "TextField", Role: "textbox", AutomationID: "nameField", Label: "Name", Text: "Ada", Actions: []string{ActionFocus, ActionSetValue}},
		{ID: "ok", Type: "Button", Role: "button", Text: "OK", Actions: []string{ActionTap}, Bounds: &Bounds{X: 1, Y: 2, Width: 3, Height: 4}},
		{ID: "hint", Type: "Label", Role: "text", Text: "hidden hint", Hidden: true},
	}}
}

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 6e6, time.UTC)

// staleOf returns the reason of a stale_node_reference error, failing the test for
// anything else.
func staleOf(t *testing.T, err error) staleDetails {
	t.Helper()
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.CodeStaleNodeReference {
		t.Fatalf("error = %v, want %s", err, wire.CodeStaleNodeReference)
	}
	var d staleDetails
	if err := wire.Unmarshal(we.Details, &d); err != nil {
		t.Fatalf("details %s: %v", we.Details, err)
	}
	if d.RefreshWith != QueryNodesToolID {
		t.Errorf("refreshWith = %q", d.RefreshWith)
	}
	return d
}

func TestSnapshotIDsAndRevisions(t *testing.T) {
	t.Parallel()
	s := newStore(100, nil)
	idPattern := regexp.MustCompile(`^native:(\d+):[0-9a-f]{32}$`)
	var last int64
	seen := map[string]bool{}
	for i := 0; i < 5; i++ {
		snap, err := s.add("native", sampleTree(), epoch)
		if err != nil {
			t.Fatal(err)
		}
		m := idPattern.FindStringSubmatch(snap.id)
		if m == nil || m[1] != fmt.Sprint(snap.revision) {
			t.Fatalf("snapshot id %q does not match revision %d", snap.id, snap.revision)
		}
		if snap.revision <= last {
			t.Fatalf("revision %d after %d", snap.revision, last)
		}
		if seen[snap.id] {
			t.Fatalf("snapshot id %q repeated", snap.id)
		}
		seen[snap.id] = true
		last = snap.revision
		if len(snap.nodes) != 4 || snap.byID["ok"].Text != "OK" || snap.capturedAt != epoch {
			t.Fatalf("snapshot not indexed: %d nodes", len(snap.nodes))
		}
	}
	if got := s.latestRevision("native"); got != last {
		t.Errorf("latestRevision = %d, want %d", got, last)
	}
	if got := s.latestRevision("react"); got != 0 {
		t.Errorf("latestRevision of an unused source = %d, want 0", got)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	s := newStore(100, nil)
	old, _ := s.add("native", sampleTree(), epoch)
	other, _ := s.add("react", sampleTree(), epoch)
	cur, _ := s.add("native", sampleTree(), epoch)
	ref := func(snap *snapshot, node string) Reference {
		return Reference{Source: snap.source, SnapshotID: snap.id, Revision: snap.revision, NodeID: node}
	}

	if snap, n, err := s.resolve(ref(cur, "ok")); err != nil || snap != cur || n.ID != "ok" {
		t.Fatalf("resolve(latest) = %v, %v, %v", snap, n, err)
	}
	if _, _, err := s.resolve(ref(other, "ok")); err != nil {
		t.Fatalf("the latest snapshot of another source must stay valid: %v", err)
	}

	tests := []struct {
		name   string
		ref    Reference
		reason string
	}{
		{"superseded", ref(old, "ok"), staleSuperseded},
		{"node not in snapshot", ref(cur, "nope"), staleNodeMissing},
		{"unknown snapshot", Reference{"native", "native:99:00", 99, "ok"}, staleUnknownSnapshot},
		{"revision does not match id", Reference{"native", cur.id, cur.revision + 1, "ok"}, staleUnknownSnapshot},
		{"snapshot of another source", Reference{"native", other.id, other.revision, "ok"}, staleUnknownSnapshot},
		{"source never captured", Reference{"flutter", cur.id, cur.revision, "ok"}, staleUnknownSnapshot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := s.resolve(tt.ref)
			d := staleOf(t, err)
			if d.Reason != tt.reason {
				t.Errorf("reason = %q, want %q", d.Reason, tt.reason)
			}
			want := staleDetails{Source: tt.ref.Source, SnapshotID: tt.ref.SnapshotID, NodeID: tt.ref.NodeID,
				LatestRevision: s.latestRevision(tt.ref.Source), Reason: tt.reason, RefreshWith: QueryNodesToolID}
			if d != want {
				t.Errorf("details = %+v, want %+v", d, want)
			}
		})
	}
}

func TestRetention(t *testing.T) {
	t.Parallel()
	s := newStore(100, nil)
	first, _ := s.add("native", sampleTree(), epoch)
	var second *snapshot
	for i := 0; i < retainedSnapshots; i++ {
		snap, _ := s.add("native", sampleTree(), epoch)
		if i == 0 {
			second = snap
		}
	}
	if _, ok := s.get(first.id); ok {
		t.Errorf("snapshot %d still retained after %d newer ones", first.revision, retainedSnapshots)
	}
	if _, ok := s.get(second.id); !ok {
		t.Errorf("the %d most recent snapshots must be retained", retainedSnapshots)
	}
	_, _, err := s.resolve(Reference{"native", first.id, first.revision, "ok"})
	if d := staleOf(t, err); d.Reason != staleUnknownSnapshot || d.LatestRevision != first.revision+retainedSnapshots {
		t.Errorf("expired reference details = %+v", d)
	}
}

func TestSnapshotIsACopy(t *testing.T) {
	t.Parallel()
	s := newStore(100, nil)
	tree := sampleTree()
	on := true
	tree.Children[1].Checked = &on
	snap, err := s.add("native", tree, epoch)
	if err != nil {
		t.Fatal(err)
	}
	tree.Children[1].Text = "changed"
	tree.Children[1].Actions[0] = "changed"
	tree.Children[1].Bounds.X = 99
	on = false
	tree.Children = nil
	n := snap.byID["ok"]
	if n.Text != "OK" || n.Actions[0] != ActionTap || n.Bounds.X != 1 || !*n.Checked || len(snap.root.Children) != 3 {
		t.Errorf("snapshot changed with the screen's tree: %+v", n)
	}
}

func TestInvalidTrees(t *testing.T) {
	t.Parallel()
	deep := &Node{ID: "0"}
	for n, i := deep, 1; i <= maxTreeDepth; i++ {
		c := &Node{ID: fmt.Sprint(i)}
		n.Children = []*Node{c}
		n = c
	}
	wide := &Node{ID: "root"}
	for i := 0; i < 10; i++ {
		wide.Children = append(wide.Children, &Node{ID: fmt.Sprint(i)})
	}
	tests := []struct {
		name string
		root *Node
		want string
	}{
		{"nil root", nil, "no root"},
		{"nil child", &Node{ID: "r", Children: []*Node{nil}}, "nil node"},
		{"empty id", &Node{ID: "r", Children: []*Node{{Type: "Button"}}}, "has no id"},
		{"duplicate id", &Node{ID: "r", Children: []*Node{{ID: "a"}, {ID: "a"}}}, `two nodes with id "a"`},
		{"too deep", deep, "deeper than"},
		{"too many nodes", wide, "more than 10 nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(10, nil)
			if tt.root == deep {
				s = newStore(maxTreeDepth+1, nil) // fails on depth, not on size
			}
			_, err := s.add("native", tt.root, epoch)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("add = %v, want an error containing %q", err, tt.want)
			}
			if s.latestRevision("native") != 0 {
				t.Errorf("an invalid tree was recorded")
			}
		})
	}
}

func TestFilter(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	tree := sampleTree()
	tree.Children[1].Disabled = true
	s := newStore(100, nil)
	snap, _ := s.add("native", tree, epoch)
	tests := []struct {
		name string
		f    filter
		want string // matching ids in pre-order
	}{
		{"empty matches all", filter{}, "root name ok hint"},
		{"node id", filter{NodeID: "ok"}, "ok"},
		{"role is case-insensitive", filter{Role: "BUTTON"}, "ok"},
		{"type is case-insensitive", filter{Type: "textfield"}, "name"},
		{"text in text", filter{TextContains: "HINT"}, "hint"},
		{"text in label", filter{TextContains: "nam"}, "name"},
		{"action", filter{Action: ActionSetValue}, "name"},
		{"action is case-insensitive", filter{Action: "SETVALUE"}, "name"},
		{"type is a substring", filter{Type: "field"}, "name"},
		{"automation id is case-insensitive", filter{AutomationID: "NAMEFIELD"}, "name"},
		{"visible", filter{Visible: &yes}, "root name ok"},
		{"hidden", filter{Visible: &no}, "hint"},
		{"disabled", filter{Enabled: &no}, "ok"},
		{"all fields and", filter{Role: "textbox", TextContains: "ada", Enabled: &yes}, "name"},
		{"no match", filter{AutomationID: "x"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := snap.query(snap.nodes, &tt.f, 50, detail{bounds: true})
			var ids []string
			for _, raw := range r.Matches {
				var m struct {
					ID        string    `json:"id"`
					Type      string    `json:"type"`
					Reference Reference `json:"reference"`
				}
				if err := wire.Unmarshal(raw, &m); err != nil {
					t.Fatalf("%s: %v", raw, err)
				}
				ids = append(ids, m.ID)
				if m.Reference != (Reference{"native", snap.id, snap.revision, m.ID}) {
					t.Errorf("reference of %s = %+v", m.ID, m.Reference)
				}
				if m.Type != snap.byID[m.ID].Type && !(m.Type == "View" && snap.byID[m.ID].Type == "") {
					t.Errorf("type of %s = %q", m.ID, m.Type)
				}
			}
			if got := strings.Join(ids, " "); got != tt.want {
				t.Errorf("matches = %q, want %q", got, tt.want)
			}
			if r.Count != len(ids) || r.TotalMatches != len(ids) || r.Truncated {
				t.Errorf("count %d total %d truncated %v", r.Count, r.TotalMatches, r.Truncated)
			}
		})
	}
	r := snap.query(snap.nodes, &filter{}, 2, detail{})
	if r.Count != 2 || r.TotalMatches != 4 || !r.Truncated || strings.Contains(string(r.Matches[1]), `"bounds"`) {
		t.Errorf("truncated query = %+v", r)
	}
}

func TestProject(t *testing.T) {
	t.Parallel()
	// root → a, b; a → a1, a2; b → b1
	root := &Node{ID: "root", Children: []*Node{
		{ID: "a", Bounds: &Bounds{}, Children: []*Node{{ID: "a1"}, {ID: "a2"}}},
		{ID: "b", Children: []*Node{{ID: "b1"}}},
	}}
	flat := func(n *uitree.Node) string {
		var out []string
		var walk func(n *uitree.Node)
		walk = func(n *uitree.Node) {
			out = append(out, fmt.Sprintf("%s/%d", n.ID, n.ChildCount))
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(n)
		return strings.Join(out, " ")
	}
	tests := []struct {
		depth, nodes int
		want         string
		count        int
		truncated    bool
	}{
		{100, 100, "root/2 a/2 a1/0 a2/0 b/1 b1/0", 6, false},
		{0, 100, "root/2", 1, true},
		{1, 100, "root/2 a/2 b/1", 3, true},
		// Breadth-first: with 4 nodes, both top-level regions come before a's details.
		{100, 4, "root/2 a/2 a1/0 b/1", 4, true},
		{100, 1, "root/2", 1, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("depth %d nodes %d", tt.depth, tt.nodes), func(t *testing.T) {
			t.Parallel()
			out, count, truncated := project(root, tt.depth, tt.nodes, detail{})
			if got := flat(out); got != tt.want || count != tt.count || truncated != tt.truncated {
				t.Errorf("project = %q %d %v, want %q %d %v", got, count, truncated, tt.want, tt.count, tt.truncated)
			}
			if out.Children != nil && out.Children[0].Bounds != nil {
				t.Errorf("bounds included although includeBounds is false")
			}
		})
	}
}

// The schemas publish the depth bound as text.
func TestMaxDepthText(t *testing.T) {
	t.Parallel()
	if maxDepthText != strconv.Itoa(maxTreeDepth) {
		t.Errorf("maxDepthText %s, maxTreeDepth %d", maxDepthText, maxTreeDepth)
	}
}
