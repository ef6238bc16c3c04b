package ui

import (
	"context"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// CodeNodeIDRequired: ui.inspect_node got no node id (the official SDKs' code).
const CodeNodeIDRequired wire.Code = "node_id_required"

type inspectArgs struct {
	Reference  *Reference `json:"reference,omitzero"`
	Source     string     `json:"source,omitzero"`
	SnapshotID string     `json:"snapshotId,omitzero"`
	NodeID     string     `json:"nodeId,omitzero"`
	// ID is the official SDKs' alias of nodeId.
	ID                 string `json:"id,omitzero"`
	IncludeAncestors   bool   `json:"includeAncestors,omitzero"`
	IncludeDescendants bool   `json:"includeDescendants,omitzero"`
	// IncludeProperties defaults to true, as in the official SDKs.
	IncludeProperties *bool `json:"includeProperties,omitzero"`
}

type inspectResult struct {
	Format        string           `json:"format"`
	Platform      string           `json:"platform"`
	Source        string           `json:"source"`
	Adapter       string           `json:"adapter"`
	CapturedAtUtc time.Time        `json:"capturedAtUtc"`
	SnapshotID    string           `json:"snapshotId"`
	Revision      int64            `json:"revision"`
	Reference     Reference        `json:"reference"`
	Types         []string         `json:"types"`
	Node          jsontext.Value   `json:"node"`
	Ancestors     []jsontext.Value `json:"ancestors,omitzero"`
	Descendants   []jsontext.Value `json:"descendants,omitzero"`
}

// inspectNode describes one node of the latest snapshot (a fresh capture when no
// snapshotId is given): the node in the compact v2 form with its type registry, and on
// request its ancestors (root first) and descendants (pre-order), each without children.
// A snapshotId that is not the latest, or a node not in it, is a stale reference, as
// for ui.perform_action.
func (t *toolkit) inspectNode(ctx context.Context, a inspectArgs) (*inspectResult, error) {
	ref := Reference{Source: a.Source, SnapshotID: a.SnapshotID, NodeID: a.NodeID}
	if a.Reference != nil {
		ref = fill(ref, *a.Reference)
	}
	if ref.NodeID == "" {
		ref.NodeID = a.ID
	}
	if ref.NodeID = strings.TrimSpace(ref.NodeID); ref.NodeID == "" {
		return nil, toolError(CodeNodeIDRequired, "ui.inspect_node needs a nodeId (or a reference)", nil)
	}
	if err := t.checkSource(ref.Source); err != nil {
		return nil, err
	}
	ref.Source = t.source
	if ref.SnapshotID == "" {
		snap, err := t.capture(ctx, ref.Source)
		if err != nil {
			return nil, err
		}
		ref.SnapshotID = snap.id
	}
	if snap, ok := t.store.get(ref.SnapshotID); ok && (a.Reference == nil || a.Reference.SnapshotID != ref.SnapshotID) {
		ref.Revision = snap.revision // a bare snapshotId names its own revision
	}
	snap, node, err := t.store.resolve(ref)
	if err != nil {
		return nil, err
	}
	d := detail{bounds: true, properties: a.IncludeProperties == nil || *a.IncludeProperties}
	write := func(n *Node) jsontext.Value { return uitree.AppendNode(nil, n.treeNode(d), snap.types, false) }
	r := &inspectResult{
		Format: uitree.FormatNative, Platform: t.platform, Source: snap.source, Adapter: Adapter,
		CapturedAtUtc: snap.capturedAt, SnapshotID: snap.id, Revision: snap.revision, Reference: snap.reference(node.ID),
		Types: snap.types, Node: write(node),
	}
	if a.IncludeAncestors {
		r.Ancestors = []jsontext.Value{}
		for _, n := range snap.path(node) {
			r.Ancestors = append(r.Ancestors, write(n))
		}
	}
	if a.IncludeDescendants {
		r.Descendants = []jsontext.Value{}
		var walk func(n *Node)
		walk = func(n *Node) {
			for _, c := range n.Children {
				r.Descendants = append(r.Descendants, write(c))
				walk(c)
			}
		}
		walk(node)
	}
	return r, nil
}

// fill completes ref with the reference object's members it lacks (explicit arguments
// win, as in the official SDKs).
func fill(ref, from Reference) Reference {
	if ref.Source == "" {
		ref.Source = from.Source
	}
	if ref.SnapshotID == "" {
		ref.SnapshotID, ref.Revision = from.SnapshotID, from.Revision
	}
	if ref.NodeID == "" {
		ref.NodeID = from.NodeID
	}
	return ref
}

// path returns the ancestors of n in the snapshot, root first.
func (snap *snapshot) path(n *Node) []*Node {
	var find func(at *Node, trail []*Node) []*Node
	find = func(at *Node, trail []*Node) []*Node {
		if at == n {
			return trail
		}
		trail = append(trail, at)
		for _, c := range at.Children {
			if p := find(c, trail); p != nil {
				return p
			}
		}
		return nil
	}
	return find(snap.root, nil) // n is in the snapshot: the root's trail is found
}
