package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/ansight-go/ansight/transport"

	"github.com/ansight-go/ansight/wire"
)

// Sentinel causes carried by a *TransportError; test them with errors.Is.
var (
	// ErrSessionClosed: the connection ended (Client.Close) before the response arrived.
	ErrSessionClosed = errors.New("tools: session closed")
	// ErrTimeout: no response within Options.Timeout, or a transfer stalled that long.
	ErrTimeout = errors.New("tools: request timed out")
	// ErrProtocol: the app's response could not be read (malformed envelope or payload, a
	// payload above the inflation cap, a response type that does not answer the request).
	ErrProtocol = errors.New("tools: protocol violation")
	// ErrTransferInUse: a transfer announced with the id of one in progress, or recently
	// ended (Client.Receive; in a result, that transfer fails with it).
	ErrTransferInUse = errors.New("tools: transfer id already in use")
	// ErrAppEnded: the app ended its session itself (session.complete): a cause of the
	// owner's Close that the client's errors call a disconnect, as when the connection
	// drops ("the app disconnected during ui.wait").
	ErrAppEnded = errors.New("tools: the app ended its session")
)

// TransportError reports that a request/response exchange failed for a reason other than
// the tool: the session closed, the request timed out or was cancelled, the response was
// malformed. Err is the cause (ErrSessionClosed, a *TimeoutError matching ErrTimeout,
// ErrProtocol, a context error, or the connection's write error) and is matched by
// errors.Is.
//
// Its message is one line for people: "the app disconnected during ui.wait", "ui.wait did
// not answer within 20s (the host's default); raise the limit with timeoutMs (up to 1h)";
// the transport's own chain (close codes, frame errors) stays in Err.
type TransportError struct {
	// Op is the request type: tool.query, tool.call or tool.batch.
	Op string
	// RequestID is the envelope id of the request, empty if none was sent.
	RequestID string
	// Subject names what the request was about: a call's tool id, "a batch of 2 calls
	// (notes.list, ui.wait)", "a catalog query"; empty when unknown.
	Subject string
	// Err is the cause.
	Err error
}

// Error describes the failure.
func (e *TransportError) Error() string {
	if te, ok := errors.AsType[*TimeoutError](e.Err); ok {
		return te.Error()
	}
	if errors.Is(e.Err, ErrSessionClosed) && e.Subject != "" {
		switch {
		case e.Err == ErrSessionClosed: // closed without a cause
			return "the session closed during " + e.Subject
		case disconnected(e.Err):
			return "the app disconnected during " + e.Subject
		}
		return "the session ended during " + e.Subject + ": " + strings.TrimPrefix(e.Err.Error(), ErrSessionClosed.Error()+": ")
	}
	if e.Subject != "" {
		// One line for people, without the request id and the package prefixes (they
		// stay in the fields and in Err).
		switch {
		case errors.Is(e.Err, ErrProtocol):
			return "the app's answer to " + e.Subject + " could not be read: " + strings.TrimPrefix(e.Err.Error(), ErrProtocol.Error()+": ")
		case errors.Is(e.Err, context.Canceled):
			return e.Subject + " was cancelled"
		case errors.Is(e.Err, context.DeadlineExceeded):
			return e.Subject + " ran out of its caller's time"
		}
		return "could not send " + e.Subject + " to the app: " + e.Err.Error()
	}
	if e.RequestID == "" {
		return fmt.Sprintf("tools: %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("tools: %s %s: %v", e.Op, e.RequestID, e.Err)
}

// Unwrap returns the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// disconnected reports whether a session ended because its connection did (the app closed
// it, crashed, or the network failed), rather than for a reason of the host's (the
// session was replaced, revoked, or the host is stopping; those name themselves).
func disconnected(err error) bool {
	if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrAppEnded) {
		return true
	}
	_, closed := errors.AsType[*transport.CloseError](err)
	return closed
}

// RefusalError reports a call or batch this client refused to send: the tool's policy is
// above the session grant (tool_policy_not_granted), the last catalog does not list the tool
// (tool_not_found), the tool is not executable (tool_not_executable or the app's runtime
// code), the arguments do not match the tool's schema (tool_arguments_schema_invalid), or
// the batch is empty or too large (tool_batch_size_invalid). Nothing reached the app.
type RefusalError struct {
	// ToolID is the refused tool ("" for a whole-batch refusal).
	ToolID string
	// Index is the position of the refused call in a batch, -1 for a single call.
	Index int
	// Err holds the code, a human-readable reason and, for schema violations, details.
	Err *wire.Error
}

// Error describes the refusal.
func (e *RefusalError) Error() string {
	if e.Index >= 0 {
		return fmt.Sprintf("tools: refused batch call %d (%s): %v", e.Index, e.ToolID, e.Err)
	}
	return fmt.Sprintf("tools: refused: %v", e.Err)
}

// Unwrap returns the *wire.Error, so wire.CodeOf and errors.As(err, **wire.Error) work.
func (e *RefusalError) Unwrap() error { return e.Err }

func refuse(toolID string, index int, code wire.Code, format string, args ...any) *RefusalError {
	return &RefusalError{ToolID: toolID, Index: index, Err: wire.NewError(code, format, args...)}
}

// protocolError wraps a decoding failure as ErrProtocol; cause may be nil.
func protocolError(what string, cause error) error {
	if cause == nil {
		return fmt.Errorf("%w: %s", ErrProtocol, what)
	}
	return fmt.Errorf("%w: %s: %w", ErrProtocol, what, cause)
}
