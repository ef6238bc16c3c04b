package uiauto_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/uiauto"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// form is a test screen: fields, a button enabled once the name is set, a help button
// that appears at revealAt, a scrolling list, a map that pinches, a back button, a label
// inside a tappable box, a button outside the viewport, and one whose first action finds
// it gone (the screen changed between capture and action).
type form struct {
	mu       sync.Mutex
	name     string
	note     string
	pin      string
	revealAt time.Time
	scrolled int
	flaky    bool // the next action on "flaky" finds it gone
	log      []string
}

func (f *form) Capture(context.Context) (*ui.Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := func(x, y, w, h float64) *ui.Bounds { return &ui.Bounds{X: x, Y: y, Width: w, Height: h} }
	rows := []*ui.Node{}
	for i := range 3 {
		rows = append(rows, &ui.Node{ID: fmt.Sprintf("row%d", i+f.scrolled), Type: "Label", Role: "text",
			Text: fmt.Sprintf("Row %d", i+f.scrolled), Bounds: b(0, 100+float64(i)*10, 100, 10)})
	}
	return &ui.Node{ID: "root", Type: "Window", Role: "window", Bounds: b(0, 0, 100, 200), Children: []*ui.Node{
		{ID: "title", Type: "Label", Role: "header", Text: "Settings", Bounds: b(0, 0, 100, 10)},
		{ID: "back", Type: "Button", Role: "button", AutomationID: "backButton", Label: "Back", NavigatesBack: true,
			Actions: []string{ui.ActionTap}, Bounds: b(0, 0, 20, 10)},
		{ID: "name", Type: "TextField", Role: "textbox", AutomationID: "nameField", Label: "Name", Text: f.name,
			Actions: []string{ui.ActionFocus, ui.ActionSetValue, ui.ActionTypeText}, Bounds: b(0, 20, 100, 10)},
		{ID: "note", Type: "TextField", Role: "textbox", AutomationID: "noteField", Label: "Note", Text: f.note,
			Actions: []string{ui.ActionTypeText}, Bounds: b(0, 30, 100, 10)},
		{ID: "pin", Type: "SecureField", Role: "textbox", AutomationID: "pinField", Label: "PIN", Text: f.pin, Secure: true,
			Actions: []string{ui.ActionSetValue}, Bounds: b(0, 40, 100, 10)},
		{ID: "save", Type: "Button", Role: "button", AutomationID: "saveButton", Text: "Save", Disabled: f.name == "",
			Actions: []string{ui.ActionTap}, Bounds: b(0, 50, 50, 10)},
		{ID: "help", Type: "Button", Role: "button", AutomationID: "helpButton", Text: "Help", Hidden: time.Now().Before(f.revealAt),
			Actions: []string{ui.ActionTap}, Bounds: b(50, 50, 50, 10)},
		{ID: "box", Type: "View", Role: "view", AutomationID: "box", Actions: []string{ui.ActionTap}, Bounds: b(0, 60, 100, 10),
			Children: []*ui.Node{{ID: "inner", Type: "Label", Role: "text", Text: "Open", Bounds: b(0, 60, 50, 10)}}},
		{ID: "flaky", Type: "Button", Role: "button", Text: "Flaky", Actions: []string{ui.ActionTap}, Bounds: b(0, 70, 100, 10)},
		{ID: "list", Type: "List", Role: "list", AutomationID: "list", Actions: []string{"scroll"}, Bounds: b(0, 100, 100, 30), Children: rows},
		{ID: "map", Type: "Map", Role: "view", AutomationID: "map", Actions: []string{"pinch"}, Bounds: b(0, 130, 100, 60)},
		{ID: "far", Type: "Button", Role: "button", Text: "Far away", Actions: []string{ui.ActionTap}, Bounds: b(0, 500, 100, 10)},
	}}, nil
}

func (f *form) Perform(_ context.Context, id string, act ui.Action) (map[string]any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	entry := id + "/" + act.Name
	if act.Value != nil {
		entry += fmt.Sprintf("=%v", act.Value)
	}
	if act.Options != nil {
		entry += fmt.Sprintf(" %v", act.Options)
	}
	f.log = append(f.log, entry)
	switch {
	case id == "flaky" && f.flaky:
		f.flaky = false
		return nil, ui.ErrNodeNotFound
	case id == "name" && act.Name == ui.ActionSetValue:
		f.name = act.Value.(string)
	case id == "name" && act.Name == ui.ActionTypeText, id == "note" && act.Name == ui.ActionTypeText:
		if id == "name" {
			f.name += act.Value.(string)
		} else {
			f.note += act.Value.(string)
		}
	case id == "pin":
		f.pin = act.Value.(string)
	case id == "list" && act.Value == "up":
		f.scrolled++
	}
	return map[string]any{"done": true}, nil
}

