package uitree

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Formats of a tree's "format" member.
const (
	// FormatNative is what ui.get_visual_tree answers in the official SDKs and ours.
	FormatNative = "ansight.native.visual-tree.compact.v2"
	// FormatGeneric is the official host's name for a compact v2 tree of unknown origin.
	FormatGeneric = "ansight.visual-tree.compact.v2"
	// CompactSuffix ends every compact v2 format; the official gate checks only it.
	CompactSuffix = ".compact.v2"
)

// Bounds of what Parse accepts.
const (
	// MaxBytes is the largest payload Parse reads.
	MaxBytes = 64 << 20
	// MaxDepth is the deepest JSON nesting Parse reads (the protocol's limit): a node
	// level costs two (the node object and its children array).
	MaxDepth = 256
	// MaxNodes is the most nodes Parse reads, the official SDKs' maxNodes bound.
	MaxNodes = 100000
)

// Tree is one captured visual tree.
type Tree struct {
	// Format is the payload's format ("" when the app sent none: the legacy form).
	Format string
	// Platform ("android", "ios", "linux", …), Source ("native", "maui", …) and Adapter
	// ("android.views", "apple.uikit", "go.ui") as the app reported them.
	Platform, Source, Adapter string
	// CapturedAt is capturedAtUtc read leniently; zero when absent or unreadable.
	CapturedAt time.Time
	// SnapshotID and Revision identify the capture for node references ("" and 0 when the
	// app has no snapshot store).
	SnapshotID string
	Revision   int64
	// NodeCount is the nodes the payload holds (as the app reported it, else counted);
	// TotalNodes the nodes of the whole capture when the app cut the tree (0: unknown);
	// Truncated that the app left nodes out.
	NodeCount, TotalNodes int
	Truncated             bool
	// CoordinateSpace is the payload's coordinateSpace (nil when absent).
	CoordinateSpace *Rect
	// RootScope and CurrentPageID are a framework tree's page context (MAUI's rootScope
	// and currentPage.id); they order selector matches in the active page first.
	RootScope, CurrentPageID string
	// Root is the root node (never nil in a parsed tree).
	Root *Node

	nodes       []*Node // every node in pre-order, injected overlay subtrees included
	pageContext bool    // a framework page context orders matches (see Find)
}

// Rect is a rectangle in the tree's coordinates (points, origin top-left).
type Rect struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Node is one element of a tree. Fields hold the official host's lenient readings of
// the node's members, so that a node reads the same from every SDK.
type Node struct {
	// ID is the node's id ("" when the app gave none).
	ID string
	// Type is the type name: types[typeId] in compact v2, the node's "type" in the
	// legacy form.
	Type string
	// TypeID is the node's typeId (-1 when it had none).
	TypeID int
	// AutomationID is the first non-blank of automationId, accessibilityIdentifier,
	// testID, nativeID, properties.accessibilityIdentifier, props.testID, props.nativeID.
	AutomationID string
	// Label is the node's label member.
	Label string
	// VisualText is visual.text: the text the node displays (a placeholder for an empty
	// field), as the official SDKs report it.
	VisualText string
	// Text is what a text selector compares: the first non-blank of text, label, value,
	// visual.text, visual.value, props.accessibilityLabel, props.title.
	Text string
	// Value is what an asserted value compares: the first non-blank of value,
	// visual.value, properties.value, props.value.
	Value string
	// Role is role or props.accessibilityRole lower-cased, else inferred from Type.
	Role string
	// Actions are supportedActions (de-duplicated case-insensitively), else inferred from
	// Role.
	Actions []string
	// Visible and Enabled are the node's own state: an explicit boolean, else its flags
	// bit, else true. See [Node.Shown] and [Node.Usable] for the state with ancestors.
	Visible, Enabled bool
	// CurrentPage and ActivePage are a framework page's state (explicit, else flag bit,
	// else false).
	CurrentPage, ActivePage bool
	// Focusable and Focused as reported.
	Focusable, Focused bool
	// Checked is the state of a checkable node (nil when not reported).
	Checked *bool
	// Secure marks a password or other secure entry (isPassword, isSecure, secureTextEntry,
	// password, props.secureTextEntry): its value is never in the tree.
	Secure bool
	// NavigatesBack marks the node that navigates back (a navigation bar's back button).
	NavigatesBack bool
	// Bounds is the node's frame (nil when it has none or none readable).
	Bounds *Rect
	// Z is the node's stacking priority among its siblings (0 when not reported).
	Z float64
	// Opacity is visual.opacity (nil when not reported: opaque); Foreground and
	// Background the visual colours as reported ("#AARRGGBB").
	Opacity                *float64
	Foreground, Background string
	// ChildCount is childCount as reported (children the app left out included), else
	// len(Children).
	ChildCount int
	// Stub marks a node the app cut for its node budget ({id, typeId, truncated:true}).
	Stub bool
	// Properties is the node's properties object as sent (nil when none).
	Properties jsontext.Value
	// Children are the node's children in order.
	Children []*Node
	// Parent is the node's parent (nil for the root).
	Parent *Node

	// Derived when the tree is read: pre-order index, depth below the root, the state with
	// ancestors, and whether the node is in an SDK's injected overlay subtree.
	index, depth   int
	shown, usable  bool
	injected       bool
	inActivePage   bool
	flags          int64 // the flags member (for re-writing); flagsSet says it was there
	flagsSet       bool
	explicitState  uint8 // which of visible, enabled were explicit booleans
	textMember     string
	valueMember    string
	visualValue    string
	explicitAction bool // supportedActions was present
}

