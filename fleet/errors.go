package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// The fleet's own codes are in wire's vocabulary (wire.CodePermissionDenied, …). Every
// failure a fleet Backend returns is mapped here, in one place.

// ErrUnreachable means the fleet's NATS server could not be reached. Errors that wrap it
// are hostapi.ErrHostUnavailable too.
var ErrUnreachable = errors.New("the fleet's NATS server is unreachable")

// ErrCredentialsRefused means the fleet's NATS server refused the credentials given (a
// wrong user, password, token, NKey or .creds file, or expired or revoked ones): asking
// again will not help, unlike an unreachable server.
var ErrCredentialsRefused = errors.New("the fleet's NATS server refused the credentials")

// authRefusal reports whether err is the server refusing the client's credentials. The
// NATS client returns the server's -ERR line as a new error ("nats: authorization
// violation"), not one of its sentinel errors, so the text is what can be matched.
func authRefusal(err error) bool {
	if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) || errors.Is(err, nats.ErrAuthRevoked) {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"authorization violation", "authentication expired", "authentication revoked", "user authentication"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// connectError is a failure to connect to the fleet's NATS server: refused credentials
// (ErrCredentialsRefused, which asking again will not mend) or an unreachable server
// (ErrUnreachable, and hostapi.ErrHostUnavailable for the callers of a Backend).
type connectError struct {
	url     string // redacted
	err     error
	refused bool
}

func (e *connectError) Error() string {
	if e.refused {
		return fmt.Sprintf("the fleet's NATS server %s refused the credentials: %v", e.url, e.err)
	}
	return fmt.Sprintf("cannot reach the fleet's NATS server %s: %v", e.url, e.err)
}

func (e *connectError) Unwrap() []error {
	if e.refused {
		return []error{ErrCredentialsRefused, e.err}
	}
	return []error{ErrUnreachable, hostapi.ErrHostUnavailable, e.err}
}

// errorBody is the body of an error answer.
type errorBody struct {
	Code    wire.Code `json:"code"`
	Message string    `json:"message"`
	// Policy is the tool's policy (the highest of a batch's), with wire.CodeClassMismatch.
	Policy wire.Policy `json:"policy,omitzero"`
}

// Error lets a handler return an error answer as it is.
func (e *errorBody) Error() string { return e.Message }

// statusOf gives a code the HTTP status the control API uses for it.
func statusOf(code wire.Code) int {
	switch code {
	case wire.CodeSessionNotFound, wire.CodeResourceNotFound, wire.CodeNotFound:
		return http.StatusNotFound
	case wire.CodeSessionClosed, wire.CodeClassMismatch:
		return http.StatusConflict
	case wire.CodeBadRequest, wire.CodeSessionAmbiguous:
		return http.StatusBadRequest
	case wire.CodeTimeout:
		return http.StatusGatewayTimeout
	case wire.CodeProtocol:
		return http.StatusBadGateway
	case wire.CodePermissionDenied:
		return http.StatusForbidden
	case wire.CodeNotSupported:
		return http.StatusNotImplemented
	case wire.CodeHostUnavailable, wire.CodeBusy, wire.CodeDisconnected:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// apiError is a fleet failure as the control API reports failures.
func apiError(code wire.Code, format string, args ...any) error {
	e := &hostapi.APIError{Status: statusOf(code), Code: code, Message: fmt.Sprintf(format, args...)}
	if code == wire.CodeHostUnavailable {
		return unavailableError{e}
	}
	return e
}

// unavailableError is an *hostapi.APIError that is also hostapi.ErrHostUnavailable, so
// that callers who look for either find it.
type unavailableError struct{ *hostapi.APIError }

func (e unavailableError) Unwrap() []error { return []error{e.APIError, hostapi.ErrHostUnavailable} }

// fromBody turns an error answer into the error a Backend returns.
func fromBody(b *errorBody) error {
	return apiError(b.Code, "%s", b.Message)
}

// bodyOf turns a failure on the host into an error answer: the control API's own errors
// keep their code, anything else is internal.
func bodyOf(err error) *errorBody {
	var ae *hostapi.APIError
	switch {
	case errors.As(err, &ae):
		return &errorBody{Code: ae.Code, Message: ae.Message}
	case errors.Is(err, context.DeadlineExceeded):
		return &errorBody{Code: wire.CodeTimeout, Message: err.Error()}
	case errors.Is(err, context.Canceled):
		return &errorBody{Code: wire.CodeInternal, Message: "the host stopped serving the request: " + err.Error()}
	}
	return &errorBody{Code: wire.CodeInternal, Message: err.Error()}
}

// deniedCall is the tool error of a call or batch that NATS refused to carry.
func deniedCall(subject string, class wire.Policy) *hostapi.ToolError {
	return &hostapi.ToolError{Kind: wire.KindDenied, Error: wire.Error{Code: wire.CodePermissionDenied,
		Message: fmt.Sprintf("the fleet's NATS permissions do not let this user publish to %s: it may not call %s tools (the app was not called)", subject, class)}}
}
