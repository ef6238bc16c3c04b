package hostapi

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/uiauto"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// uiBackend is a session whose app answers the official Android tree and acts.
type uiBackend struct {
	Backend
	tree  jsontext.Value
	calls []CallRequest
}

func (b *uiBackend) UI(ctx context.Context, sessionID string, req UIRequest) (*UIOperation, error) {
	return RunUI(ctx, b, sessionID, req)
}

func (b *uiBackend) Call(_ context.Context, id string, req CallRequest, _ func(Progress)) (*Call, error) {
	if id != "app-001" {
		return nil, SessionNotFound(id)
	}
	b.calls = append(b.calls, req)
	c := &Call{Schema: SchemaCall, SessionID: id, ToolID: req.ToolID, Success: true}
	switch req.ToolID {
	case uiauto.VisualTreeToolID:
		c.Result = &wire.Result{ToolID: req.ToolID, Success: true, Result: b.tree}
	case uiauto.PerformActionToolID:
		if strings.Contains(string(req.Arguments), `"nodeId":"0.0.3.1"`) {
			c.Success, c.Error = false, &ToolError{Error: wire.Error{Code: wire.CodeUIActionNotSupported, Message: "disabled"}, Kind: wire.KindFailed}
			break
		}
		c.Result = &wire.Result{ToolID: req.ToolID, Success: true, Result: jsontext.Value(`{"action":"tap"}`)}
	}
	return c, nil
}

// TestUIOverTheSocket: a UI operation crosses the control API as one request; the host
// captures, resolves and acts with the capture's reference; failures of the operation are
// answers, a bad request and an unknown session are errors.
func TestUIOverTheSocket(t *testing.T) { // not parallel: Listen sets the process umask for a moment
	tree, err := os.ReadFile("../wire/uitree/testdata/official/android-views.json")
	if err != nil {
		t.Fatal(err)
	}
	b := &uiBackend{tree: tree}
	c := serve(t, b)
	ctx := t.Context()
	op, err := c.UI(ctx, "app-001", UIRequest{Request: uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{AutomationID: "save"}}, CallTimeoutMS: 9000})
	if err != nil || op.Schema != SchemaUIOperation || !op.Succeeded || op.Result.Target.ID != "0.0.3.0" || op.SessionID != "app-001" {
		t.Fatalf("tap = %+v, %v", op, err)
	}
	if len(b.calls) != 2 || b.calls[0].TimeoutMS != 9000 ||
		string(b.calls[1].Arguments) != `{"reference":{"source":"native","snapshotId":"native:7:4f0c2a9d1e8b4c7fa3d25e6b9c0a1f24","revision":7,"nodeId":"0.0.3.0"},"action":"tap"}` {
		t.Fatalf("calls = %+v", b.calls)
	}
	zero := 0
	op, err = c.UI(ctx, "app-001", UIRequest{Request: uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{Text: "Delete"}, TimeoutMs: &zero}})
	if err != nil || op.Succeeded || op.Code != uiauto.CodeNotActionable {
		t.Fatalf("a disabled target: %+v, %v", op, err)
	}
	if _, err := c.UI(ctx, "app-001", UIRequest{Request: uiauto.Request{Operation: "poke"}}); wire.CodeOf(err) != wire.CodeBadRequest {
		t.Errorf("bad request: %v", err)
	} else if e, ok := err.(*APIError); !ok || e.Status != http.StatusBadRequest {
		t.Errorf("bad request: %T %v", err, err)
	}
	if _, err := c.UI(ctx, "nope", UIRequest{Request: uiauto.Request{Operation: uiauto.OpSnapshot}}); wire.CodeOf(err) != wire.CodeSessionNotFound {
		t.Errorf("unknown session: %v", err)
	}
}