func (f *form) Render(context.Context) (image.Image, error) {
	return image.NewRGBA(image.Rect(0, 0, 10, 20)), nil
}

func (f *form) actions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// caller calls the app's tools in process, as a host would over a session.
func caller(t testing.TB, f *form) uiauto.CallFunc {
	a := app.New(app.Options{})
	if err := ui.Register(a, f, ui.Options{}); err != nil {
		t.Fatal(err)
	}
	h := apptest.New(t, a)
	var mu sync.Mutex
	return func(ctx context.Context, toolID string, args jsontext.Value) (jsontext.Value, error) {
		mu.Lock()
		defer mu.Unlock()
		r := h.SendContext(ctx, wire.TypeCall, fmt.Sprintf(`{"toolId":%q,"arguments":%s}`, toolID, args))
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Result.Result, nil
	}
}

func ptr[T any](v T) *T { return &v }

func run(t *testing.T, call uiauto.CallFunc, req uiauto.Request) *uiauto.Outcome {
	t.Helper()
	out, err := uiauto.Run(context.Background(), call, req)
	if err != nil {
		t.Fatalf("Run(%+v): %v", req, err)
	}
	return out
}

// TestActions: each verb reaches the app's ui.perform_action with the capture's
// reference and the action the node takes.
func TestActions(t *testing.T) {
	t.Parallel()
	f := &form{note: "a"}
	call := caller(t, f)
	for _, tt := range []struct {
		name string
		req  uiauto.Request
		want string // the action the screen saw
	}{
		{"tap by automation id", uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{AutomationID: "backButton"}}, "back/tap"},
		{"tap a label reaches its tappable box", uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{Text: "open"}}, "box/tap"},
		{"type replaces with setValue", uiauto.Request{Operation: uiauto.OpType, Selector: uitree.Selector{AutomationID: "nameField"}, Value: ptr("Ada")}, "name/setValue=Ada"},
		{"type appends with typeText", uiauto.Request{Operation: uiauto.OpType, Selector: uitree.Selector{Role: "textbox", Text: "Name"}, Value: ptr(" L"), Append: true}, "name/typeText= L"},
		{"append to a typeText field", uiauto.Request{Operation: uiauto.OpType, Selector: uitree.Selector{AutomationID: "noteField"}, Value: ptr("b"), Append: true}, "note/typeText=b"},
		{"secure field", uiauto.Request{Operation: uiauto.OpType, Selector: uitree.Selector{AutomationID: "pinField"}, Value: ptr("1234")}, "pin/setValue=1234"},
		{"swipe the first scrollable", uiauto.Request{Operation: uiauto.OpSwipe}, "list/scroll=up map[direction:up durationMs:250 length:0.4]"},
		{"swipe by coordinates hit-tests", uiauto.Request{Operation: uiauto.OpSwipe, StartX: ptr(0.5), StartY: ptr(0.6), EndX: ptr(0.5), EndY: ptr(0.55)}, "list/scroll=up map[direction:up durationMs:250 endX:0.5 endY:0.55 length:0.4 startX:0.5 startY:0.6]"},
		{"swipe a row scrolls its list", uiauto.Request{Operation: uiauto.OpSwipe, Selector: uitree.Selector{Text: "Row 2"}, Orientation: "W-to-E"}, "list/scroll=right map[direction:right durationMs:250 length:0.4 orientation:W-to-E]"},
		{"pinch", uiauto.Request{Operation: uiauto.OpPinch, Scale: 1.5}, "map/pinch=1.5 map[angleDegrees:0 durationMs:300 scale:1.5 startDistance:0.25]"},
		{"back taps the back button", uiauto.Request{Operation: uiauto.OpBack}, "back/tap"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.actions())
			out := run(t, call, tt.req)
			got := f.actions()[before:]
			if !out.Succeeded || len(got) != 1 || got[0] != tt.want {
				t.Fatalf("outcome %+v, actions %q; want %q", out, got, tt.want)
			}
			res := out.Result
			if res.Reference == nil || res.Reference.SnapshotID != res.SnapshotID || res.Target == nil || res.Attempts != 1 {
				t.Errorf("result %+v", res)
			}
		})
	}
	if f.pin != "1234" || f.name != "Ada L" || f.note != "ab" {
		t.Errorf("screen state: %+v", f)
	}
}

