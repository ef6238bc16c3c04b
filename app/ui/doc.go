// Package ui is the SDK's standard UI toolkit: the five UI tools of the protocol
// (ui.get_visual_tree, ui.query_nodes, ui.perform_action, ui.wait, ui.get_screenshot)
// implemented once over a small [Screen] interface, so that any Go UI — a real framework
// adapter or a simulated screen — gets the same ids, policies, argument and result shapes,
// and the same snapshot-scoped node references.
//
// # Snapshots and references
//
// Every capture of the visual tree becomes a snapshot with an id "<source>:<revision>:<hex>"
// and a revision that only grows. Nodes are addressed by a [Reference] {source, snapshotId,
// revision, nodeId}. A reference is honoured only while its snapshot is the latest one for
// its source and the node is still in it (and still exists on the live screen); otherwise
// the action fails with stale_node_reference, whose details tell the caller to refresh with
// ui.query_nodes. This makes "act on what you looked at" explicit: an agent can never tap a
// node it has not seen in the current state of the screen.
//
// # Adopting the toolkit
//
// Implement [Screen] (Capture, Perform, Render) and call [Register] once on the app before
// serving. The toolkit validates references and supported actions before Perform is called,
// so Perform only has to apply an action to a live node.
package ui
