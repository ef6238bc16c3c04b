package mcpbridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// Who refused a call that never reached the app.
const (
	refusedByBridge = "bridge"
	refusedByHost   = "host"
)

// callError is a failed meta-tool call as the agent sees it: a tool's own error, a refusal
// (by this bridge or the host) or a host failure, with a hint saying what would fix or
// allow it. It is an error so that helpers can return it; handlers turn it into an MCP tool
// error (isError), never into a protocol error, so that the agent can correct itself.
type callError struct {
	Code      wire.Code      `json:"code"`
	Message   string         `json:"message"`
	Retryable bool           `json:"retryable"`
	Details   jsontext.Value `json:"details,omitzero"`
	Kind      wire.Kind      `json:"kind,omitzero"`
	RefusedBy string         `json:"refusedBy,omitzero"`
	Hint      string         `json:"hint,omitzero"`
}

func (e *callError) Error() string { return string(e.Code) + ": " + e.Message }

func failf(code wire.Code, format string, args ...any) *callError {
	return &callError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// fromToolError converts the host's view of a failed call, with its hint.
func fromToolError(te *hostapi.ToolError) *callError {
	e := &callError{Code: te.Code, Message: te.Message, Retryable: te.Retryable, Details: te.Details, Kind: te.Kind}
	if te.RefusedByHost {
		e.RefusedBy = refusedByHost
	}
	if e.Kind == 0 {
		e.Kind = te.Error.Kind()
	}
	e.Hint = hintFor(e)
	return e
}

// fromWireError converts an error inside a batch item or evidence, with its hint.
func fromWireError(we *wire.Error) *callError {
	e := &callError{Code: we.Code, Message: we.Message, Retryable: we.Retryable, Details: we.Details, Kind: we.Kind()}
	e.Hint = hintFor(e)
	return e
}

// asCallError turns a backend failure into a callError, giving it the kind of its code
// (wire.Code.Kind) and the hint for its code unless it has them. Cancellation stays a Go
// error: the client gave up on the request, nobody reads the answer.
func asCallError(err error) (*callError, bool) {
	var ce *callError
	var ae *hostapi.APIError
	switch {
	case errors.As(err, &ce):
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return nil, false
	case errors.Is(err, hostapi.ErrHostUnavailable):
		ce = &callError{Code: wire.CodeHostUnavailable, Message: err.Error(),
			Hint: "Start the host ('ansight host run'), or restart this bridge with --embedded-host."}
	case errors.As(err, &ae):
		ce = &callError{Code: ae.Code, Message: ae.Message, Retryable: ae.Code == wire.CodeTimeout}
	default:
		ce = &callError{Code: wire.CodeInternal, Message: err.Error()}
	}
	if ce.Kind == 0 {
		ce.Kind = ce.Code.Kind()
	}
	if ce.Hint == "" {
		ce.Hint = hintFor(ce)
	}
	return ce, true
}

// failure is the structured content of a failed meta-tool call.
type failure struct {
	SessionID string     `json:"sessionId,omitzero"`
	ToolID    string     `json:"toolId,omitzero"`
	Success   bool       `json:"success"`
	Error     *callError `json:"error"`
}

// structured returns a tool result whose structured content is v, repeated as JSON text
// for clients that read only content (as the MCP spec recommends).
func structured(v any, isError bool, extra ...mcp.Content) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return nil, fmt.Errorf("mcpbridge: encode result: %w", err)
	}
	content := append([]mcp.Content{&mcp.TextContent{Text: string(b)}}, extra...)
	return &mcp.CallToolResult{Content: content, StructuredContent: jsontext.Value(b), IsError: isError}, nil
}

// fail answers a handler's error: a callError (or a backend failure) becomes an MCP tool
// error carrying it; cancellation is returned as is.
func fail(err error, sessionID, toolID string) (*mcp.CallToolResult, error) {
	ce, ok := asCallError(err)
	if !ok {
		return nil, err
	}
	return structured(failure{SessionID: sessionID, ToolID: toolID, Error: ce}, true)
}