// TestActionRefusals: what the app's tree cannot express, and selectors that match
// nothing, say so, with the nearest candidates; no action reaches the screen.
func TestActionRefusals(t *testing.T) {
	t.Parallel()
	call := caller(t, &form{name: "x", note: "a", revealAt: time.Now().Add(time.Hour)})
	zero := ptr(0)
	for _, tt := range []struct {
		name string
		req  uiauto.Request
		code wire.Code
		msg  string
	}{
		{"no match", uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{Text: "Sve"}, TimeoutMs: zero}, uiauto.CodeNotFound, `nearest: button "Save" (id save) differs in text`},
		{"no match by automation id", uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{AutomationID: "saveButon"}, TimeoutMs: zero}, uiauto.CodeNotFound, `nearest: button "Save" (id save) differs in automationId ("saveButton")`},
		{"index out of range", uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{Role: "button", Index: ptr(9)}, TimeoutMs: zero}, uiauto.CodeNotFound, "but index 9 was requested"},
		{"hidden target", uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{AutomationID: "helpButton"}, TimeoutMs: zero}, uiauto.CodeNotActionable, "is not visible"},
		{"offscreen target", uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{Text: "Far away"}, TimeoutMs: zero}, uiauto.CodeNotActionable, "outside the viewport"},
		{"no text to type into", uiauto.Request{Operation: uiauto.OpType, Selector: uitree.Selector{Text: "Save"}, Value: ptr("x"), TimeoutMs: zero}, wire.CodeUIActionNotSupported, "takes no text"},
		{"typeText cannot replace", uiauto.Request{Operation: uiauto.OpType, Selector: uitree.Selector{AutomationID: "noteField"}, Value: ptr("x"), TimeoutMs: zero}, wire.CodeUIActionNotSupported, "use --append"},
		{"nothing to swipe at a point", uiauto.Request{Operation: uiauto.OpSwipe, StartX: ptr(0.5), StartY: ptr(0.01), EndX: ptr(0.5), EndY: ptr(0.2), TimeoutMs: zero}, wire.CodeUIActionNotSupported, "no node that supports scroll or swipe at"},
		{"no pinch on a button", uiauto.Request{Operation: uiauto.OpPinch, Scale: 2, Selector: uitree.Selector{Text: "Save"}, TimeoutMs: zero}, wire.CodeUIActionNotSupported, "supports pinch"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := run(t, call, tt.req)
			if out.Succeeded || out.Code != tt.code || !strings.Contains(out.Message, tt.msg) {
				t.Fatalf("%s: %q, want %s containing %q", out.Code, out.Message, tt.code, tt.msg)
			}
		})
	}
	// A screen without a back button or a scrollable node cannot express back or swipe.
	bare := func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
		return jsontext.Value(`{"format":"ansight.native.visual-tree.compact.v2","snapshotId":"native:1:a","revision":1,"source":"native",` +
			`"types":["Window"],"root":{"id":"r","typeId":0,"role":"window"}}`), nil
	}
	for op, want := range map[string]string{uiauto.OpBack: "no node marked navigatesBack", uiauto.OpSwipe: "no node that supports scroll or swipe", uiauto.OpPinch: "no node that supports pinch"} {
		out := run(t, bare, uiauto.Request{Operation: op, Scale: 1, TimeoutMs: zero})
		if out.Code != wire.CodeUIActionNotSupported || !strings.Contains(out.Message, want) {
			t.Errorf("%s: %s %q", op, out.Code, out.Message)
		}
	}
	if _, err := uiauto.Run(context.Background(), bare, uiauto.Request{Operation: "poke"}); wire.CodeOf(err) != wire.CodeBadRequest {
		t.Errorf("unknown operation: %v", err)
	}
}

