package ui_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// TestInspectNode: the official result shape (format, platform, snapshotId, revision,
// reference, types, node), ancestors root first, descendants in document order, the
// nodeId alias id, and stale or missing references.
func TestInspectNode(t *testing.T) {
	t.Parallel()
	h := newHarness(t, &fakeScreen{name: "Ada"})
	res, _ := h.Call(ui.InspectNodeToolID, `{"nodeId":"name","includeAncestors":true}`)
	m := decode(t, res)
	node := m["node"].(map[string]any)
	if m["format"] != uitree.FormatNative || m["platform"] != "linux" || m["revision"] != 1.0 || m["adapter"] != ui.Adapter ||
		fmt.Sprint(m["types"]) != "[Window TextField Button Toggle Label]" || node["id"] != "name" || node["typeId"] != 1.0 ||
		node["visual"].(map[string]any)["value"] != "Ada" || node["properties"] == nil || node["type"] != nil {
		t.Fatalf("inspect = %v", m)
	}
	if ref := m["reference"].(map[string]any); ref["nodeId"] != "name" || ref["snapshotId"] != m["snapshotId"] || ref["revision"] != 1.0 {
		t.Errorf("reference = %v", ref)
	}
	if a := m["ancestors"].([]any); len(a) != 1 || a[0].(map[string]any)["id"] != "root" || m["descendants"] != nil {
		t.Errorf("ancestors = %v, descendants = %v", a, m["descendants"])
	}

	// By the latest snapshot and the alias id: no new capture.
	snap := m["snapshotId"].(string)
	res, _ = h.Call(ui.InspectNodeToolID, fmt.Sprintf(`{"snapshotId":%q,"id":"root","includeDescendants":true,"includeProperties":false}`, snap))
	m = decode(t, res)
	var ids []string
	for _, d := range m["descendants"].([]any) {
		ids = append(ids, d.(map[string]any)["id"].(string))
	}
	if m["revision"] != 1.0 || strings.Join(ids, ",") != "name,ok,switch,off,hint,vanishing" {
		t.Errorf("descendants of root = %v (revision %v)", ids, m["revision"])
	}
	if strings.Contains(string(res), `"properties"`) {
		t.Errorf("includeProperties false still lists properties")
	}
	// A reference works the same; after a new capture it is stale.
	ref := fmt.Sprintf(`{"source":"native","snapshotId":%q,"revision":1,"nodeId":"ok"}`, snap)
	h.Call(ui.InspectNodeToolID, `{"reference":`+ref+`}`)
	h.Call(ui.GetVisualTreeToolID, `{}`)
	for _, tt := range []struct {
		name, args string
		code       wire.Code
	}{
		{"superseded reference", `{"reference":` + ref + `}`, wire.CodeStaleNodeReference},
		{"superseded snapshot", fmt.Sprintf(`{"snapshotId":%q,"nodeId":"ok"}`, snap), wire.CodeStaleNodeReference},
		{"node not on screen", `{"nodeId":"ghost"}`, wire.CodeStaleNodeReference},
		{"no node id", `{"includeAncestors":true}`, ui.CodeNodeIDRequired},
		{"blank node id", `{"nodeId":"  "}`, ui.CodeNodeIDRequired},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := apptest.New(t, h.App()).Fail(ui.InspectNodeToolID, tt.args); err.Code != tt.code {
				t.Errorf("%v, want %s", err, tt.code)
			}
		})
	}
}

// TestSecureNode: a secure entry's text is in no tree, no match, no inspected node and no
// action outcome, and textContains does not find it; its label stays.
func TestSecureNode(t *testing.T) {
	t.Parallel()
	root := &ui.Node{ID: "root", Type: "Window", Children: []*ui.Node{
		{ID: "pw", Type: "SecureField", Role: "textbox", Label: "Password", Text: "hunter2", Secure: true,
			Actions: []string{ui.ActionTap, ui.ActionTypeText}},
	}}
	s := &echoScreen{treeScreen: treeScreen{root}}
	a := app.New(app.Options{})
	if err := ui.Register(a, s, ui.Options{}); err != nil {
		t.Fatal(err)
	}
	h := apptest.New(t, a)
	tree, _ := h.Call(ui.GetVisualTreeToolID, `{"includeComputedStyles":true}`)
	query, _ := h.Call(ui.QueryNodesToolID, `{"role":"textbox"}`)
	_, refs := matchesOf(t, query)
	act, _ := h.Call(ui.PerformActionToolID, `{"reference":`+refs["pw"]+`,"action":"typeText","value":"2"}`)
	inspect, _ := h.Call(ui.InspectNodeToolID, `{"nodeId":"pw"}`)
	if !strings.Contains(string(act), `"ok":true`) {
		t.Errorf("the screen's other outcome is kept: %s", act)
	}
	for name, v := range map[string][]byte{"tree": tree, "query": query, "inspect": inspect, "action": act} {
		if strings.Contains(string(v), "hunter2") {
			t.Errorf("%s publishes the secret: %s", name, v)
		}
	}
	if !strings.Contains(string(tree), `"label":"Password"`) || !strings.Contains(string(tree), `"isPassword":true`) {
		t.Errorf("tree: %s", tree)
	}
	if q, _ := h.Call(ui.QueryNodesToolID, `{"textContains":"hunter"}`); !strings.Contains(string(q), `"count":0`) {
		t.Errorf("textContains found the secret: %s", q)
	}
	if parsed, err := uitree.Parse(tree); err != nil || !parsed.Node("pw").Secure {
		t.Errorf("the reader does not see the node as secure: %v", err)
	}
}

// echoScreen answers an action with the screen's text, as a careless screen would.
type echoScreen struct{ treeScreen }

func (s *echoScreen) Perform(_ context.Context, id string, act ui.Action) (map[string]any, error) {
	return map[string]any{"text": "hunter2" + fmt.Sprint(act.Value), "value": "hunter2", "ok": true}, nil
}

// TestRootScope: the official root and includeInactivePages options are accepted with
// their documented meaning (every scope is the screen's one tree), an unknown scope is
// refused with a clear error.
func TestRootScope(t *testing.T) {
	t.Parallel()
	h := newHarness(t, &fakeScreen{})
	plain, _ := h.Call(ui.GetVisualTreeToolID, `{}`)
	for _, args := range []string{`{"root":"window"}`, `{"root":"currentPage","includeInactivePages":true}`, `{"root":"RootPage"}`} {
		res, _ := h.Call(ui.GetVisualTreeToolID, args)
		m := decode(t, res)
		if m["rootScope"] == nil || m["nodeCount"] != decode(t, plain)["nodeCount"] {
			t.Errorf("%s: %v", args, m)
		}
		if err := uitree.Validate(res); err != nil {
			t.Errorf("%s: %v", args, err)
		}
	}
	for _, tool := range []string{ui.GetVisualTreeToolID, ui.QueryNodesToolID} {
		if err := h.Fail(tool, `{"root":"shell"}`); err.Code != wire.CodeArgumentsInvalid || !strings.Contains(err.Message, "window, currentPage, rootPage") {
			t.Errorf("%s with an unknown root: %v", tool, err)
		}
	}
	if res, _ := h.Call(ui.QueryNodesToolID, `{"root":"window","includeInactivePages":false,"nodeId":"ok"}`); !strings.Contains(string(res), `"count":1`) {
		t.Errorf("query with a root scope: %s", res)
	}
}
