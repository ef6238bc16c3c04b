package flow

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/uiauto"
	"github.com/ansight-go/ansight/wire"
)

// fakeApp is a notes app behind the Target interface, for the runner's tests: notes.create,
// get, list and delete_all (critical: refused as a session granted write would refuse
// it), a tool that fails until its third call, and one that never returns until the test
// releases it. Its screen shows the notes' titles and bodies as text nodes.
type fakeApp struct {
	mu      sync.Mutex
	notes   []fakeNote
	log     []string
	flaky   int
	release chan struct{}
}

type fakeNote struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Body  string `json:"body"`
}

func newFakeApp() *fakeApp { return &fakeApp{release: make(chan struct{})} }

func (f *fakeApp) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, s)
}

func (f *fakeApp) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

func ok(tool string, v any) *hostapi.Call {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return &hostapi.Call{Schema: hostapi.SchemaCall, ToolID: tool, Success: true, Result: &wire.Result{ToolID: tool, Success: true, Result: raw}}
}

func refused(tool string, code wire.Code, msg string) *hostapi.Call {
	return &hostapi.Call{Schema: hostapi.SchemaCall, ToolID: tool, Error: &hostapi.ToolError{Error: wire.Error{Code: code, Message: msg}, Kind: code.Kind()}}
}

func (f *fakeApp) Call(ctx context.Context, req hostapi.CallRequest) (*hostapi.Call, error) {
	f.record(req.ToolID + " " + string(req.Arguments))
	var args map[string]any
	if len(req.Arguments) > 0 {
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, err
		}
	}
	str := func(k string) string { s, _ := args[k].(string); return s }
	f.mu.Lock()
	defer f.mu.Unlock()
	switch req.ToolID {
	case "notes.create":
		n := fakeNote{ID: fmt.Sprintf("n%d", len(f.notes)+1), Title: str("title"), Body: str("body")}
		f.notes = append(f.notes, n)
		return ok(req.ToolID, n), nil
	case "notes.get":
		for _, n := range f.notes {
			if n.ID == str("id") {
				return ok(req.ToolID, n), nil
			}
		}
		return refused(req.ToolID, wire.CodeExecutionFailed, "no note "+str("id")), nil
	case "notes.list":
		return ok(req.ToolID, struct {
			Notes []fakeNote `json:"notes"`
			Count int        `json:"count"`
		}{append([]fakeNote{}, f.notes...), len(f.notes)}), nil
	case "notes.delete_all":
		return refused(req.ToolID, wire.CodePolicyNotGranted, "notes.delete_all is critical; the session is granted write"), nil
	case "flaky":
		f.flaky++
		if f.flaky < 3 {
			return refused(req.ToolID, wire.CodeExecutionFailed, fmt.Sprintf("failure %d", f.flaky)), nil
		}
		return ok(req.ToolID, map[string]int{"attempt": f.flaky}), nil
	case "hang":
		f.mu.Unlock()
		<-f.release // ignores ctx: a target that never answers
		f.mu.Lock()
		return ok(req.ToolID, nil), nil
	case "gone":
		return nil, &hostapi.APIError{Status: 404, Code: wire.CodeSessionNotFound, Message: "no session \"s1\""}
	}
	return refused(req.ToolID, wire.CodeNotFound, "no tool "+req.ToolID), nil
}

func (f *fakeApp) Batch(ctx context.Context, req hostapi.BatchRequest) (*hostapi.Batch, error) {
	res := &wire.BatchResult{Success: true, Requested: len(req.Calls)}
	for i, c := range req.Calls {
		call, err := f.Call(ctx, c)
		if err != nil {
			return nil, err
		}
		item := wire.BatchItem{Index: i, CallID: c.CallID, Outcome: wire.Outcome{ToolID: c.ToolID, Success: call.Success}}
		if call.Success {
			item.Result = call.Result.Result
		} else {
			item.Error = &call.Error.Error
			res.Success = false
		}
		res.Results = append(res.Results, item)
		res.Completed++
		if !call.Success && !req.ContinueOnError {
			res.StoppedEarly = true
			break
		}
	}
	return &hostapi.Batch{Schema: hostapi.SchemaBatch, Success: res.Success, Result: res}, nil
}

// fakeNode is a node of the fake screen.
type fakeNode struct{ AutomationID, Text string }

// nodes is what the fake screen shows: each note's title and body.
func (f *fakeApp) nodes() []fakeNode {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeNode
	for _, n := range f.notes {
		out = append(out, fakeNode{"noteTitle", n.Title}, fakeNode{"noteBody", n.Body})
	}
	return out
}

func (f *fakeApp) texts() []string {
	var out []string
	for _, n := range f.nodes() {
		out = append(out, n.Text)
	}
	return out
}

func (f *fakeApp) UI(ctx context.Context, req uiauto.Request) (*uiauto.Outcome, error) {
	f.record(fmt.Sprintf("ui %s %s", req.Operation, req.Selector.Text))
	match := 0
	var first *fakeNode
	for _, n := range f.nodes() {
		if req.Selector.Text != "" && !(n.Text == req.Selector.Text || req.Selector.Contains && strings.Contains(n.Text, req.Selector.Text)) {
			continue
		}
		if req.Selector.AutomationID != "" && n.AutomationID != req.Selector.AutomationID {
			continue
		}
		if first == nil {
			first = &n
		}
		match++
	}
	res := &uiauto.Result{Capability: "ui." + req.Operation, MatchCount: &match}
	if req.Operation == uiauto.OpAssert && req.ExpectedText != nil && first != nil && first.Text != *req.ExpectedText {
		return &uiauto.Outcome{Operation: req.Operation, Message: fmt.Sprintf("the node's text is %q, not %q", first.Text, *req.ExpectedText),
			Code: "ui_assert_failed", Result: res}, nil
	}
	absent := req.Count != nil && *req.Count == 0
	hidden := req.Operation == uiauto.OpWait && req.Condition == "hidden"
	if (hidden || absent) == (match == 0) {
		return &uiauto.Outcome{Operation: req.Operation, Succeeded: true, Result: res}, nil
	}
	return &uiauto.Outcome{Operation: req.Operation, Message: fmt.Sprintf("the selector text=%s matched %d nodes", req.Selector.Text, match),
		Code: wire.CodeUIWaitTimeout, Result: res}, nil
}

func (f *fakeApp) Screenshot(ctx context.Context) ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 40, 24))
	for x := range 40 {
		for y := range 24 {
			img.Set(x, y, color.RGBA{R: uint8(x * 6), G: 120, B: uint8(y * 10), A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (f *fakeApp) Tree(ctx context.Context) (jsontext.Value, error) {
	raw, err := json.Marshal(map[string]any{"root": map[string]any{"type": "Screen", "children": f.texts()}})
	return raw, err
}
