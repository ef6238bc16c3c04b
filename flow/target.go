package flow

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/uiauto"
)

// Target is the app session a flow runs against. Its implementations are a session behind a
// hostapi.Backend (the CLI's) and fakes in tests. Each method must return when ctx ends; the
// runner does not wait for one that does not (it ends the step at its deadline regardless).
type Target interface {
	// Call and Batch call the app's tools as the host API does: a tool's failure is a Call
	// or Batch with Success false, an error is a failure of the host or the session.
	Call(ctx context.Context, req hostapi.CallRequest) (*hostapi.Call, error)
	Batch(ctx context.Context, req hostapi.BatchRequest) (*hostapi.Batch, error)
	// UI runs one UI operation (package uiauto: the host's selector resolution, as
	// 'ansight ui' does: an action waits for its target to be actionable within the
	// request's TimeoutMs). A failed operation is an Outcome with Succeeded false; an error
	// is the host's or the session's.
	UI(ctx context.Context, req uiauto.Request) (*uiauto.Outcome, error)
	// Screenshot returns the app's screen as PNG.
	Screenshot(ctx context.Context) ([]byte, error)
	// Tree returns the app's visual tree (the ui.get_visual_tree result), kept in the report
	// of a failing step.
	Tree(ctx context.Context) (jsontext.Value, error)
}
