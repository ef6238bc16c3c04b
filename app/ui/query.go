package ui

import "strings"

// filter is the node filter shared by ui.query_nodes and ui.wait. Every set field must
// match; an empty filter matches every node.
type filter struct {
	NodeID       string `json:"nodeId,omitzero"`
	AutomationID string `json:"automationId,omitzero"`
	Role         string `json:"role,omitzero"`
	Type         string `json:"type,omitzero"`
	TextContains string `json:"textContains,omitzero"`
	Action       string `json:"action,omitzero"`
	Visible      *bool  `json:"visible,omitzero"`
	Enabled      *bool  `json:"enabled,omitzero"`
}

// matches reports whether n satisfies every field of f. Ids, automation ids and actions
// match exactly; role and type case-insensitively; textContains is a case-insensitive
// substring of the label or the text.
func (f *filter) matches(n *Node) bool {
	switch {
	case f.NodeID != "" && n.ID != f.NodeID,
		f.AutomationID != "" && n.AutomationID != f.AutomationID,
		f.Role != "" && !strings.EqualFold(n.Role, f.Role),
		f.Type != "" && !strings.EqualFold(n.Type, f.Type),
		f.Action != "" && !n.supports(f.Action),
		f.Visible != nil && *f.Visible == n.Hidden,
		f.Enabled != nil && *f.Enabled == n.Disabled:
		return false
	}
	if f.TextContains != "" {
		needle := strings.ToLower(f.TextContains)
		return strings.Contains(strings.ToLower(n.Label), needle) ||
			strings.Contains(strings.ToLower(n.Text), needle)
	}
	return true
}

// match is one entry of a query result: the node (without children) and its reference.
type match struct {
	nodeJSON
	Reference Reference `json:"reference"`
}

// queryResult is the result of ui.query_nodes, and the "query" of ui.wait.
type queryResult struct {
	Source       string  `json:"source"`
	SnapshotID   string  `json:"snapshotId"`
	Revision     int64   `json:"revision"`
	Count        int     `json:"count"`
	TotalMatches int     `json:"totalMatches"`
	Truncated    bool    `json:"truncated"`
	Matches      []match `json:"matches"`
}

// query runs f over a snapshot in pre-order, keeping at most max matches.
func (snap *snapshot) query(f *filter, max int, includeBounds bool) *queryResult {
	r := &queryResult{Source: snap.source, SnapshotID: snap.id, Revision: snap.revision, Matches: []match{}}
	for _, n := range snap.nodes {
		if !f.matches(n) {
			continue
		}
		r.TotalMatches++
		if len(r.Matches) < max {
			r.Matches = append(r.Matches, match{
				nodeJSON:  n.toJSON(includeBounds),
				Reference: Reference{Source: snap.source, SnapshotID: snap.id, Revision: snap.revision, NodeID: n.ID},
			})
		}
	}
	r.Count = len(r.Matches)
	r.Truncated = r.TotalMatches > r.Count
	return r
}
