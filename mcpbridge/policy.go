package mcpbridge

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// verdict is the bridge's view of one catalog entry.
type verdict struct {
	// aboveGrant: the tool's policy exceeds the session's grant. Such tools are never
	// offered (not listed, not described, not exposed) and never called.
	aboveGrant bool
	// denial says why the tool cannot be called now (nil: callable): the bridge's own
	// refusal of critical tools first, then the host's denial.
	denial *wire.Denial
}

// judge applies the bridge's policy to an entry of a session whose grant is grant ("" when
// unknown: the host's annotation decides alone).
func (br *Bridge) judge(e *wire.ToolEntry, grant wire.Policy) verdict {
	if e.Denial != nil && e.Denial.Code == wire.CodePolicyNotGranted ||
		grant.Valid() && !e.Policy.AllowedBy(grant) || !e.Policy.Valid() {
		return verdict{aboveGrant: true}
	}
	if e.Policy == wire.PolicyCritical && !br.opts.AllowCritical {
		return verdict{denial: &wire.Denial{Code: wire.CodeCriticalNotAllowed, Reason: criticalReason}}
	}
	if e.Denial != nil {
		return verdict{denial: e.Denial}
	}
	if !e.IsExecutable() {
		d := &wire.Denial{Code: wire.CodeNotExecutable, Reason: "The app does not allow executing this tool now."}
		if rt := e.Runtime; rt != nil && !rt.Available {
			d.Code, d.Reason = cmp.Or(rt.Code, wire.CodeUnavailable), cmp.Or(rt.Reason, "The tool is not available in the app's current state.")
		}
		return verdict{denial: d}
	}
	return verdict{}
}

const criticalReason = "Critical tools are disabled in this MCP bridge. The user must restart it with --allow-critical ('ansight mcp --allow-critical') to allow them."

// refusal is the error for calling a tool the bridge does not call, or nil.
func (br *Bridge) refusal(e *wire.ToolEntry, sess *hostapi.Session) *callError {
	v := br.judge(e, sess.MaxToolPolicy)
	switch {
	case v.aboveGrant:
		return &callError{Code: wire.CodePolicyNotGranted, RefusedBy: refusedByBridge,
			Message: fmt.Sprintf("tool %q has policy %q, above the session's grant %q", e.ID, e.Policy, sess.MaxToolPolicy),
			Hint:    grantHint(e.Policy)}
	case v.denial != nil && v.denial.Code == wire.CodeCriticalNotAllowed:
		return &callError{Code: wire.CodeCriticalNotAllowed, RefusedBy: refusedByBridge,
			Message: fmt.Sprintf("tool %q is critical", e.ID), Hint: criticalReason + " Ask the user; never work around it."}
	}
	return nil
}

func grantHint(p wire.Policy) string {
	return fmt.Sprintf("The host's grant for this session decides this, not the agent (apps on this machine get write; paired apps what their invite granted). A session granted %q is needed: the user pairs the app with 'ansight pairing issue --max-tool-policy %s'. Do not retry.", p, p)
}

// hintFor says what would fix or allow a failed call, by code.
func hintFor(e *callError) string {
	switch e.Code {
	case wire.CodeSessionNotFound, wire.CodeSessionClosed:
		return "Session ids change when an app reconnects: call ansight_list_sessions and use a connected session."
	case wire.CodeSessionAmbiguous:
		return "Several apps are connected: pass sessionId (or appId), see details."
	case wire.CodeNoSession:
		return "Start the app (built with the Ansight SDK) so that it connects, or try the demo with 'ansight mcp --demo'; then call ansight_list_sessions."
	case wire.CodeNotFound:
		return "Tool ids are exact: find them with ansight_search_app_tools. The catalog may have changed (app state, reconnect)."
	case wire.CodePolicyNotGranted:
		return "The tool's policy exceeds the session's grant; only the user can change the grant (pairing). Do not retry."
	case wire.CodeExecutionDenied, wire.CodeDiscoveryDisabled:
		return "The app's own guard refuses it (a build or configuration setting of the app). Do not retry."
	case wire.CodeArgumentsInvalid, wire.CodeArgumentsSchemaInvalid, wire.CodeCallPayloadInvalid:
		return "Fix the arguments from the tool's argumentsSchema (ansight_describe_app_tool); details list the violations."
	case wire.CodeBatchCallInvalid, wire.CodeBatchPayloadInvalid, wire.CodeBatchSizeInvalid:
		return "Fix the failing batch item (see index and details); a batch holds 1 to 32 calls."
	case wire.CodeStaleNodeReference:
		return "The UI changed since that node was captured: query the nodes again (ui.query_nodes) and use the new reference."
	case wire.CodeUnavailable, wire.CodeNotExecutable:
		return unavailableHint
	case wire.CodeTimeout:
		return "The app did not answer in time. Retry once; if it fails again, report it."
	}
	if e.Kind == wire.KindUnavailable {
		return unavailableHint
	}
	if e.Retryable {
		return "Retry once; if it fails again, report it."
	}
	return ""
}

const unavailableHint = "The tool is not available in the app's current state; ansight_describe_app_tool shows what it needs (runtime: requiredState, remediation). Change the app's state first, then call again."

// oneLine shortens a description to its first line, at most maxRunes runes, for the
// compact index.
func oneLine(s string, maxRunes int) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if n := 0; len(s) > maxRunes {
		for i := range s {
			if n == maxRunes-1 {
				return strings.TrimRight(s[:i], " ,;:") + "…"
			}
			n++
		}
	}
	return s
}
