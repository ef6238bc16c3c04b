package ui

import (
	"context"
	"time"
)

// TapRecorder receives the taps ui.perform_action performs, as the official SDKs report
// the touches of their screens: the point tapped (the node's centre, in the tree's
// points), the screen's size, whether the node is a secure entry, and the visual tree the
// tap was resolved on (compact v2, with bounds). Package app/telemetry's *Telemetry is
// one: it streams the tree and, unless the node is secure, the touch (see its Options),
// so that a recording shows the taps an agent made. RecordTap must not block.
type TapRecorder interface {
	RecordTap(at time.Time, x, y, width, height float64, secure bool, tree []byte)
}

// TapTreeRecorder is a TapRecorder that also takes the visual tree captured once the
// action is done, as the official SDKs send a tree on touch up as well as on touch down:
// the screen a tap leads to is then known to a recording from the moment it shows (the
// sanitize policy and --mask-sensitive box frames by the latest tree). Package
// app/telemetry's *Telemetry is one. RecordTapUp must not block.
type TapTreeRecorder interface {
	TapRecorder
	RecordTapUp(at time.Time, tree []byte)
}

// tapActions are the actions that touch the node they act on.
var tapActions = map[string]bool{ActionTap: true, ActionToggle: true, ActionSelect: true, ActionFocus: true, "selectTab": true}

// recordTap reports a performed action that touches the node to Options.Taps, with the
// tree it was resolved on; a TapTreeRecorder gets the screen's tree after the action too,
// captured apart from the snapshots the tools hand out (the caller's references stay valid).
func (t *toolkit) recordTap(ctx context.Context, snap *snapshot, n *Node, action string) {
	if t.taps == nil || !tapActions[action] || n.Bounds == nil || snap.root.Bounds == nil {
		return
	}
	b, screen := n.Bounds, snap.root.Bounds
	t.taps.RecordTap(t.now(), b.X+b.Width/2, b.Y+b.Height/2, screen.Width, screen.Height, n.Secure, t.tapTree(snap))
	up, ok := t.taps.(TapTreeRecorder)
	if !ok {
		return
	}
	root, err := t.screen.Capture(ctx)
	if err != nil {
		return // the action is done; only the recording misses the tree after it
	}
	after, err := t.store.detached(t.source, root, t.now())
	if err != nil {
		return
	}
	up.RecordTapUp(after.capturedAt, t.tapTree(after))
}

// tapTree is a snapshot's whole tree with bounds, as compact v2.
func (t *toolkit) tapTree(snap *snapshot) []byte {
	root, count, truncated := project(snap.root, maxTreeDepth, len(snap.nodes), detail{bounds: true})
	return compact(t.treeOf(snap, root, count, truncated, ""))
}
