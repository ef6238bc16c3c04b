package ui_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// harness drives the app through App.Handle (package apptest).
type harness = apptest.Harness

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeScreen is a tiny form: a name field, an OK button that counts taps, a switch, a
// disabled button, a hidden hint, a node that vanishes when acted on, and a "done" label
// that appears from the doneAfter-th capture on (for ui.wait).
type fakeScreen struct {
	mu         sync.Mutex
	name       string
	taps       int
	on         bool
	captures   int
	doneAfter  int // 0: never
	captureErr error
	lastAction ui.Action
}

func (s *fakeScreen) Capture(ctx context.Context) (*ui.Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.captureErr != nil {
		return nil, s.captureErr
	}
	s.captures++
	on := s.on
	root := &ui.Node{ID: "root", Type: "Window", Role: "window", Bounds: &ui.Bounds{Width: 40, Height: 80}, Children: []*ui.Node{
		{ID: "name", Type: "TextField", Role: "textbox", AutomationID: "nameField", Label: "Name", Text: s.name,
			Actions: []string{ui.ActionFocus, ui.ActionSetValue, ui.ActionTypeText}, Bounds: &ui.Bounds{X: 1, Y: 1, Width: 38, Height: 10},
			Properties: map[string]string{"fontSize": "17", "foreground": "#1C1C1E"}},
		{ID: "ok", Type: "Button", Role: "button", Text: fmt.Sprintf("OK (%d)", s.taps), Actions: []string{ui.ActionTap}},
		{ID: "switch", Type: "Toggle", Role: "switch", Label: "Dark mode", Checked: &on, Actions: []string{ui.ActionToggle, ui.ActionSetValue}},
		{ID: "off", Type: "Button", Role: "button", Text: "Disabled", Disabled: true, Actions: []string{ui.ActionTap}},
		{ID: "hint", Type: "Label", Role: "text", Text: "Hint", Hidden: true},
		{ID: "vanishing", Type: "Button", Role: "button", Text: "Gone", Actions: []string{ui.ActionTap}},
	}}
	if s.doneAfter > 0 && s.captures >= s.doneAfter {
		root.Children = append(root.Children, &ui.Node{ID: "done", Type: "Label", Role: "status", Text: "Done"})
	}
	return root, nil
}

func (s *fakeScreen) Perform(ctx context.Context, id string, act ui.Action) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastAction = act
	switch id + "/" + act.Name {
	case "ok/tap":
		s.taps++
		return map[string]any{"taps": s.taps, "action": "overridden by the toolkit"}, nil
	case "name/setValue", "name/typeText":
		v, ok := act.Value.(string)
		if !ok {
			return nil, fmt.Errorf("%w: %s needs a string", ui.ErrInvalidValue, act.Name)
		}
		if act.Name == ui.ActionSetValue {
			s.name = v
		} else {
			s.name += v
		}
		return map[string]any{"text": s.name}, nil
	case "name/focus":
		return nil, fmt.Errorf("%w: this field cannot be focused today", ui.ErrActionNotSupported)
	case "switch/toggle":
		s.on = !s.on
		return map[string]any{"checked": s.on}, nil
	case "switch/setValue":
		v, ok := act.Value.(bool)
		if !ok {
			return nil, fmt.Errorf("%w: setValue on a switch needs a boolean", ui.ErrInvalidValue)
		}
		s.on = v
		return map[string]any{"checked": s.on}, nil
	case "vanishing/tap":
		return nil, ui.ErrNodeNotFound
	}
	return nil, errors.New("unexpected action " + id + "/" + act.Name)
}

func (s *fakeScreen) Render(ctx context.Context) (image.Image, error) {
	img := image.NewRGBA(image.Rect(0, 0, 40, 80))
	for y := 0; y < 80; y++ {
		for x := 0; x < 40; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 6), uint8(y * 3), 200, 255})
		}
	}
	return img, nil
}

var pinnedNow = time.Date(2025, 6, 7, 8, 9, 10, 123456789, time.UTC)

func newHarness(t *testing.T, s *fakeScreen) *harness {
	t.Helper()
	a := app.New(app.Options{})
	if err := ui.Register(a, s, ui.Options{Now: func() time.Time { return pinnedNow }, Platform: "linux"}); err != nil {
		t.Fatal(err)
	}
	return apptest.New(t, a)
}

// decode unmarshals a result into a generic value for inspection.
func decode(t *testing.T, v jsontext.Value) map[string]any {
	t.Helper()
	var m map[string]any
	if err := wire.Unmarshal(v, &m); err != nil {
		t.Fatalf("%s: %v", v, err)
	}
	return m
}

