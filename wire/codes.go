package wire

import (
	"errors"
	"fmt"
)

// Code is a stable snake_case error code: the code of a tool.error, and the code of every
// failure the host, its API and the MCP bridge report. It is one vocabulary for every layer:
// each maps from a Code (its [Code.Kind]) once rather than keeping constants of its own.
//
// Code is a string, not a closed enumeration: tools fail with codes of their own
// (docs/protocol/calls.md#tool-codes) and other SDKs emit codes this package does not name,
// and all of them cross the wire, the host API and the bridge unchanged. A string type also
// encodes as itself in every codec, so typing the codes changes no byte of output.
type Code string

// String returns the code as written on the wire.
func (c Code) String() string { return string(c) }

// Codes of the protocol (docs/protocol/calls.md#error-codes). Tools may use their own
// snake_case codes too.
const (
	CodeProtocolInvalidRequest Code = "tool_protocol_invalid_request"
	CodeDiscoveryDisabled      Code = "tool_discovery_disabled"
	CodeCallPayloadInvalid     Code = "tool_call_payload_invalid"
	CodeCallMissingID          Code = "tool_call_missing_id"
	CodeNotFound               Code = "tool_not_found"
	CodeExecutionDenied        Code = "tool_execution_denied"
	CodeUnavailable            Code = "tool_unavailable"
	CodeArgumentsInvalid       Code = "tool_arguments_invalid"
	CodeArgumentsSchemaInvalid Code = "tool_arguments_schema_invalid"
	CodeResultSchemaInvalid    Code = "tool_result_schema_invalid"
	CodeExecutionFailed        Code = "tool_execution_failed"
	CodeExecutionException     Code = "tool_execution_exception"
	CodeBatchPayloadInvalid    Code = "tool_batch_payload_invalid"
	CodeBatchSizeInvalid       Code = "tool_batch_size_invalid"
	CodeBatchCallInvalid       Code = "tool_batch_call_invalid"
	CodePolicyNotGranted       Code = "tool_policy_not_granted"
	CodeNotExecutable          Code = "tool_not_executable"
	CodeStaleNodeReference     Code = "stale_node_reference"
	CodeUIActionNotSupported   Code = "ui_action_not_supported"
	CodeUIWaitTimeout          Code = "ui_wait_timeout"
)

// CodeSchemaTooComplex is the host's denial of a tool whose definition carries a schema
// beyond the complexity bounds (schema.CheckBounds, docs/protocol/limits.md#catalog): the
// host keeps the definition without its schemas (nothing on that side validates it, renders
// it as a form or hands it to an agent) and does not call the tool.
const CodeSchemaTooComplex Code = "tool_schema_too_complex"

// Codes of the host API (package hostapi, docs/control-api.md): failures of the host
// itself, never sent to an app.
const (
	CodeSessionNotFound  Code = "session_not_found"
	CodeSessionAmbiguous Code = "session_ambiguous"
	CodeSessionClosed    Code = "session_closed"
	CodeTimeout          Code = "timeout"
	CodeBadRequest       Code = "bad_request"
	CodeProtocol         Code = "protocol_error"
	CodeInternal         Code = "internal_error"
	// CodeSessionChanged: a conditional call's session no longer has the catalog revision
	// or grant the call named (hostapi.CallRequest.IfRevision): look it up again.
	CodeSessionChanged Code = "session_changed"
	// CodeResourceNotFound: no such route, asset or artifact (the HTTP 404 of the host API
	// and the player).
	CodeResourceNotFound Code = "not_found"
	// CodeRecordingOff: the host keeps no recordings (it runs with --no-record).
	CodeRecordingOff Code = "recording_off"
	// CodePlayerOff: the host serves no web player (it runs with --no-player).
	CodePlayerOff Code = "player_off"
	// CodePasswordRequired and CodePasswordInvalid: an encrypted archive to import came
	// without its password, or with a wrong one (the official host's PasswordRequired and
	// InvalidPassword).
	CodePasswordRequired Code = "password_required"
	CodePasswordInvalid  Code = "password_invalid"
)

// Codes of the MCP bridge (package mcpbridge).
const (
	// CodeCriticalNotAllowed: a critical tool, and the bridge was not started with
	// --allow-critical (mcpbridge.Options.AllowCritical).
	CodeCriticalNotAllowed Code = "critical_not_allowed"
	// CodeNoSession: no connected session matches (no app connected, or none of the app).
	CodeNoSession Code = "no_session"
	// CodeHostUnavailable: no host answers on the control socket.
	CodeHostUnavailable Code = "host_unavailable"
	// CodeNoScreenshot: the screenshot tool answered without an image file.
	CodeNoScreenshot Code = "screenshot_missing"
	// CodeArtifactFailed: the tool ran, but a file it sent did not reach the host.
	CodeArtifactFailed Code = "artifact_transfer_failed"
	// CodeUnknownRef: a short node reference ("e5") that no snapshot of the session issued
	// (invalid), or that is not on the latest one's screen (unavailable).
	CodeUnknownRef Code = "unknown_ref"
	// CodeResultNotFound: ansight_read_result names a result the bridge no longer keeps
	// (unavailable), or no result id at all (invalid).
	CodeResultNotFound Code = "result_not_found"
	// CodeResultTooLarge: an exposed tool's result is over the size cap (the call itself
	// succeeded; the result was saved).
	CodeResultTooLarge Code = "result_too_large"
)

