package ui

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// Reference addresses one node of one snapshot: the only way ui.perform_action accepts a
// target. It is valid only while its snapshot is the latest capture of its source.
type Reference struct {
	Source     string `json:"source"`
	SnapshotID string `json:"snapshotId"`
	Revision   int64  `json:"revision"`
	NodeID     string `json:"nodeId"`
}

// Bounds of what the store accepts and keeps.
const (
	// retainedSnapshots is how many recent captures (all sources together) stay readable
	// for ui.query_nodes with a snapshotId.
	retainedSnapshots = 32
	// maxTreeDepth bounds a captured tree's depth: every level costs two JSON nesting
	// levels (object, children array) and the protocol's decoders stop at 256.
	maxTreeDepth = 100
)

// snapshot is one captured tree, copied and indexed.
type snapshot struct {
	id         string
	source     string
	revision   int64
	capturedAt time.Time
	root       *Node
	nodes      []*Node          // pre-order
	byID       map[string]*Node // every node of the tree
	types      []string         // the type registry of the whole tree, first-seen pre-order
}

// reference is the reference of node id in the snapshot.
func (snap *snapshot) reference(id string) Reference {
	return Reference{Source: snap.source, SnapshotID: snap.id, Revision: snap.revision, NodeID: id}
}

// store keeps the recent snapshots and decides whether a reference is still valid.
// Revisions come from one counter, so they grow monotonically for every source.
type store struct {
	maxNodes int
	ids      func() string // the random part of snapshot ids

	mu       sync.Mutex
	revision int64
	recent   []*snapshot          // oldest first, at most retainedSnapshots
	latest   map[string]*snapshot // by source
}

func newStore(maxNodes int, ids func() string) *store {
	if ids == nil {
		ids = randomHex
	}
	return &store{maxNodes: maxNodes, ids: ids, latest: make(map[string]*snapshot)}
}

// randomHex returns 32 random lower-case hex digits: snapshot ids cannot be guessed, so a
// reference is always one the app handed out.
func randomHex() string {
	var random [16]byte
	_, _ = rand.Read(random[:]) // never fails (crypto/rand panics on a broken system source)
	return hex.EncodeToString(random[:])
}

// add copies and indexes root as the newest snapshot of source. The tree is checked before
// anything is recorded: ids must be non-empty and unique, depth and size bounded.
func (s *store) add(source string, root *Node, at time.Time) (*snapshot, error) {
	snap, err := s.build(source, root, at)
	if err != nil {
		return nil, err
	}
	suffix := s.ids()

	s.mu.Lock()
	defer s.mu.Unlock()
	s.revision++
	snap.revision = s.revision
	snap.id = source + ":" + strconv.FormatInt(snap.revision, 10) + ":" + suffix
	if len(s.recent) == retainedSnapshots {
		copy(s.recent, s.recent[1:])
		s.recent = s.recent[:retainedSnapshots-1]
	}
	s.recent = append(s.recent, snap)
	s.latest[source] = snap
	return snap, nil
}

// build copies and indexes root as a snapshot of source, not yet in the store.
func (s *store) build(source string, root *Node, at time.Time) (*snapshot, error) {
	if root == nil {
		return nil, errors.New("ui: screen captured no root node")
	}
	snap := &snapshot{source: source, capturedAt: at.UTC(), byID: make(map[string]*Node)}
	var err error
	if snap.root, err = snap.copyTree(root, 1, s.maxNodes); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, n := range snap.nodes {
		if name := uitree.TypeName(n.Type); !seen[name] {
			seen[name] = true
			snap.types = append(snap.types, name)
		}
	}
	return snap, nil
}

// detached is a snapshot of source that the store does not keep: a capture for
// telemetry (the tree after a tap), which must not supersede the snapshot the caller's
// references point at. It has the store's current revision and an id of its own.
func (s *store) detached(source string, root *Node, at time.Time) (*snapshot, error) {
	snap, err := s.build(source, root, at)
	if err != nil {
		return nil, err
	}
	suffix := s.ids()
	s.mu.Lock()
	snap.revision = s.revision
	s.mu.Unlock()
	snap.id = source + ":" + strconv.FormatInt(snap.revision, 10) + ":" + suffix
	return snap, nil
}