// Depth is the node's depth below the root (0 for the root).
func (n *Node) Depth() int { return n.depth }

// Index is the node's position in the tree's pre-order.
func (n *Node) Index() int { return n.index }

// Shown reports whether the node and every ancestor are visible (the official
// "effectively visible").
func (n *Node) Shown() bool { return n.shown }

// Usable reports whether the node and every ancestor are enabled (the official
// "effectively enabled").
func (n *Node) Usable() bool { return n.usable }

// Injected reports whether the node is (or is inside) an SDK's own overlay surface, which
// no selector or enumeration sees.
func (n *Node) Injected() bool { return n.injected }

// Supports reports whether the node lists action (case-insensitively, as the official
// host compares).
func (n *Node) Supports(action string) bool {
	for _, a := range n.Actions {
		if equalFold(a, action) {
			return true
		}
	}
	return false
}

// Ancestors returns the node's ancestors, nearest first.
func (n *Node) Ancestors() []*Node {
	var out []*Node
	for p := n.Parent; p != nil; p = p.Parent {
		out = append(out, p)
	}
	return out
}

// Nodes returns the tree's nodes in pre-order, without the SDKs' overlay surfaces: what
// selectors and the official host enumerate.
func (t *Tree) Nodes() []*Node {
	out := make([]*Node, 0, len(t.nodes))
	for _, n := range t.nodes {
		if !n.injected {
			out = append(out, n)
		}
	}
	return out
}

// All returns every node in pre-order, overlay surfaces included (what a tree view shows).
func (t *Tree) All() []*Node { return t.nodes }

// Node returns the node with id (the first in pre-order), or nil.
func (t *Tree) Node(id string) *Node {
	for _, n := range t.nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// Legacy reports whether the tree arrived in the legacy form (no compact v2 format;
// nodes name their type with a "type" string).
func (t *Tree) Legacy() bool { return !t.Compact() }

// Compact reports whether the tree arrived in compact v2 (its format ends with
// CompactSuffix); whether it passes the official gate is [Validate]'s answer.
func (t *Tree) Compact() bool { return hasSuffix(t.Format, CompactSuffix) }

// Center is the rectangle's centre.
func (r Rect) Center() (x, y float64) { return r.X + r.Width/2, r.Y + r.Height/2 }

// Contains reports whether the point is inside the rectangle (edges included).
func (r Rect) Contains(x, y float64) bool {
	return x >= r.X && y >= r.Y && x <= r.X+r.Width && y <= r.Y+r.Height
}

// Usable reports whether the rectangle has a positive size.
func (r Rect) Usable() bool { return r.Width > 0 && r.Height > 0 }

// Intersect returns the intersection of two rectangles, and false when they do not
// overlap (touching edges do not).
func (r Rect) Intersect(o Rect) (Rect, bool) {
	left, top := max(r.X, o.X), max(r.Y, o.Y)
	right, bottom := min(r.X+r.Width, o.X+o.Width), min(r.Y+r.Height, o.Y+o.Height)
	if right <= left || bottom <= top {
		return Rect{}, false
	}
	return Rect{left, top, right - left, bottom - top}, true
}

// Viewport is the area the screen shows: the payload's coordinateSpace, else the root's
// bounds, else the union of every node's positive-size bounds; false when the tree has
// no geometry at all.
func (t *Tree) Viewport() (Rect, bool) {
	if t.CoordinateSpace != nil {
		return *t.CoordinateSpace, true
	}
	if t.Root != nil && t.Root.Bounds != nil {
		return *t.Root.Bounds, true
	}
	var u Rect
	found := false
	for _, n := range t.nodes {
		if n.Bounds == nil || !n.Bounds.Usable() {
			continue
		}
		b := *n.Bounds
		if !found {
			u, found = b, true
			continue
		}
		right, bottom := max(u.X+u.Width, b.X+b.Width), max(u.Y+u.Height, b.Y+b.Height)
		u.X, u.Y = min(u.X, b.X), min(u.Y, b.Y)
		u.Width, u.Height = right-u.X, bottom-u.Y
	}
	return u, found
}