// TestAutoWait: an action waits for its target to become actionable — a hidden button
// that appears after a second, a button enabled by another action — and resolves a stale
// reference once.
func TestAutoWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := &form{revealAt: time.Now().Add(time.Second), flaky: true}
		call := caller(t, f)
		start := time.Now()
		out := run(t, call, uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{AutomationID: "helpButton"}})
		if !out.Succeeded || time.Since(start) != time.Second || out.Result.WaitedMs != 1000 || out.Result.Attempts != 11 {
			t.Fatalf("tap of a button appearing after 1 s: %+v after %v", out, time.Since(start))
		}
		// The default budget is 5 s; a shorter one gives up with what blocks the target.
		start = time.Now()
		out = run(t, call, uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{AutomationID: "saveButton"}, TimeoutMs: ptr(300)})
		if out.Succeeded || out.Code != uiauto.CodeNotActionable || !strings.Contains(out.Message, "is disabled") || time.Since(start) != 300*time.Millisecond {
			t.Fatalf("disabled save: %+v after %v", out, time.Since(start))
		}
		// The stale reference: the screen answers "gone" once, the target is resolved again.
		out = run(t, call, uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{Text: "Flaky"}})
		if acts := f.actions(); !out.Succeeded || !out.Result.Reresolved || len(acts) < 2 || acts[len(acts)-1] != "flaky/tap" || acts[len(acts)-2] != "flaky/tap" {
			t.Fatalf("stale reference: %+v %v", out, acts)
		}
	})
}

// TestFindWaitAssert: find is a substring search by default; wait's three conditions;
// assert's expectations and their failures.
func TestFindWaitAssert(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := &form{name: "Ada", revealAt: time.Now().Add(time.Second)}
		call := caller(t, f)
		out := run(t, call, uiauto.Request{Operation: uiauto.OpFind, Selector: uitree.Selector{Text: "row"}})
		if !out.Succeeded || *out.Result.MatchCount != 3 || out.Result.Matches[0].ID != "row0" || out.Result.Capability != uiauto.CapabilityFind {
			t.Fatalf("find: %+v", out.Result)
		}
		if out := run(t, call, uiauto.Request{Operation: uiauto.OpFind, Selector: uitree.Selector{Text: "row"}, Exact: true}); out.Succeeded {
			t.Errorf("exact find matched %+v", out.Result.Matches)
		}
		out = run(t, call, uiauto.Request{Operation: uiauto.OpFind, Selector: uitree.Selector{Text: "Sav", Role: "link"}})
		if out.Succeeded || len(out.Result.Nearest) == 0 || out.Result.Nearest[0].Node.ID != "save" {
			t.Fatalf("find nothing: %+v", out)
		}
		// With an index: past the matches it says how many there were; with none, it says
		// so and names the nearest (not "matched 0 node(s), but index 1 was requested").
		out = run(t, call, uiauto.Request{Operation: uiauto.OpFind, Selector: uitree.Selector{Text: "row", Index: ptr(5)}})
		if out.Succeeded || !strings.Contains(out.Message, "matched 3 node(s), but index 5 was requested") {
			t.Fatalf("find past the matches: %+v", out)
		}
		out = run(t, call, uiauto.Request{Operation: uiauto.OpFind, Selector: uitree.Selector{Text: "Sav", Role: "link", Index: ptr(1)}})
		if out.Succeeded || !strings.HasPrefix(out.Message, "no node matches") || len(out.Result.Nearest) == 0 {
			t.Fatalf("find nothing with an index: %+v", out)
		}

		start := time.Now()
		out = run(t, call, uiauto.Request{Operation: uiauto.OpWait, Selector: uitree.Selector{AutomationID: "helpButton"}})
		if !out.Succeeded || time.Since(start) != time.Second || *out.Result.Satisfied != true {
			t.Fatalf("wait visible: %+v after %v", out.Result, time.Since(start))
		}
		// As the official result, every condition names the tree's hash and how many captures
		// in a row it held (the help button appeared in the last one).
		if out.Result.TreeHash == "" || out.Result.StableSamples != 1 || out.Result.Attempts < 2 {
			t.Fatalf("wait visible's tree hash: %+v", out.Result)
		}
		out = run(t, call, uiauto.Request{Operation: uiauto.OpWait, Condition: uiauto.ConditionHidden, Selector: uitree.Selector{Text: "Nothing like it"}})
		if !out.Succeeded || out.Result.Attempts != 1 {
			t.Fatalf("wait hidden of an absent node: %+v", out.Result)
		}
		out = run(t, call, uiauto.Request{Operation: uiauto.OpWait, Condition: uiauto.ConditionStable, PollMs: 100})
		if !out.Succeeded || out.Result.StableSamples != 3 || out.Result.Attempts != 3 || out.Result.TreeHash == "" {
			t.Fatalf("wait stable: %+v", out.Result)
		}
		start = time.Now()
		out = run(t, call, uiauto.Request{Operation: uiauto.OpWait, Selector: uitree.Selector{Text: "Never"}, TimeoutMs: ptr(500), PollMs: 100})
		if out.Succeeded || out.Code != uiauto.CodeWaitTimeout || time.Since(start) != 500*time.Millisecond || *out.Result.Satisfied {
			t.Fatalf("wait timeout: %+v after %v", out, time.Since(start))
		}

		for _, tt := range []struct {
			name   string
			req    uiauto.Request
			passed bool
			msg    string
		}{
			{"exists", uiauto.Request{Selector: uitree.Selector{AutomationID: "nameField"}}, true, ""},
			{"text and value", uiauto.Request{Selector: uitree.Selector{AutomationID: "nameField"}, ExpectedText: ptr("Name"), ExpectedValue: ptr("Ada"), ExpectedEnabled: ptr(true)}, true, ""},
			{"text is case-sensitive", uiauto.Request{Selector: uitree.Selector{AutomationID: "nameField"}, ExpectedText: ptr("name")}, false, `expected text "name", found "Name"`},
			{"count", uiauto.Request{Selector: uitree.Selector{Role: "textbox"}, Count: ptr(3)}, true, ""},
			{"count wrong", uiauto.Request{Selector: uitree.Selector{Role: "textbox"}, Count: ptr(2)}, false, "expected 2 matches, found 3"},
			{"absent", uiauto.Request{Selector: uitree.Selector{Text: "Ghost"}, Count: ptr(0)}, true, ""},
			{"absent fails", uiauto.Request{Selector: uitree.Selector{Text: "Save"}, Exists: ptr(false)}, false, "expected no node"},
			{"missing", uiauto.Request{Selector: uitree.Selector{Text: "Sve"}}, false, "nearest: button"},
			{"secure value is never read", uiauto.Request{Selector: uitree.Selector{AutomationID: "pinField"}, ExpectedValue: ptr("")}, true, ""},
		} {
			tt.req.Operation = uiauto.OpAssert
			out := run(t, call, tt.req)
			if out.Succeeded != tt.passed || *out.Result.Passed != tt.passed || !strings.Contains(out.Message, tt.msg) {
				t.Errorf("%s: %+v", tt.name, out)
			}
		}
	})
}

