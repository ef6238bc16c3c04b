package hostapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/uiauto"
	"github.com/ansight-go/ansight/wire"
)

// SchemaUIOperation names the answer of a UI operation: what the official CLI's
// ansight ui --json writes.
const SchemaUIOperation = "ansight.ui-operation/v1"

// UIRequest is one UI operation (package uiauto: the official CLI's ui verbs, their flags
// and defaults).
type UIRequest struct {
	uiauto.Request
	// CallTimeoutMS bounds each of the operation's calls to the app, as CallRequest's
	// TimeoutMS does (0: the host's limit). The operation's own wait is TimeoutMs.
	CallTimeoutMS int64 `json:"callTimeoutMs,omitzero"`
	// Origin says who asks, for every call the operation makes (see CallRequest).
	Origin string `json:"origin,omitzero"`
}

// UIOperation is the answer of a UI operation. An operation that ran but did not succeed
// (no match, a target that never became actionable, the app's refusal) is an answer with
// Succeeded false, not an error.
type UIOperation struct {
	Schema    string `json:"schema"`
	SessionID string `json:"sessionId"`
	uiauto.Outcome
}

// Caller calls a session's tools through b, each call bounded by timeoutMS (0: the host's
// limit): the app's tool failures come back as *wire.Error, the host's as they are.
func Caller(b Backend, sessionID string, timeoutMS int64) uiauto.CallFunc {
	return func(ctx context.Context, toolID string, args jsontext.Value) (jsontext.Value, error) {
		c, err := b.Call(ctx, sessionID, CallRequest{ToolID: toolID, Arguments: args, TimeoutMS: timeoutMS}, nil)
		switch {
		case err != nil:
			return nil, err
		case !c.Success && c.Error != nil:
			e := c.Error.Error
			return nil, &e
		case !c.Success || c.Result == nil:
			return nil, Errorf(http.StatusBadGateway, wire.CodeProtocol, "%s answered no result", toolID)
		}
		return c.Result.Result, nil
	}
}

// RunUI runs a UI operation on a session through b's Call: capture with
// ui.get_visual_tree, resolve the selector, act with ui.perform_action. It is how every
// Backend answers UI, so that the host, the fleet and any other backend resolve a
// selector the same way.
func RunUI(ctx context.Context, b Backend, sessionID string, req UIRequest) (*UIOperation, error) {
	if req.Origin != "" {
		// The operation's calls are its asker's: recorded with its origin.
		b = WithOrigin(b, req.Origin)
	}
	out, err := uiauto.Run(ctx, Caller(b, sessionID, req.CallTimeoutMS), req.Request)
	if err != nil {
		var we *wire.Error
		if errors.As(err, &we) && we.Code == wire.CodeBadRequest {
			return nil, Errorf(http.StatusBadRequest, wire.CodeBadRequest, "%s", we.Message)
		}
		return nil, err
	}
	return &UIOperation{Schema: SchemaUIOperation, SessionID: sessionID, Outcome: *out}, nil
}

// RecordsUIOperation reports whether a host records a UI operation as a TrafficUIOperation
// record: asserts and waits (an action's ui.perform_action is recorded as a call).
func RecordsUIOperation(op string) bool { return op == uiauto.OpAssert || op == uiauto.OpWait }