// Codes of the device lab (package fleet).
const (
	// CodePermissionDenied: the fleet's NATS permissions do not let this user publish to
	// the subject (for a call: call tools of that policy). The request reached no host.
	CodePermissionDenied Code = "fleet_permission_denied"
	// CodeClassMismatch: a call came on the subject of a lower policy class than its tool's;
	// the answer carries the tool's policy (a client then retries on that class).
	CodeClassMismatch Code = "policy_class_mismatch"
	// CodeNotSupported: the operation is the host's alone (pairing, crash reports): run it
	// on that host.
	CodeNotSupported Code = "not_supported"
	// CodeBusy: the host is serving as many fleet requests as it takes; retry later.
	CodeBusy Code = "host_busy"
	// CodeDisconnected: this side's connection to NATS dropped while the request was out;
	// the host may or may not have run it.
	CodeDisconnected Code = "fleet_disconnected"
)

// Kind says how a script or an agent reacts to a failure: stop (denied), change the app's
// state or wait (unavailable), fix the request (invalid), or read the message (failed).
// The CLI's exit codes, the host API's and the MCP bridge's "kind" members are Kinds.
//
// Who refused a request — the host before sending it, or the app — is not a Kind: the same
// code can come from either (tool_not_found), and the host API and the bridge report it
// beside the kind (RefusedByHost, refusedBy). Transport failures (a closed session, a
// timeout) have codes of the host API, with the kind of what the caller can do about them.
type Kind uint8

// Kinds. The zero Kind is no kind.
const (
	// KindFailed: the tool ran and failed, or the host could not complete the request.
	KindFailed Kind = iota + 1
	// KindDenied: policy — the grant, the app's guard or the bridge forbids it.
	KindDenied
	// KindUnavailable: the tool or the session is not there now (unknown tool, a tool not
	// available in the app's state, no such or a closed session).
	KindUnavailable
	// KindInvalid: the request is wrong (arguments, batch size, an ambiguous session).
	KindInvalid
)

var kindNames = [...]string{KindFailed: "failed", KindDenied: "denied", KindUnavailable: "unavailable", KindInvalid: "invalid"}

// String returns the kind's name ("denied", "unavailable", "invalid", "failed"), or "" for
// the zero Kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MarshalText writes the kind's name.
func (k Kind) MarshalText() ([]byte, error) {
	if int(k) >= len(kindNames) {
		return nil, fmt.Errorf("wire: invalid Kind %d", uint8(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText reads a kind's name; "" is the zero Kind.
func (k *Kind) UnmarshalText(b []byte) error {
	for i, name := range kindNames {
		if name == string(b) {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("wire: unknown error kind %q", b)
}

// Kind classifies the code. A code this package does not name (a tool's own) is
// KindFailed; see [Error.Kind] for a tool.error, whose details may say more.
func (c Code) Kind() Kind {
	switch c {
	case CodePolicyNotGranted, CodeExecutionDenied, CodeDiscoveryDisabled, CodeCriticalNotAllowed, CodePermissionDenied:
		return KindDenied
	case CodeNotFound, CodeUnavailable, CodeNotExecutable, CodeSchemaTooComplex,
		CodeSessionNotFound, CodeSessionClosed, CodeNoSession, CodeHostUnavailable, CodeResultNotFound, CodeBusy:
		return KindUnavailable
	case CodeProtocolInvalidRequest, CodeCallPayloadInvalid, CodeCallMissingID, CodeArgumentsInvalid,
		CodeArgumentsSchemaInvalid, CodeBatchPayloadInvalid, CodeBatchSizeInvalid, CodeBatchCallInvalid,
		CodeBadRequest, CodeSessionAmbiguous, CodeUnknownRef, CodeNotSupported, CodeClassMismatch,
		CodePasswordRequired, CodePasswordInvalid:
		return KindInvalid
	}
	return KindFailed
}

// CodeOf returns the code of the first error in err's chain that carries one — an *Error,
// or another layer's error with an ErrorCode method (*hostapi.APIError) — or "" when none
// does.
func CodeOf(err error) Code {
	var c interface{ ErrorCode() Code }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}
