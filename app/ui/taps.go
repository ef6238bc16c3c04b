package ui

import "time"

// TapRecorder receives the taps ui.perform_action performs, as the official SDKs report
// the touches of their screens: the point tapped (the node's centre, in the tree's
// points), the screen's size, whether the node is a secure entry, and the visual tree the
// tap was resolved on (compact v2, with bounds). Package app/telemetry's *Telemetry is
// one: it streams the tree and, unless the node is secure, the touch (see its Options),
// so that a recording shows the taps an agent made. RecordTap must not block.
type TapRecorder interface {
	RecordTap(at time.Time, x, y, width, height float64, secure bool, tree []byte)
}

// tapActions are the actions that touch the node they act on.
var tapActions = map[string]bool{ActionTap: true, ActionToggle: true, ActionSelect: true, ActionFocus: true, "selectTab": true}

// recordTap reports a performed action that touches the node to Options.Taps.
func (t *toolkit) recordTap(snap *snapshot, n *Node, action string) {
	if t.taps == nil || !tapActions[action] || n.Bounds == nil || snap.root.Bounds == nil {
		return
	}
	root, count, truncated := project(snap.root, maxTreeDepth, len(snap.nodes), detail{bounds: true})
	tree := compact(t.treeOf(snap, root, count, truncated, ""))
	b, screen := n.Bounds, snap.root.Bounds
	t.taps.RecordTap(t.now(), b.X+b.Width/2, b.Y+b.Height/2, screen.Width, screen.Height, n.Secure, tree)
}