// TestSnapshot: the compact projection (no overlay surfaces, counts) and the full payload.
func TestSnapshot(t *testing.T) {
	t.Parallel()
	call := caller(t, &form{})
	out := run(t, call, uiauto.Request{Operation: uiauto.OpSnapshot})
	res := out.Result
	if !out.Succeeded || res.Capability != uiauto.CapabilityObserve || res.Root == nil || res.Root.ID != "root" ||
		res.NodeCount != 17 || res.ReturnedNodeCount != 17 || res.Viewport == nil || res.Viewport.Height != 200 || res.Format != uitree.FormatNative {
		t.Fatalf("snapshot: %+v", res)
	}
	out = run(t, call, uiauto.Request{Operation: uiauto.OpSnapshot, Detail: uiauto.DetailFull, MaxNodes: 3})
	if err := uitree.Validate(out.Result.Tree); err != nil || out.Result.NodeCount != 3 || !out.Result.Truncated {
		t.Fatalf("full snapshot: %v %+v", err, out.Result)
	}
}

// TestHostFailures: the host's failures end the operation as errors; the app's tool
// failures are outcomes.
func TestHostFailures(t *testing.T) {
	t.Parallel()
	gone := errors.New("session closed")
	call := func(context.Context, string, jsontext.Value) (jsontext.Value, error) { return nil, gone }
	if _, err := uiauto.Run(context.Background(), call, uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{Text: "x"}}); !errors.Is(err, gone) {
		t.Errorf("host failure: %v", err)
	}
	refuse := func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
		return nil, &wire.Error{Code: wire.CodeNotFound, Message: "no such tool"}
	}
	out, err := uiauto.Run(context.Background(), refuse, uiauto.Request{Operation: uiauto.OpSnapshot})
	if err != nil || out.Succeeded || out.Code != wire.CodeNotFound {
		t.Errorf("tool failure: %+v %v", out, err)
	}
	junk := func(context.Context, string, jsontext.Value) (jsontext.Value, error) {
		return jsontext.Value(`{"nodes":[]}`), nil
	}
	if out, _ := uiauto.Run(context.Background(), junk, uiauto.Request{Operation: uiauto.OpFind, Selector: uitree.Selector{Text: "x"}}); out.Code != uiauto.CodeTreeInvalid {
		t.Errorf("not a tree: %+v", out)
	}
}

