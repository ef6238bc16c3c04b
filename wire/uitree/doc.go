// Package uitree is the one model of a captured visual tree: what an app's
// ui.get_visual_tree (and the official SDKs' framework trees) answer, read into one [Tree]
// whichever form arrived, and written back in the official compact v2 form.
//
// Everything downstream — the host's selector resolution, the CLI's ui verbs and app
// interact, the player's tree, the MCP bridge's snapshot, recordings and flows — reads
// trees through [Parse] and never looks at the JSON itself, so none of them knows whether
// an app sent compact v2 or the legacy per-node form.
//
// # Forms
//
// Compact v2 (format ending ".compact.v2") names each node's type by an integer typeId
// into the payload's types registry. The legacy form, which older SDKs still send, has a
// "type" string on every node and no format. [Parse] reads both, with the official host's
// lenient readings (see [Node] for each field's sources): the first non-blank automation
// id of seven members, text from seven members, role from role or props or inferred from
// the type name, actions from supportedActions or inferred from the role, visible and
// enabled from explicit booleans, else the flags bits the payload declares, else true —
// "effectively" visible or enabled only with every ancestor — bounds in four shapes, the
// viewport from coordinateSpace, root bounds or the union of node bounds, and the SDKs'
// own overlay surfaces left out of every enumeration.
//
// [Validate] is the official host's gate, rule by rule ([Rules]): a payload it refuses
// makes the official CLI's ui find/tap/type/wait/assert and app interact fail with "not a
// valid compact v2 payload". [Append] writes a tree that passes it.
//
// # Selectors
//
// [Selector] and [Tree.Resolve] are the official selector semantics, shared by every
// client: exact matching unless Contains (the official find's default), case-insensitive
// unless CaseSensitive, every given criterion must hold, duplicates by node id dropped,
// matches ordered action-ready first, then in the active page, then with usable bounds,
// then in document order, before Index picks one. A selector that matches nothing gets
// [Tree.Nearest]: the nodes closest to it and what each one lacks. [Tree.HitTest] resolves
// a point (the coordinate forms of swipe and app interact).
//
// # Bounds
//
// Parse refuses input above [MaxBytes], nesting deeper than [MaxDepth] and more than
// [MaxNodes] nodes, duplicate member names, and a member that differs from a known one
// only by case (the wire package's strict rule: a second reader must not see another
// value). Unknown members are skipped: SDKs add their own.
package uitree