// matchesOf returns the ids and references of a query result.
func matchesOf(t *testing.T, v jsontext.Value) (ids []string, refs map[string]string) {
	t.Helper()
	var r struct {
		Matches []struct {
			ID        string         `json:"id"`
			Reference jsontext.Value `json:"reference"`
		} `json:"matches"`
	}
	if err := wire.Unmarshal(v, &r); err != nil {
		t.Fatal(err)
	}
	refs = map[string]string{}
	for _, m := range r.Matches {
		ids = append(ids, m.ID)
		refs[m.ID] = string(m.Reference)
	}
	return ids, refs
}

func TestCatalogEntries(t *testing.T) {
	t.Parallel()
	h := newHarness(t, &fakeScreen{})
	r := h.Send(wire.TypeQuery, `{"detail":"full"}`)
	want := map[string]wire.Policy{
		ui.GetVisualTreeToolID: wire.PolicyRead, ui.QueryNodesToolID: wire.PolicyRead,
		ui.PerformActionToolID: wire.PolicyWrite, ui.WaitToolID: wire.PolicyRead, ui.GetScreenshotToolID: wire.PolicyRead,
		ui.InspectNodeToolID: wire.PolicyRead,
		// The official SDKs' overlay policies: changes are write, reads read.
		ui.ShowOverlayToolID: wire.PolicyWrite, ui.UpdateOverlayToolID: wire.PolicyWrite,
		ui.RemoveOverlayToolID: wire.PolicyWrite, ui.ClearOverlaysToolID: wire.PolicyWrite,
		ui.GetOverlayToolID: wire.PolicyRead, ui.QueryOverlaysToolID: wire.PolicyRead,
	}
	if len(r.Catalog.Tools) != len(want) {
		t.Fatalf("catalog has %d tools, want %d", len(r.Catalog.Tools), len(want))
	}
	for _, e := range r.Catalog.Tools {
		if want[e.ID] != e.Policy || e.Category != "ui" {
			t.Errorf("%s: policy %s category %s", e.ID, e.Policy, e.Category)
		}
		// Published schemas compile, and are in the protocol's closed form (the implied
		// additionalProperties:false is not written).
		for _, s := range []jsontext.Value{e.ArgumentsSchema, e.ResultSchema} {
			if _, err := schema.Compile(s); err != nil {
				t.Errorf("%s: schema does not compile: %v", e.ID, err)
			}
			if bytes.Contains(s, []byte(`"additionalProperties":false`)) {
				t.Errorf("%s: schema publishes additionalProperties:false", e.ID)
			}
		}
	}
	if err := ui.Register(h.App(), &fakeScreen{}, ui.Options{}); err == nil || !errors.Is(err, app.ErrDuplicateTool) {
		t.Errorf("registering twice = %v, want ErrDuplicateTool", err)
	}
	if err := ui.Register(app.New(app.Options{}), &fakeScreen{}, ui.Options{Source: "not a name"}); err == nil {
		t.Error("a source with spaces was accepted")
	}
}

