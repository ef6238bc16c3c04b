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
	// described, exposed or called; a search lists them (with their denial) only when
	// asked for tools that cannot be called.
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
		reason := fmt.Sprintf("Needs a %s grant; the session has %s.", e.Policy, cmp.Or(string(grant), "less"))
		return verdict{aboveGrant: true, denial: &wire.Denial{Code: wire.CodePolicyNotGranted, Reason: reason}}
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

// refusal is the error for calling a tool the bridge does not call, or nil.
func (br *Bridge) refusal(e *wire.ToolEntry, sess *hostapi.Session) *callError {
	v := br.judge(e, sess.MaxToolPolicy)
	switch {
	case v.aboveGrant:
		return br.explain(&callError{Code: wire.CodePolicyNotGranted, RefusedBy: refusedByBridge,
			Message: fmt.Sprintf("tool %q has policy %q, above the session's grant %q", e.ID, e.Policy, sess.MaxToolPolicy),
			Hint:    br.grantHint(e.Policy) + " Tell the user; do not retry."})
	case v.denial != nil && v.denial.Code == wire.CodeCriticalNotAllowed:
		return br.explain(&callError{Code: wire.CodeCriticalNotAllowed, RefusedBy: refusedByBridge,
			Message: fmt.Sprintf("tool %q is critical", e.ID)})
	}
	return nil
}

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
