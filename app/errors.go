package app

import (
	"fmt"

	"github.com/ansight-go/ansight/wire"
)

// ToolErrorf returns a tool failure with the tool's own code (stable snake_case, e.g.
// "stale_node_reference") and a formatted message. A handler returns it (possibly wrapped)
// to fail the call with that code instead of tool_execution_failed. The failure is not
// retryable; return a *wire.Error with Retryable set for one that is.
func ToolErrorf(code wire.Code, format string, args ...any) error {
	return &wire.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ToolErrorDetails is ToolErrorf with a details object (any value marshalled as JSON,
// typically a struct or map) that the host receives as the error's "details". If details
// cannot be marshalled the error carries none.
func ToolErrorDetails(code wire.Code, message string, details any) error {
	e := &wire.Error{Code: code, Message: message}
	if details != nil {
		if b, err := wire.Marshal(details); err == nil {
			e.Details = b
		}
	}
	return e
}
