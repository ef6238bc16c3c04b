package wire

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// Error is the tool.error payload and the Go error for a protocol or tool failure reported
// by the peer. Errors compare by code: errors.Is(err, &Error{Code: CodeNotFound}) holds for
// any tool_not_found error.
type Error struct {
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Retryable bool           `json:"retryable"`
	Details   jsontext.Value `json:"details,omitzero"`
}

// NewError returns an Error with a formatted message.
func NewError(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error implements error.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// CodeOf returns the protocol code of err, or "" when err carries none.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
