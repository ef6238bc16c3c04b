// Package uiauto is the host's UI automation: one operation that captures an app's screen
// with ui.get_visual_tree, resolves a selector on the host (package wire/uitree, the
// official selector semantics) and acts with ui.perform_action on that snapshot's
// snapshotId and node id — so that the CLI (ansight ui, app interact), the player, the
// MCP bridge, flows and the fleet all drive a screen the same way.
//
// [Run] takes a [Request] (snapshot, find, tap, type, swipe, pinch, back, wait, assert;
// the official CLI's verbs, flags and defaults) and a [CallFunc] that calls one of the
// app's tools, and answers an [Outcome]: whether it succeeded, a one-line message, a code
// when it did not, and the operation's result (ansight.ui-operation/v1's "result").
//
// # Beyond the official host
//
// The official host delivers actions through a simulator it drives, so a desktop app gets
// none; here every action is the app's own ui.perform_action. Actions wait for their
// target to become actionable (shown, enabled, in the viewport, supporting the action)
// for up to TimeoutMs (default 5000), capturing again every PollMs, where the official
// verbs make one attempt; a stale reference (the screen changed between capture and
// action) is resolved again once. A selector that matches nothing reports the nearest
// candidates and what each one lacks.
//
// Swipe, pinch and back exist where the app's tree can express them: a node that supports
// scroll or swipe (ui.perform_action "scroll" with the direction as its value), one that
// supports pinch, a node marked navigatesBack; otherwise the outcome names what the app
// lacks.
package uiauto
