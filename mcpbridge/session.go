package mcpbridge

import (
	"context"
	"slices"
	"strings"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// selector picks a session: by id, by app id, or the only connected one.
type selector struct {
	SessionID string `json:"sessionId,omitzero"`
	AppID     string `json:"appId,omitzero"`
}

// session resolves sel to a connected session. Failures are *callError (or cancellation).
func (br *Bridge) session(ctx context.Context, sel selector) (*hostapi.Session, error) {
	if sel.SessionID != "" {
		s, err := br.backend.Session(ctx, sel.SessionID)
		if err != nil {
			return nil, err
		}
		if sel.AppID != "" && s.AppID != sel.AppID {
			e := failf(wire.CodeBadRequest, "session %s belongs to app %q, not %q", s.ID, s.AppID, sel.AppID)
			e.Hint = "Pass sessionId alone, or appId alone."
			return nil, e
		}
		if s.State != hostapi.StateConnected {
			return nil, failf(wire.CodeSessionClosed, "session %s (%s) is %s", s.ID, s.AppID, s.State)
		}
		return s, nil
	}
	list, err := br.backend.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	matches := connected(list.Sessions, sel.AppID)
	switch len(matches) {
	case 1:
		return &matches[0], nil
	case 0:
		if sel.AppID != "" {
			return nil, failf(wire.CodeNoSession, "no connected session of app %q", sel.AppID)
		}
		return nil, failf(wire.CodeNoSession, "no app is connected to the host")
	}
	type candidate struct {
		SessionID string `json:"sessionId"`
		AppID     string `json:"appId"`
		Device    string `json:"device,omitzero"`
	}
	cands := make([]candidate, len(matches))
	ids := make([]string, len(matches))
	for i, m := range matches {
		cands[i] = candidate{m.ID, m.AppID, m.DeviceName}
		ids[i] = m.ID
	}
	e := failf(wire.CodeSessionAmbiguous, "%d sessions are connected (%s): pass sessionId", len(matches), strings.Join(ids, ", "))
	e.Details, _ = wire.Marshal(struct {
		Sessions []candidate `json:"sessions"`
	}{cands})
	return nil, e
}

// connected returns the connected sessions (of appID, when set), newest first.
func connected(all []hostapi.Session, appID string) []hostapi.Session {
	var out []hostapi.Session
	for _, s := range all {
		if s.State == hostapi.StateConnected && (appID == "" || s.AppID == appID) {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b hostapi.Session) int { return b.ConnectedAt.Compare(a.ConnectedAt) })
	return out
}
