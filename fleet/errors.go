package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/ansight-go/ansight/internal/control"
	"github.com/ansight-go/ansight/wire"
)

// Error codes the fleet adds to the control API's (control.Code…). Every failure a fleet
// Backend returns is mapped here, in one place.
const (
	// CodeHostUnavailable: the host that owns the session is not in the fleet, or stopped
	// answering while it worked on the request.
	CodeHostUnavailable = "host_unavailable"
	// CodePermissionDenied: the fleet's NATS permissions do not let this user publish to
	// the subject (for a call: call tools of that policy). The request reached no host.
	CodePermissionDenied = "fleet_permission_denied"
	// CodeClassMismatch: a call came on the subject of a lower policy class than its tool's;
	// the answer carries the tool's policy (a client then retries on that class).
	CodeClassMismatch = "policy_class_mismatch"
	// CodeNotSupported: the operation is the host's alone (pairing, crash reports): run it
	// on that host.
	CodeNotSupported = "not_supported"
	// CodeBusy: the host is serving as many fleet requests as it takes; retry later.
	CodeBusy = "host_busy"
	// CodeDisconnected: this side's connection to NATS dropped while the request was out;
	// the host may or may not have run it.
	CodeDisconnected = "fleet_disconnected"
)

// ErrUnreachable means the fleet's NATS server could not be reached. Errors that wrap it
// are control.ErrHostUnavailable too.
var ErrUnreachable = errors.New("the fleet's NATS server is unreachable")

// unreachableError is a failure to connect to the fleet's NATS server.
type unreachableError struct {
	url string // redacted
	err error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach the fleet's NATS server %s: %v", e.url, e.err)
}

func (e *unreachableError) Unwrap() []error {
	return []error{ErrUnreachable, control.ErrHostUnavailable, e.err}
}

// errorBody is the body of an error answer.
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Policy is the tool's policy (the highest of a batch's), with CodeClassMismatch.
	Policy wire.Policy `json:"policy,omitzero"`
}

// Error lets a handler return an error answer as it is.
func (e *errorBody) Error() string { return e.Message }

// statusOf gives a code the HTTP status the control API uses for it.
func statusOf(code string) int {
	switch code {
	case control.CodeSessionNotFound, control.CodeNotFound, wire.CodeNotFound:
		return http.StatusNotFound
	case control.CodeSessionClosed, CodeClassMismatch:
		return http.StatusConflict
	case control.CodeBadRequest, control.CodeSessionAmbiguous:
		return http.StatusBadRequest
	case control.CodeTimeout:
		return http.StatusGatewayTimeout
	case control.CodeProtocol:
		return http.StatusBadGateway
	case CodePermissionDenied:
		return http.StatusForbidden
	case CodeNotSupported:
		return http.StatusNotImplemented
	case CodeHostUnavailable, CodeBusy, CodeDisconnected:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// apiError is a fleet failure as the control API reports failures.
func apiError(code, format string, args ...any) error {
	e := &control.APIError{Status: statusOf(code), Code: code, Message: fmt.Sprintf(format, args...)}
	if code == CodeHostUnavailable {
		return unavailableError{e}
	}
	return e
}

// unavailableError is an *control.APIError that is also control.ErrHostUnavailable, so
// that callers who look for either find it.
type unavailableError struct{ *control.APIError }

func (e unavailableError) Unwrap() []error { return []error{e.APIError, control.ErrHostUnavailable} }

// fromBody turns an error answer into the error a Backend returns.
func fromBody(b *errorBody) error {
	return apiError(b.Code, "%s", b.Message)
}

// bodyOf turns a failure on the host into an error answer: the control API's own errors
// keep their code, anything else is internal.
func bodyOf(err error) *errorBody {
	var ae *control.APIError
	switch {
	case errors.As(err, &ae):
		return &errorBody{Code: ae.Code, Message: ae.Message}
	case errors.Is(err, context.DeadlineExceeded):
		return &errorBody{Code: control.CodeTimeout, Message: err.Error()}
	case errors.Is(err, context.Canceled):
		return &errorBody{Code: control.CodeInternal, Message: "the host stopped serving the request: " + err.Error()}
	}
	return &errorBody{Code: control.CodeInternal, Message: err.Error()}
}

// deniedCall is the tool error of a call or batch that NATS refused to carry.
func deniedCall(subject string, class wire.Policy) *control.ToolError {
	return &control.ToolError{Kind: control.KindDenied, Error: wire.Error{Code: CodePermissionDenied,
		Message: fmt.Sprintf("the fleet's NATS permissions do not let this user publish to %s: it may not call %s tools (the app was not called)", subject, class)}}
}
