package ui

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
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

// matches reports whether n satisfies every field of f, as the official SDKs compare:
// the node id exactly; automation id, role and action case-insensitively; type and
// textContains as case-insensitive substrings (of the type name; of the label or the
// text, never a secure node's text).
func (f *filter) matches(n *Node) bool {
	switch {
	case f.NodeID != "" && n.ID != f.NodeID,
		f.AutomationID != "" && !strings.EqualFold(n.AutomationID, f.AutomationID),
		f.Role != "" && !strings.EqualFold(n.Role, f.Role),
		f.Type != "" && !containsFold(n.Type, f.Type),
		f.Action != "" && !n.supportsFold(f.Action),
		f.Visible != nil && *f.Visible == n.Hidden,
		f.Enabled != nil && *f.Enabled == n.Disabled:
		return false
	}
	if f.TextContains != "" {
		return containsFold(n.Label, f.TextContains) || !n.Secure && containsFold(n.Text, f.TextContains)
	}
	return true
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// supportsFold reports whether the node lists action, compared case-insensitively.
func (n *Node) supportsFold(action string) bool {
	for _, a := range n.Actions {
		if strings.EqualFold(a, action) {
			return true
		}
	}
	return false
}

// queryResult is the result of ui.query_nodes, and the "query" of ui.wait. Each match is
// the node in the compact v2 node form (without children) plus its resolved type name and
// its reference, as the official SDKs answer.
type queryResult struct {
	Source       string           `json:"source"`
	SnapshotID   string           `json:"snapshotId"`
	Revision     int64            `json:"revision"`
	Count        int              `json:"count"`
	TotalMatches int              `json:"totalMatches"`
	Truncated    bool             `json:"truncated"`
	Matches      []jsontext.Value `json:"matches"`
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
	r := &queryResult{Source: snap.source, SnapshotID: snap.id, Revision: snap.revision, Matches: []jsontext.Value{}}
	for _, n := range nodes {
		if !f.matches(n) {
			continue
		}
		r.TotalMatches++
		if len(r.Matches) < max {
			r.Matches = append(r.Matches, snap.match(n, d))
		}
	}
	r.Count = len(r.Matches)
	r.Truncated = r.TotalMatches > r.Count
	return r
}

// match writes one node with its type name and reference.
func (snap *snapshot) match(n *Node, d detail) jsontext.Value {
	b := uitree.AppendNode(nil, n.treeNode(d), snap.types, true)
	b = b[:len(b)-1] // the node's closing brace: the reference follows
	b = append(b, `,"reference":`...)
	ref, _ := wire.Marshal(snap.reference(n.ID)) // plain struct: never fails
	b = append(b, ref...)
	return append(b, '}')
}
