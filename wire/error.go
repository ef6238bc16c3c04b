package wire

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// Error is the tool.error payload and the Go error for a protocol or tool failure reported
// by the peer. Errors compare by code: errors.Is(err, &Error{Code: CodeNotFound}) holds for
// any tool_not_found error.
type Error struct {
	Code      Code           `json:"code"`
	Message   string         `json:"message"`
	Retryable bool           `json:"retryable"`
	Details   jsontext.Value `json:"details,omitzero"`
}

// NewError returns an Error with a formatted message.
func NewError(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error implements error.
func (e *Error) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Message
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// ErrorCode returns e.Code; it is how [CodeOf] reads the codes of every layer's errors.
func (e *Error) ErrorCode() Code { return e.Code }

// Kind classifies the error as its code does ([Code.Kind]), except that a code of a
// tool's own whose details are the runtime object of an unavailable tool
// ({"available":false,…}: how an app answers a call of a tool not available now) is
// KindUnavailable.
func (e *Error) Kind() Kind {
	k := e.Code.Kind()
	if k != KindFailed || len(e.Details) == 0 {
		return k
	}
	var rt struct {
		Available *bool `json:"available"`
	}
	if Unmarshal(e.Details, &rt) == nil && rt.Available != nil && !*rt.Available {
		return KindUnavailable
	}
	return k
}