func TestArgumentsAreValidated(t *testing.T) {
	t.Parallel()
	h := newHarness(t, &fakeScreen{})
	tests := []struct{ tool, args string }{
		{ui.GetVisualTreeToolID, `{"source":"react"}`},
		{ui.GetVisualTreeToolID, `{"includeBounds":"yes"}`},
		{ui.GetVisualTreeToolID, `{"maxDepth":1.5}`},
		{ui.GetVisualTreeToolID, `{"extra":1}`},
		{ui.QueryNodesToolID, `{"maxResults":"10"}`},
		{ui.QueryNodesToolID, `{"visible":1}`},
		{ui.QueryNodesToolID, `{"includeComputedStyles":"false"}`},
		{ui.PerformActionToolID, `{"reference":{"source":"native","snapshotId":"x","revision":1},"action":"tap"}`},
		{ui.PerformActionToolID, `{"reference":{"source":"native","snapshotId":"x","revision":1,"nodeId":"a","more":1},"action":"tap"}`},
		{ui.PerformActionToolID, `{"reference":{"source":"native","snapshotId":"x","revision":1,"nodeId":"a"},"action":"tap","value":[1]}`},
		{ui.PerformActionToolID, `{"reference":{"source":"native","snapshotId":"x","revision":1,"nodeId":"a"}}`},
		{ui.PerformActionToolID, `{"snapshotId":"x","nodeId":"a","action":"select","index":"2"}`},
		{ui.WaitToolID, `{}`},
		{ui.WaitToolID, `{"condition":"appears"}`},
		{ui.WaitToolID, `{"condition":"exists","timeoutMilliseconds":1.5}`},
		{ui.GetScreenshotToolID, `{"format":"gif"}`},
		{ui.GetScreenshotToolID, `{"afterScreenUpdates":"false"}`},
		{ui.GetScreenshotToolID, `{"scale":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			if err := apptest.New(t, h.App()).Fail(tt.tool, tt.args); err.Code != wire.CodeArgumentsSchemaInvalid {
				t.Errorf("%s, want %s", err.Code, wire.CodeArgumentsSchemaInvalid)
			}
		})
	}
	if err := h.Fail(ui.PerformActionToolID, `{"action":"tap"}`); err.Code != ui.CodeActionReferenceRequired {
		t.Errorf("no target: %v", err)
	}
	if err := h.Fail(ui.PerformActionToolID, `{"snapshotId":"native:1:00","action":"tap"}`); err.Code != ui.CodeActionReferenceRequired {
		t.Errorf("no node id: %v", err)
	}
}

// The official SDKs accept JSON null for optional arguments, empty filter strings and
// out-of-range numbers (they clamp); so does the toolkit.
func TestLenientArguments(t *testing.T) {
	t.Parallel()
	h := newHarness(t, &fakeScreen{})
	tests := []struct{ tool, args, want string }{
		{ui.GetVisualTreeToolID, `{"maxDepth":-1}`, `"nodeCount":1,`},
		{ui.GetVisualTreeToolID, `{"maxDepth":500}`, `"nodeCount":7,`},
		{ui.GetVisualTreeToolID, `{"maxNodes":0}`, `"nodeCount":1,`},
		{ui.GetVisualTreeToolID, `{"source":null,"rootNodeId":null,"maxDepth":null,"includeBounds":null}`, `"nodeCount":7,`},
		{ui.QueryNodesToolID, `{"maxResults":0}`, `"count":1,`},
		{ui.QueryNodesToolID, `{"maxResults":501}`, `"count":7,`},
		{ui.QueryNodesToolID, `{"textContains":"","automationId":null,"visible":null,"snapshotId":null}`, `"count":7,`},
		{ui.WaitToolID, `{"condition":"exists","nodeId":"ok","snapshotId":"native:999:00"}`, `"matched":true`},
		{ui.GetScreenshotToolID, `{"quality":0,"format":"jpeg"}`, `"format":"jpeg"`},
		{ui.GetScreenshotToolID, `{"maxWidth":0}`, `"width":1,`},
		{ui.GetScreenshotToolID, `{"maxWidth":null,"format":null,"quality":null,"annotateNodeIds":true}`, `"annotationApplied":false`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			res, _ := apptest.New(t, h.App()).Call(tt.tool, tt.args)
			if !strings.Contains(string(res), tt.want) {
				t.Errorf("%s(%s) = %s, want it to contain %s", tt.tool, tt.args, res, tt.want)
			}
		})
	}
}

func TestGetVisualTree(t *testing.T) {
	t.Parallel()
	s := &fakeScreen{name: "Ada"}
	h := newHarness(t, s)
	res, _ := h.Call(ui.GetVisualTreeToolID, `{}`)
	m := decode(t, res)
	if !regexp.MustCompile(`^native:1:[0-9a-f]{32}$`).MatchString(m["snapshotId"].(string)) ||
		m["revision"] != 1.0 || m["source"] != "native" || m["capturedAtUtc"] != "2025-06-07T08:09:10.123456789Z" ||
		m["nodeCount"] != 7.0 || m["totalNodes"] != 7.0 || m["truncated"] != false {
		t.Errorf("tree header = %v", m)
	}
	root := m["root"].(map[string]any)
	name := root["children"].([]any)[0].(map[string]any)
	wantName := map[string]any{
		"id": "name", "typeId": 1.0, "role": "textbox", "automationId": "nameField", "label": "Name",
		"supportedActions": []any{"focus", "setValue", "typeText"}, "interactable": true, "visible": true, "enabled": true,
		"flags": 3.0, "focusable": true, "childCount": 0.0, "visual": map[string]any{"opacity": 1.0, "value": "Ada"},
		"bounds": map[string]any{"x": 1.0, "y": 1.0, "width": 38.0, "height": 10.0},
	}
	if fmt.Sprint(m["types"]) != "[Window TextField Button Toggle Label]" || m["format"] != uitree.FormatNative ||
		m["platform"] != "linux" || m["adapter"] != ui.Adapter {
		t.Errorf("tree header = %v", m)
	}
	if err := uitree.Validate(res); err != nil {
		t.Errorf("the official gate refuses the tree: %v", err)
	}
	if fmt.Sprint(name) != fmt.Sprint(wantName) {
		t.Errorf("name node = %v\nwant %v", name, wantName)
	}
	if root["childCount"] != 6.0 {
		t.Errorf("root childCount = %v", root["childCount"])
	}

	res, _ = h.Call(ui.GetVisualTreeToolID, `{"includeBounds":false,"maxDepth":0}`)
	m = decode(t, res)
	root = m["root"].(map[string]any)
	if m["revision"] != 2.0 || m["truncated"] != true || m["nodeCount"] != 1.0 || root["children"] != nil || root["bounds"] != nil {
		t.Errorf("maxDepth 0 without bounds = %v", m)
	}

	res, _ = h.Call(ui.GetVisualTreeToolID, `{"rootNodeId":"switch"}`)
	root = decode(t, res)["root"].(map[string]any)
	if root["id"] != "switch" || root["checked"] != false {
		t.Errorf("subtree root = %v", root)
	}
	if err := h.Fail(ui.GetVisualTreeToolID, `{"rootNodeId":"nope"}`); err.Code != ui.CodeNodeNotFound {
		t.Errorf("unknown rootNodeId: %v", err)
	}

	s.captureErr = errors.New("window closed")
	if err := h.Fail(ui.GetVisualTreeToolID, `{}`); err.Code != ui.CodeCaptureFailed || !strings.Contains(err.Message, "window closed") {
		t.Errorf("capture failure: %v", err)
	}
	s.captureErr = &wire.Error{Code: "app_busy", Message: "try later", Retryable: true}
	if err := h.Fail(ui.GetVisualTreeToolID, `{}`); err.Code != "app_busy" {
		t.Errorf("a *wire.Error from Capture must pass through: %v", err)
	}
}

func TestQueryNodes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, &fakeScreen{})
	res, _ := h.Call(ui.QueryNodesToolID, `{"role":"BUTTON"}`)
	ids, refs := matchesOf(t, res)
	if strings.Join(ids, ",") != "ok,off,vanishing" {
		t.Errorf("buttons = %v", ids)
	}
	m := decode(t, res)
	if m["count"] != 3.0 || m["totalMatches"] != 3.0 || m["truncated"] != false {
		t.Errorf("query header = %v", m)
	}
	if !strings.HasPrefix(refs["ok"], `{"source":"native","snapshotId":"native:1:`) || !strings.HasSuffix(refs["ok"], `","revision":1,"nodeId":"ok"}`) {
		t.Errorf("reference = %s", refs["ok"])
	}

	res, _ = h.Call(ui.QueryNodesToolID, `{"maxResults":2,"enabled":true,"includeBounds":false}`)
	m = decode(t, res)
	if m["count"] != 2.0 || m["totalMatches"] != 6.0 || m["truncated"] != true || m["revision"] != 2.0 {
		t.Errorf("truncated query = %v", m)
	}

	// With a snapshotId no capture happens: the revision stays.
	snap := m["snapshotId"].(string)
	res, _ = h.Call(ui.QueryNodesToolID, fmt.Sprintf(`{"snapshotId":%q,"textContains":"dark"}`, snap))
	m = decode(t, res)
	if ids, _ := matchesOf(t, res); m["revision"] != 2.0 || len(ids) != 1 || ids[0] != "switch" {
		t.Errorf("query of a retained snapshot = %v", m)
	}
	res, _ = h.Call(ui.QueryNodesToolID, `{"automationId":"nameField"}`)
	if decode(t, res)["revision"] != 3.0 {
		t.Errorf("a query without snapshotId must capture")
	}
	err := h.Fail(ui.QueryNodesToolID, `{"snapshotId":"native:999:0123"}`)
	if err.Code != wire.CodeStaleNodeReference || !strings.Contains(string(err.Details), `"refreshWith":"ui.query_nodes"`) {
		t.Errorf("unknown snapshotId: %v %s", err, err.Details)
	}
}

func TestPerformAction(t *testing.T) {
	t.Parallel()
	s := &fakeScreen{}
	h := newHarness(t, s)
	res, _ := h.Call(ui.QueryNodesToolID, `{}`)
	_, refs := matchesOf(t, res)
	act := func(node, action, value string) string {
		args := fmt.Sprintf(`{"reference":%s,"action":%q`, refs[node], action)
		if value != "" {
			args += `,"value":` + value
		}
		return args + "}"
	}

	res, _ = h.Call(ui.PerformActionToolID, act("ok", "tap", ""))
	m := decode(t, res)
	if m["taps"] != 1.0 || m["action"] != "tap" || m["source"] != "native" || fmt.Sprint(m["reference"]) == "" {
		t.Errorf("tap result = %v", m)
	}
	var back struct {
		Reference jsontext.Value `json:"reference"`
	}
	_ = wire.Unmarshal(res, &back)
	if string(back.Reference) != refs["ok"] {
		t.Errorf("result reference %s, want %s", back.Reference, refs["ok"])
	}
	// Still the latest snapshot: the same reference stays usable.
	h.Call(ui.PerformActionToolID, act("name", "setValue", `"Grace"`))
	res, _ = h.Call(ui.PerformActionToolID, act("name", "typeText", `" Hopper"`))
	if s.name != "Grace Hopper" || decode(t, res)["text"] != "Grace Hopper" {
		t.Errorf("name = %q", s.name)
	}

	failures := []struct {
		name, args string
		code       wire.Code
	}{
		{"unsupported action", act("ok", "toggle", ""), wire.CodeUIActionNotSupported},
		{"screen refuses the action", act("name", "focus", ""), wire.CodeUIActionNotSupported},
		{"disabled node", act("off", "tap", ""), wire.CodeUIActionNotSupported},
		{"node without actions", act("hint", "tap", ""), wire.CodeUIActionNotSupported},
		{"invalid value", act("name", "setValue", "true"), ui.CodeActionValueInvalid},
		{"node gone from the screen", act("vanishing", "tap", ""), wire.CodeStaleNodeReference},
		{"node not in snapshot", strings.Replace(act("ok", "tap", ""), `"nodeId":"ok"`, `"nodeId":"ghost"`, 1), wire.CodeStaleNodeReference},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			if err := apptest.New(t, h.App()).Fail(ui.PerformActionToolID, f.args); err.Code != f.code {
				t.Errorf("%v, want %s", err, f.code)
			}
		})
	}
	err := h.Fail(ui.PerformActionToolID, act("off", "tap", ""))
	if d := decode(t, err.Details); d["enabled"] != false || d["nodeId"] != "off" || d["action"] != "tap" {
		t.Errorf("disabled details = %v", d)
	}

	// A new capture supersedes the snapshot: every old reference is stale now.
	h.Call(ui.GetVisualTreeToolID, `{}`)
	err = h.Fail(ui.PerformActionToolID, act("ok", "tap", ""))
	d := decode(t, err.Details)
	if err.Code != wire.CodeStaleNodeReference || d["latestRevision"] != 2.0 || d["nodeId"] != "ok" ||
		d["refreshWith"] != "ui.query_nodes" || d["reason"] != "snapshot_superseded" || d["source"] != "native" {
		t.Errorf("stale reference: %v %v", err, d)
	}
	if s.taps != 1 {
		t.Errorf("a stale reference reached the screen: %d taps", s.taps)
	}
}

func TestPerformActionEvidence(t *testing.T) {
	t.Parallel()
	h := newHarness(t, &fakeScreen{})
	res, _ := h.Call(ui.QueryNodesToolID, `{"nodeId":"switch"}`)
	_, refs := matchesOf(t, res)
	_, r := h.Call(ui.PerformActionToolID, fmt.Sprintf(`{"reference":%s,"action":"toggle"}`, refs["switch"]))
	_ = r
	r = h.Send(wire.TypeCall, fmt.Sprintf(`{"toolId":"ui.perform_action","arguments":{"reference":%s,"action":"toggle"},"after":{"include":["visualTree","screenshot"]}}`, refs["switch"]))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	tree, shot := r.Result.Evidence["visualTree"], r.Result.Evidence["screenshot"]
	if !tree.Success || !strings.Contains(string(tree.Result), `"id":"switch"`) || !strings.Contains(string(tree.Result), `"checked":false`) {
		t.Errorf("tree evidence = %+v %s", tree, tree.Result)
	}
	if !shot.Success || len(r.Artifacts) != 1 {
		t.Errorf("screenshot evidence = %+v, %d artifacts", shot, len(r.Artifacts))
	}
}

func TestWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := &fakeScreen{doneAfter: 3}
		h := newHarness(t, s)
		res, _ := h.Call(ui.WaitToolID, `{"condition":"exists","textContains":"done","pollMilliseconds":100}`)
		m := decode(t, res)
		q := m["query"].(map[string]any)
		// Captures at 0, 100 and 200 ms of (bubble) time; the third shows the label.
		if m["matched"] != true || m["condition"] != "exists" || m["elapsedMilliseconds"] != 200.0 || q["count"] != 1.0 || q["revision"] != 3.0 {
			t.Errorf("wait = %v", m)
		}
		// The returned references belong to the latest capture: they work right away.
		_, refs := matchesOf(t, mustValue(t, q))
		if !strings.Contains(refs["done"], `"revision":3`) {
			t.Errorf("references = %v", refs)
		}

		res, _ = h.Call(ui.WaitToolID, `{"condition":"notExists","nodeId":"ghost"}`)
		if m := decode(t, res); m["elapsedMilliseconds"] != 0.0 {
			t.Errorf("notExists = %v", m)
		}
		res, _ = h.Call(ui.WaitToolID, `{"condition":"visible","nodeId":"ok"}`)
		if m := decode(t, res); m["matched"] != true {
			t.Errorf("visible = %v", m)
		}

		tests := []struct{ name, args string }{
			{"hidden node never visible", `{"condition":"visible","nodeId":"hint","timeoutMilliseconds":250}`},
			{"disabled node never enabled", `{"condition":"enabled","nodeId":"off","timeoutMilliseconds":250}`},
			{"present node never absent", `{"condition":"notExists","nodeId":"ok","timeoutMilliseconds":250}`},
		}
		// (Rows stay in one loop: subtests cannot run inside a synctest bubble.)
		for _, tt := range tests {
			err := h.Fail(ui.WaitToolID, tt.args)
			d := decode(t, err.Details)
			// Captures at 0, 100, 200 and at the deadline, 250.
			if err.Code != wire.CodeUIWaitTimeout || d["matched"] != false || d["elapsedMilliseconds"] != 250.0 ||
				d["timeoutMilliseconds"] != 250.0 || d["lastQuery"] == nil {
				t.Errorf("%s: %v %v", tt.name, err, d)
			}
		}

		// Out-of-range timeouts and polls are clamped, not refused.
		start := time.Now()
		err := h.Fail(ui.WaitToolID, `{"condition":"exists","nodeId":"ghost","timeoutMilliseconds":999999,"pollMilliseconds":1}`)
		if d := decode(t, err.Details); d["timeoutMilliseconds"] != 60000.0 || time.Since(start) != time.Minute {
			t.Errorf("clamped timeout: %v after %v", d, time.Since(start))
		}
		before := s.captures
		h.Fail(ui.WaitToolID, `{"condition":"exists","nodeId":"ghost","timeoutMilliseconds":0,"pollMilliseconds":1}`)
		if s.captures-before != 2 { // at 0 and at the 1 ms deadline
			t.Errorf("timeout 0 made %d captures", s.captures-before)
		}
	})
}

func TestWaitCancelled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := app.New(app.Options{})
		if err := ui.Register(a, &fakeScreen{}, ui.Options{}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		r := apptest.New(t, a).SendContext(ctx, wire.TypeCall, `{"toolId":"ui.wait","arguments":{"condition":"exists","nodeId":"ghost","timeoutMilliseconds":60000}}`)
		if time.Since(start) != time.Second || r.Err == nil {
			t.Errorf("cancelled wait answered after %v with error %v", time.Since(start), r.Err)
		}
	})
}

func mustValue(t *testing.T, v any) jsontext.Value {
	t.Helper()
	b, err := wire.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGetScreenshot(t *testing.T) {
	t.Parallel()
	h := newHarness(t, &fakeScreen{})
	tests := []struct {
		args          string
		format, ext   string
		width, height int
	}{
		{`{}`, "png", "png", 40, 80},
		{`{"format":"png","maxWidth":20}`, "png", "png", 20, 40},
		{`{"format":"jpeg","quality":50}`, "jpeg", "jpg", 40, 80},
		{`{"format":"jpeg","maxWidth":400}`, "jpeg", "jpg", 40, 80}, // never scaled up
		// The official host's defaults: real JPEG, not a PNG under a jpeg label.
		{`{"format":"jpeg","quality":80,"maxWidth":1280,"afterScreenUpdates":false}`, "jpeg", "jpg", 40, 80},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			res, r := apptest.New(t, h.App()).Call(ui.GetScreenshotToolID, tt.args)
			m := decode(t, res)
			wantName := "screenshot-20250607-080910123." + tt.ext
			if m["format"] != tt.format || m["width"] != float64(tt.width) || m["height"] != float64(tt.height) ||
				m["fileName"] != wantName || m["mimeType"] != "image/"+tt.format || m["deliveryMode"] != "websocket_binary" ||
				m["wireProtocol"] != "ansight.file-transfer.v1" || m["capturedAtUtc"] != "2025-06-07T08:09:10.123456789Z" {
				t.Errorf("%s: result %v", tt.args, m)
			}
			data := r.Artifacts[m["transferId"].(string)]
			if float64(len(data)) != m["sizeBytes"] {
				t.Fatalf("%s: received %d bytes, announced %v", tt.args, len(data), m["sizeBytes"])
			}
			magic := map[string]string{"png": "\x89PNG\r\n\x1a\n", "jpeg": "\xff\xd8\xff"}[tt.format]
			if !bytes.HasPrefix(data, []byte(magic)) {
				t.Errorf("%s: the %s bytes start with % x", tt.args, tt.format, data[:min(8, len(data))])
			}
			var img image.Image
			var err error
			if tt.format == "png" {
				img, err = png.Decode(bytes.NewReader(data))
			} else {
				img, err = jpeg.Decode(bytes.NewReader(data))
			}
			if err != nil || img.Bounds().Dx() != tt.width || img.Bounds().Dy() != tt.height {
				t.Errorf("%s: decoded %v, %v", tt.args, img.Bounds(), err)
			}
		})
	}
}

// includeComputedStyles (the official host sends it, false by default) and its alias
// includeProperties publish the nodes' Properties; without them trees stay small.
func TestComputedStyles(t *testing.T) {
	t.Parallel()
	h := newHarness(t, &fakeScreen{})
	const props = `"properties":{"fontSize":"17","foreground":"#1C1C1E"}`
	for _, tt := range []struct {
		tool, args string
		want       bool
	}{
		{ui.GetVisualTreeToolID, `{}`, false},
		{ui.GetVisualTreeToolID, `{"maxDepth":32,"includeComputedStyles":false}`, false},
		{ui.GetVisualTreeToolID, `{"includeComputedStyles":true}`, true},
		{ui.GetVisualTreeToolID, `{"includeProperties":true}`, true},
		{ui.QueryNodesToolID, `{"nodeId":"name"}`, false},
		{ui.QueryNodesToolID, `{"nodeId":"name","includeComputedStyles":true}`, true},
		{ui.WaitToolID, `{"condition":"exists","nodeId":"name","includeProperties":true}`, true},
	} {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			res, _ := apptest.New(t, h.App()).Call(tt.tool, tt.args)
			if got := strings.Contains(string(res), props); got != tt.want {
				t.Errorf("properties present %v, want %v\n%s", got, tt.want, res)
			}
		})
	}
}

// rootNodeId, maxDepth and maxNodes limit what ui.query_nodes and ui.wait search, as the
// capture options of the official SDKs do.
func TestQueryScope(t *testing.T) {
	t.Parallel()
	s := &fakeScreen{doneAfter: 1}
	h := newHarness(t, s)
	tests := []struct{ args, want string }{
		{`{}`, "root,name,ok,switch,off,hint,vanishing,done"},
		{`{"maxDepth":0}`, "root"},
		{`{"maxNodes":3}`, "root,name,ok"},
		{`{"rootNodeId":"switch"}`, "switch"},
		{`{"role":"button","maxNodes":4}`, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			res, _ := apptest.New(t, h.App()).Call(ui.QueryNodesToolID, tt.args)
			if ids, _ := matchesOf(t, res); strings.Join(ids, ",") != tt.want {
				t.Errorf("query %s = %v, want %s", tt.args, ids, tt.want)
			}
		})
	}
	if err := h.Fail(ui.QueryNodesToolID, `{"rootNodeId":"nope"}`); err.Code != ui.CodeNodeNotFound {
		t.Errorf("unknown rootNodeId: %v", err)
	}
	// A wait whose scope leaves the node out never sees it.
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, &fakeScreen{doneAfter: 1})
		if err := h.Fail(ui.WaitToolID, `{"condition":"exists","nodeId":"done","maxDepth":0,"timeoutMilliseconds":100}`); err.Code != wire.CodeUIWaitTimeout {
			t.Errorf("scoped wait: %v", err)
		}
		if err := h.Fail(ui.WaitToolID, `{"condition":"exists","rootNodeId":"nope"}`); err.Code != ui.CodeNodeNotFound {
			t.Errorf("wait with an unknown rootNodeId: %v", err)
		}
	})
}

// ui.perform_action takes its target as the official SDKs allow: a reference, or a bare
// snapshotId and nodeId; and its value as value, else index, else checked.
func TestPerformActionOfficialForms(t *testing.T) {
	t.Parallel()
	s := &fakeScreen{}
	h := newHarness(t, s)
	res, _ := h.Call(ui.QueryNodesToolID, `{}`)
	snap := decode(t, res)["snapshotId"].(string)

	res, _ = h.Call(ui.PerformActionToolID, fmt.Sprintf(`{"snapshotId":%q,"nodeId":"ok","action":"tap"}`, snap))
	var out struct {
		Reference ui.Reference `json:"reference"`
		Taps      int          `json:"taps"`
	}
	if err := wire.Unmarshal(res, &out); err != nil || out.Taps != 1 ||
		out.Reference != (ui.Reference{Source: "native", SnapshotID: snap, Revision: 1, NodeID: "ok"}) {
		t.Errorf("bare snapshotId/nodeId = %s (%v)", res, err)
	}

	res, _ = h.Call(ui.PerformActionToolID, fmt.Sprintf(`{"source":"native","snapshotId":%q,"nodeId":"switch","action":"setValue","value":null,"index":null,"checked":true,"options":{"animated":false}}`, snap))
	if !s.on || decode(t, res)["checked"] != true || fmt.Sprint(s.lastAction.Options) != "map[animated:false]" {
		t.Errorf("checked as the value: on=%v %s, options %v", s.on, res, s.lastAction.Options)
	}
	h.Call(ui.PerformActionToolID, fmt.Sprintf(`{"snapshotId":%q,"nodeId":"name","action":"setValue","value":"Ada","index":3}`, snap))
	if s.lastAction.Value != "Ada" || s.name != "Ada" {
		t.Errorf("value before index: %+v", s.lastAction)
	}

	// A bare snapshotId is checked like a reference: superseded, it is stale.
	h.Call(ui.GetVisualTreeToolID, `{}`)
	err := h.Fail(ui.PerformActionToolID, fmt.Sprintf(`{"snapshotId":%q,"nodeId":"ok","action":"tap"}`, snap))
	if d := decode(t, err.Details); err.Code != wire.CodeStaleNodeReference || d["reason"] != "snapshot_superseded" {
		t.Errorf("superseded bare snapshotId: %v %v", err, d)
	}
	err = h.Fail(ui.PerformActionToolID, `{"snapshotId":"native:77:0123","nodeId":"ok","action":"tap"}`)
	if d := decode(t, err.Details); err.Code != wire.CodeStaleNodeReference || d["reason"] != "snapshot_unknown" || d["source"] != "native" {
		t.Errorf("unknown bare snapshotId: %v %v", err, d)
	}
	if s.taps != 1 {
		t.Errorf("a stale target reached the screen: %d taps", s.taps)
	}
}

// lazyScreen draws its state only when its UI thread gets round to it: Render shows the
// last drawn color until AwaitUpdates has run.
type lazyScreen struct {
	fakeScreen
	state, drawn color.RGBA
	awaited      int
}

func (s *lazyScreen) AwaitUpdates(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drawn = s.state
	s.awaited++
	return ctx.Err()
}

func (s *lazyScreen) Render(ctx context.Context) (image.Image, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	draw.Draw(img, img.Bounds(), image.NewUniform(s.drawn), image.Point{}, draw.Src)
	return img, nil
}

func TestAfterScreenUpdates(t *testing.T) {
	t.Parallel()
	s := &lazyScreen{drawn: color.RGBA{255, 0, 0, 255}, state: color.RGBA{0, 0, 255, 255}}
	a := app.New(app.Options{})
	if err := ui.Register(a, s, ui.Options{}); err != nil {
		t.Fatal(err)
	}
	h := apptest.New(t, a)
	pixel := func(args string) color.RGBA {
		res, r := h.Call(ui.GetScreenshotToolID, args)
		img, err := png.Decode(bytes.NewReader(r.Artifacts[decode(t, res)["transferId"].(string)]))
		if err != nil {
			t.Fatal(err)
		}
		return color.RGBAModel.Convert(img.At(0, 0)).(color.RGBA)
	}
	if got := pixel(`{"afterScreenUpdates":false}`); got != s.drawn || s.awaited != 0 {
		t.Errorf("without afterScreenUpdates: %v after %d waits", got, s.awaited)
	}
	if got := pixel(`{"afterScreenUpdates":true}`); got != s.state || s.awaited != 1 {
		t.Errorf("with afterScreenUpdates: %v after %d waits, want the pending %v", got, s.awaited, s.state)
	}
}