// TestAct: any action of ui.perform_action on a node named by id, with its value and
// options; a node that does not take it fails without an ancestor standing in.
func TestAct(t *testing.T) {
	t.Parallel()
	f := &form{}
	call := caller(t, f)
	out := run(t, call, uiauto.Request{Operation: uiauto.OpAct, Selector: uitree.Selector{NodeID: "name"}, Action: "setValue",
		ActionValue: jsontext.Value(`"Grace"`), ActionOptions: jsontext.Value(`{"select":true}`)})
	if !out.Succeeded || f.name != "Grace" || f.actions()[0] != "name/setValue=Grace map[select:true]" {
		t.Fatalf("act: %+v %v", out, f.actions())
	}
	zero := 0
	out = run(t, call, uiauto.Request{Operation: uiauto.OpAct, Selector: uitree.Selector{NodeID: "inner"}, Action: "tap", TimeoutMs: &zero})
	if out.Succeeded || out.Code != wire.CodeUIActionNotSupported || len(f.actions()) != 1 {
		t.Fatalf("act on a label: %+v", out)
	}
	// A node id that now names another element (an MCP ref read from an earlier capture,
	// ids that are tree paths) fails at once: waiting would not bring the element back.
	out = run(t, call, uiauto.Request{Operation: uiauto.OpAct, Selector: uitree.Selector{NodeID: "name", AutomationID: "saveButton", Role: "button"}, Action: "tap"})
	if out.Succeeded || out.Code != uiauto.CodeNotFound || out.Result.Attempts != 1 || !strings.Contains(out.Message, "the screen changed") || len(f.actions()) != 1 {
		t.Fatalf("act on an id that names another node now: %+v", out)
	}
}

// TestTreesOfEveryProducer: the official SDKs' compact v2 trees (Android views, UIKit,
// MAUI, React) and the legacy per-node form older SDKs send read alike through an
// operation — the snapshot's root and the found node keep their type (a typeId's name, or
// the legacy node's own type) — so the CLI, the player and the bridge, which show these
// results, never see which form arrived.
func TestTreesOfEveryProducer(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		fixture            string
		rootType           string
		sel                uitree.Selector
		wantID, wantType   string
		wantFormatOfResult string
	}{
		{"android-views.json", "com.android.internal.policy.DecorView", uitree.Selector{AutomationID: "save"}, "0.0.3.0", "android.widget.Button", uitree.FormatNative},
		{"ios-uikit.json", "UIWindow", uitree.Selector{Text: "Sign in", Role: "button"}, "105553116430336", "UIButton", uitree.FormatNative},
		// the active page's button before the one on a page behind it
		{"maui-flags.json", "Window", uitree.Selector{AutomationID: "SaveButton"}, "accounts-save", "Button", "ansight.maui.visual-tree.compact.v2"},
		{"react-props.json", "View", uitree.Selector{AutomationID: "login-button"}, "r2", "Pressable", "ansight.react.component-tree.compact.v2"},
		{"legacy-go.json", "Screen", uitree.Selector{AutomationID: "darkModeToggle"}, "list.darkMode", "Toggle", ""},
	} {
		t.Run(tt.fixture, func(t *testing.T) {
			t.Parallel()
			tree, err := os.ReadFile(filepath.Join("..", "wire", "uitree", "testdata", "official", tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			call := func(context.Context, string, jsontext.Value) (jsontext.Value, error) { return tree, nil }
			out := run(t, call, uiauto.Request{Operation: uiauto.OpSnapshot})
			if !out.Succeeded || out.Result.Root == nil || out.Result.Root.Type != tt.rootType || out.Result.Format != tt.wantFormatOfResult {
				t.Fatalf("snapshot: %+v", out)
			}
			out = run(t, call, uiauto.Request{Operation: uiauto.OpFind, Selector: tt.sel, Exact: true})
			if !out.Succeeded || len(out.Result.Matches) == 0 {
				t.Fatalf("find %s: %+v", tt.sel.String(), out)
			}
			if m := out.Result.Matches[0]; m.ID != tt.wantID || m.Type != tt.wantType {
				t.Errorf("find %s: %s (%s), want %s (%s)", tt.sel.String(), m.ID, m.Type, tt.wantID, tt.wantType)
			}
		})
	}
}
