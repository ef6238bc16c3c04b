package ui

import (
	"fmt"
	"strings"
)

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

// scope limits the nodes a query or a wait looks at, as the capture options of the
// official SDKs do: the subtree under RootNodeID, MaxDepth levels below it, the first
// MaxNodes nodes breadth-first. The zero scope is the whole snapshot.
type scope struct {
	RootNodeID string `json:"rootNodeId,omitzero"`
	MaxDepth   *int   `json:"maxDepth,omitzero"`
	MaxNodes   *int   `json:"maxNodes,omitzero"`
}

// nodes returns the snapshot's nodes in scope, in pre-order.
func (sc *scope) nodes(snap *snapshot) ([]*Node, error) {
	if sc.RootNodeID == "" && sc.MaxDepth == nil && sc.MaxNodes == nil {
		return snap.nodes, nil
	}
	root := snap.root
	if sc.RootNodeID != "" {
		if root = snap.byID[sc.RootNodeID]; root == nil {
			return nil, nodeNotFound(snap, sc.RootNodeID)
		}
	}
	maxDepth, maxNodes := clampOr(sc.MaxDepth, maxTreeDepth, 0, maxTreeDepth), clampOr(sc.MaxNodes, len(snap.nodes), 1, len(snap.nodes))
	in := make(map[*Node]bool, min(maxNodes, len(snap.nodes)))
	walkBreadthFirst(root, maxDepth, maxNodes, func(n *Node, _ struct{}) struct{} { in[n] = true; return struct{}{} })
	out := make([]*Node, 0, len(in))
	for _, n := range snap.nodes {
		if in[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// nodeNotFound is the failure of a rootNodeId that is not in the capture.
func nodeNotFound(snap *snapshot, id string) error {
	return toolError(CodeNodeNotFound, fmt.Sprintf("node %q is not in the captured tree", id),
		map[string]any{"nodeId": id, "snapshotId": snap.id, "revision": snap.revision})
}

// query runs f over nodes (in pre-order) of snap, keeping at most max matches.
func (snap *snapshot) query(nodes []*Node, f *filter, max int, d detail) *queryResult {
	r := &queryResult{Source: snap.source, SnapshotID: snap.id, Revision: snap.revision, Matches: []match{}}
	for _, n := range nodes {
		if !f.matches(n) {
			continue
		}
		r.TotalMatches++
		if len(r.Matches) < max {
			r.Matches = append(r.Matches, match{
				nodeJSON:  n.toJSON(d),
				Reference: Reference{Source: snap.source, SnapshotID: snap.id, Revision: snap.revision, NodeID: n.ID},
			})
		}
	}
	r.Count = len(r.Matches)
	r.Truncated = r.TotalMatches > r.Count
	return r
}
