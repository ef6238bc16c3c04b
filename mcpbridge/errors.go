package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// This file is the one place where the bridge turns failures into what an agent reads:
// the kind of failure, whether retrying alone can help, and a hint saying what would fix
// or allow the call. Handlers build a callError (or get one from the host) and pass it
// through explain.

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
	// fromApp: the app wrote some of it (a tool's error, a denial's reason, a remediation
	// in the hint), so its text is framed as the app's.
	fromApp bool
}

func (e *callError) Error() string { return string(e.Code) + ": " + e.Message }

// failf is a failure with code, whose kind is the code's (wire.Code.Kind) unless set.
func failf(code wire.Code, format string, args ...any) *callError {
	return &callError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// fromToolError converts the host's view of a failed call.
func (br *Bridge) fromToolError(te *hostapi.ToolError) *callError {
	e := &callError{Code: te.Code, Message: te.Message, Retryable: te.Retryable, Details: te.Details, Kind: te.Kind, fromApp: true}
	if te.RefusedByHost {
		e.RefusedBy = refusedByHost
	}
	if e.Kind == 0 {
		e.Kind = te.Error.Kind()
	}
	return br.explain(e)
}

// fromWireError converts an error inside a batch item or evidence.
func (br *Bridge) fromWireError(we *wire.Error) *callError {
	return br.explain(&callError{Code: we.Code, Message: we.Message, Retryable: we.Retryable, Details: we.Details, Kind: we.Kind(), fromApp: true})
}

// asCallError turns a backend failure into an explained callError. Cancellation stays a Go
// error: the client gave up on the request, nobody reads the answer.
func (br *Bridge) asCallError(err error) (*callError, bool) {
	var ce *callError
	var ae *hostapi.APIError
	switch {
	case errors.As(err, &ce):
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return nil, false
	case errors.Is(err, hostapi.ErrHostUnavailable):
		ce = &callError{Code: wire.CodeHostUnavailable, Message: err.Error()}
	case errors.As(err, &ae):
		ce = &callError{Code: ae.Code, Message: ae.Message}
	default:
		ce = &callError{Code: wire.CodeInternal, Message: err.Error()}
	}
	return br.explain(ce), true
}

// explain completes e: its kind when nobody said (its code's, wire.Code.Kind), whether
// retrying alone can help, and a hint when it has none.
func (br *Bridge) explain(e *callError) *callError {
	if e.Kind == 0 {
		e.Kind = e.Code.Kind()
	}
	switch {
	case e.Code == wire.CodeTimeout:
		e.Retryable = true
	case e.Kind == wire.KindUnavailable, e.Kind == wire.KindDenied, e.Code == wire.CodeStaleNodeReference, e.Code == wire.CodeUnknownRef:
		// Something else has to happen first (change the app's state, look at the screen
		// again, ask the user): retrying the same call cannot succeed. Apps mark such
		// failures retryable in the sense "after the remediation"; agents read it as "now".
		e.Retryable = false
	}
	if e.Hint == "" {
		e.Hint = br.hintFor(e)
	}
	return e
}

// hintFor says what would fix or allow a failed call, by code, in terms that apply to the
// way this bridge reaches its host (Options.HostMode).
func (br *Bridge) hintFor(e *callError) string {
	switch e.Code {
	case wire.CodeHostUnavailable:
		return "No Ansight host is running. The user starts one with 'ansight host run' (or restarts this bridge with --embedded-host or --demo)."
	case wire.CodeSessionNotFound, wire.CodeSessionClosed:
		return "Session ids change when an app reconnects: call ansight_list_sessions and use a connected session."
	case wire.CodeSessionAmbiguous:
		return "Several apps are connected: pass sessionId (or appId), see details."
	case wire.CodeNoSession:
		switch br.opts.HostMode {
		case HostDemo:
			return "The demo app is not connected right now (it reconnects on its own): call ansight_list_sessions again in a moment."
		case HostEmbedded:
			return "No app has connected to this bridge's host yet: the user starts the app (built with the Ansight SDK) on this machine; then call ansight_list_sessions."
		}
		return "The user starts the app (built with the Ansight SDK) so that it connects to the host, or tries the demo with 'ansight mcp --demo'; then call ansight_list_sessions."
	case wire.CodeNotFound:
		return "Tool ids are exact: find them with ansight_search_app_tools. The catalog may have changed (app state, reconnect)."
	case wire.CodePolicyNotGranted:
		return "The tool's policy exceeds the session's grant. " + br.grantHint("") + " Tell the user; do not retry."
	case wire.CodeCriticalNotAllowed:
		return criticalReason + " Ask the user; never work around it."
	case wire.CodeExecutionDenied, wire.CodeDiscoveryDisabled:
		return "The app's own guard refuses it (a build or configuration setting of the app). Do not retry."
	case wire.CodeArgumentsInvalid, wire.CodeArgumentsSchemaInvalid, wire.CodeCallPayloadInvalid:
		return "Fix the arguments from the tool's argumentsSchema (ansight_describe_app_tool); details list the violations."
	case wire.CodeBatchCallInvalid, wire.CodeBatchPayloadInvalid, wire.CodeBatchSizeInvalid:
		return "Fix the failing batch item (see index and details); a batch holds 1 to 32 calls."
	case wire.CodeStaleNodeReference, wire.CodeUnknownRef:
		return "The screen changed since that reference was captured: call ansight_snapshot and use a ref from the new snapshot."
	case wire.CodeTimeout:
		return timeoutHint(e.Message)
	case wire.CodeArtifactFailed:
		return "The tool ran (see result) but a file it sent did not reach the host. Repeat a read tool once; after a write tool, check the app's state before repeating anything."
	case wire.CodeResultNotFound:
		return "The bridge keeps the latest results only: call the tool again to get a fresh result."
	}
	if e.Kind == wire.KindUnavailable {
		return unavailableHint(e.Details)
	}
	if e.Retryable {
		return "Retry once; if it fails again, report it."
	}
	return ""
}

// timeoutHint says what to do about a call the host stopped waiting for: give it more
// time when it needs it (the limit is in the host's message, "within 25s"), and mind that
// the app may still be running the first one.
func timeoutHint(message string) string {
	next := "a larger timeoutMs"
	if _, after, ok := strings.Cut(message, " within "); ok {
		word, _, _ := strings.Cut(after, " ")
		if d, err := time.ParseDuration(word); err == nil && d > 0 {
			ms := min(2*d.Milliseconds(), hostapi.MaxTimeoutMS)
			next = fmt.Sprintf("timeoutMs: %d", ms)
		}
	}
	return "The host stopped waiting at its limit (see message); the app may still be running the call. " +
		"If the tool needs longer (a long ui.wait, a slow export), call again with " + next + ". " +
		"Otherwise the app may be busy or stuck: after a write tool, check the app's state before repeating it; retry a read tool once, then report."
}

// unavailableHint says what makes an unavailable tool available: the app's remediation
// when the refusal carries its runtime object.
func unavailableHint(details jsontext.Value) string {
	var rt wire.Runtime
	if len(details) > 0 && wire.Unmarshal(details, &rt) == nil && rt.Remediation != "" {
		return "Not available in the app's current state. First: " + strings.TrimSpace(rt.Remediation) + " Then call again."
	}
	return "The tool is not available in the app's current state; ansight_describe_app_tool shows what it needs (runtime: requiredState, remediation). Change the app's state first, then call again."
}

const criticalReason = "Critical tools are disabled in this MCP bridge. The user must restart it with --allow-critical ('ansight mcp --allow-critical') to allow them."

// grantHint says how the user gives a session a higher grant, in this bridge's mode. need
// is the policy the tool needs ("" when unknown).
func (br *Bridge) grantHint(need wire.Policy) string {
	policy := string(need)
	if policy == "" {
		policy = "<policy>"
	}
	switch br.opts.HostMode {
	case HostDemo:
		return "The demo app connects in local mode, whose grant is write: the demo cannot grant more."
	case HostEmbedded:
		return "This bridge runs its own host (--embedded-host), which grants apps on this machine write. A higher grant needs the resident host: the user runs 'ansight host run', pairs the app with 'ansight pairing issue --max-tool-policy " + policy + "' and restarts this bridge without --embedded-host."
	}
	return "Only the user can change the grant: apps on this machine get write; a paired app gets what its invite granted ('ansight pairing issue --max-tool-policy " + policy + "')."
}
