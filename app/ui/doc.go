// Package ui is the SDK's standard UI toolkit: the official SDKs' UI tools
// (ui.get_visual_tree, ui.query_nodes, ui.inspect_node, ui.perform_action, ui.wait,
// ui.get_screenshot, and the overlay tools ui.show_overlay, ui.update_overlay,
// ui.remove_overlay, ui.clear_overlays, ui.get_overlay, ui.query_overlays) implemented once
// over a small [Screen] interface, so that any Go UI — a real framework adapter or a
// simulated screen — gets the same ids, policies, argument and result shapes, and the
// same snapshot-scoped node references.
//
// # Trees
//
// ui.get_visual_tree answers the official compact v2 form (package wire/uitree writes
// it): a format, a types registry and an integer typeId on every node, explicit visible
// and enabled booleans, so the official host's UI automation (its ui find, wait, assert
// and app interact) reads a Go app's screen as it reads an Android or iOS one.
// ui.query_nodes matches are the same nodes without children plus their resolved type
// name and a reference. A node marked [Node].Secure publishes its label only, never its
// text.
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
// # Overlays
//
// The overlay tools draw input-transparent rectangles over the screen's frames, to show a
// person watching what an agent points at. They are drawn into screenshots always, and
// into the live screen and recordings when the app streams its screen through the same
// [OverlayScreen] it registers. They expire lazily: the toolkit holds no goroutine.
//
// # Adopting the toolkit
//
// Implement [Screen] (Capture, Perform, Render) and call [Register] once on the app before
// serving. The toolkit validates references and supported actions before Perform is called,
// so Perform only has to apply an action to a live node. A Screen whose drawing lags its
// state also implements [UpdateAwaiter]; one that knows its nodes' computed styles reports
// them in [Node].Properties.
//
// # Arguments the official host and SDKs use
//
// The toolkit declares, and honours, every argument the official SDKs' tools take and the
// official host sends. The official host adds defaults to the calls it makes:
// ui.get_visual_tree gets maxDepth 32 and includeComputedStyles false (true publishes each
// node's Properties), ui.get_screenshot gets format jpeg (real JPEG), quality 80, maxWidth
// 1440 from `app call` (1280 for the screenshots it takes as evidence) and
// afterScreenUpdates false (true waits for the Screen's pending updates).
// ui.get_visual_tree, ui.query_nodes and ui.wait take the official capture options
// (rootNodeId, maxDepth, maxNodes limit the search; root names a root scope — window,
// currentPage, rootPage — and a Screen's window is its current page, so every scope is the
// same tree; includeInactivePages has no inactive pages to include), ui.wait ignores a
// snapshotId as the official SDKs do, and ui.perform_action takes its target as a
// reference or as a bare snapshotId and nodeId and its value as value, index or checked.
// Like the official SDKs, the toolkit reads JSON null as an absent argument and an empty
// filter string as no filter, and clamps numbers that are out of range instead of refusing
// them. Schemas stay closed: an argument no SDK knows is refused with
// additional_property_not_allowed, so a misspelt name never goes unnoticed.
package ui