// copyTree deep-copies n into the snapshot, indexing every node.
func (snap *snapshot) copyTree(n *Node, depth, maxNodes int) (*Node, error) {
	switch {
	case n == nil:
		return nil, errors.New("ui: captured tree contains a nil node")
	case depth > maxTreeDepth:
		return nil, fmt.Errorf("ui: captured tree is deeper than %d levels", maxTreeDepth)
	case n.ID == "":
		return nil, fmt.Errorf("ui: captured node of type %q has no id", n.Type)
	case len(snap.nodes) >= maxNodes:
		return nil, fmt.Errorf("ui: captured tree has more than %d nodes", maxNodes)
	}
	if _, dup := snap.byID[n.ID]; dup {
		return nil, fmt.Errorf("ui: captured tree has two nodes with id %q", n.ID)
	}
	c := *n
	c.Actions = append([]string(nil), n.Actions...)
	if n.Checked != nil {
		v := *n.Checked
		c.Checked = &v
	}
	if n.Bounds != nil {
		b := *n.Bounds
		c.Bounds = &b
	}
	c.Properties = maps.Clone(n.Properties)
	c.Children = nil
	snap.byID[c.ID] = &c
	snap.nodes = append(snap.nodes, &c)
	if len(n.Children) > 0 {
		c.Children = make([]*Node, 0, len(n.Children))
		for _, child := range n.Children {
			cc, err := snap.copyTree(child, depth+1, maxNodes)
			if err != nil {
				return nil, err
			}
			c.Children = append(c.Children, cc)
		}
	}
	return &c, nil
}

// get returns a retained snapshot by id.
func (s *store) get(id string) (*snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.retained(id)
	return snap, snap != nil
}

// retained returns the retained snapshot with id, or nil. Callers hold mu.
func (s *store) retained(id string) *snapshot {
	for _, snap := range s.recent {
		if snap.id == id {
			return snap
		}
	}
	return nil
}

// latestOf is the newest snapshot of source, nil before the first.
func (s *store) latestOf(source string) *snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest[source]
}

// latestRevision is the revision of the newest snapshot of source, 0 before the first.
func (s *store) latestRevision(source string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if snap := s.latest[source]; snap != nil {
		return snap.revision
	}
	return 0
}

// Why a reference is stale (details.reason of stale_node_reference).
const (
	staleUnknownSnapshot = "snapshot_unknown"    // never issued, expired, or of another source
	staleSuperseded      = "snapshot_superseded" // a newer capture of the source exists
	staleNodeMissing     = "node_not_in_snapshot"
	staleNodeGone        = "node_gone" // the screen no longer has the node
)

// resolve returns the node a reference points at, or a stale_node_reference error when
// the reference is not valid any more.
func (s *store) resolve(ref Reference) (*snapshot, *Node, error) {
	s.mu.Lock()
	latest := s.latest[ref.Source]
	reason := ""
	switch {
	case latest == nil:
		reason = staleUnknownSnapshot
	case ref.SnapshotID != latest.id:
		reason = staleUnknownSnapshot
		if snap := s.retained(ref.SnapshotID); snap != nil && snap.source == ref.Source {
			reason = staleSuperseded
		}
	case ref.Revision != latest.revision:
		// The id names the latest snapshot but the revision does not: a forged or
		// mangled reference. Treat it as unknown rather than guess which half is right.
		reason = staleUnknownSnapshot
	case latest.byID[ref.NodeID] == nil:
		reason = staleNodeMissing
	}
	s.mu.Unlock()
	if reason != "" {
		return nil, nil, s.stale(ref, reason)
	}
	return latest, latest.byID[ref.NodeID], nil
}

// staleDetails is the details object of stale_node_reference.
type staleDetails struct {
	Source         string `json:"source"`
	SnapshotID     string `json:"snapshotId"`
	NodeID         string `json:"nodeId,omitzero"`
	LatestRevision int64  `json:"latestRevision"`
	Reason         string `json:"reason"`
	RefreshWith    string `json:"refreshWith"`
}

// stale builds the stale_node_reference tool error for ref.
func (s *store) stale(ref Reference, reason string) error {
	d := staleDetails{
		Source:         ref.Source,
		SnapshotID:     ref.SnapshotID,
		NodeID:         ref.NodeID,
		LatestRevision: s.latestRevision(ref.Source),
		Reason:         reason,
		RefreshWith:    QueryNodesToolID,
	}
	var msg string
	switch reason {
	case staleSuperseded:
		msg = fmt.Sprintf("snapshot %q has been superseded by revision %d of source %q", ref.SnapshotID, d.LatestRevision, ref.Source)
	case staleNodeMissing:
		msg = fmt.Sprintf("node %q is not in snapshot %q", ref.NodeID, ref.SnapshotID)
	case staleNodeGone:
		msg = fmt.Sprintf("node %q is no longer on screen", ref.NodeID)
	default:
		msg = fmt.Sprintf("snapshot %q is unknown or expired for source %q", ref.SnapshotID, ref.Source)
	}
	return toolError(wire.CodeStaleNodeReference, msg+"; capture a fresh snapshot with "+QueryNodesToolID, d)
}

// toolError builds a tool failure with a details object.
func toolError(code wire.Code, msg string, details any) error {
	return app.ToolErrorDetails(code, msg, details)
}
