package ui

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// Node is one element of a captured UI tree, as a [Screen] reports it. The toolkit copies
// the tree it receives, so a Screen may build it from shared state and reuse nothing.
//
// The Go zero values are the common case: a node is visible and enabled unless Hidden or
// Disabled says otherwise (on the wire they become "visible" and "enabled").
type Node struct {
	// ID identifies the node within one capture; it must be non-empty and unique in the
	// tree. Stable ids across captures (e.g. "list.search") make references survive
	// re-captures of an unchanged screen, but the toolkit never relies on it.
	ID string
	// Type is the widget class, e.g. "Button", "TextField", "Toggle".
	Type string
	// AutomationID is the developer-assigned test id, if any.
	AutomationID string
	// Label is the accessible name ("Search notes"); Text the displayed content or value
	// (a field's text, a button's title).
	Label, Text string
	// Role is the accessibility role, e.g. "button", "textbox", "switch", "list",
	// "listitem", "header", "window". Queries match it case-insensitively.
	Role string
	// Actions lists the actions the node accepts (see the Action constants). The toolkit
	// refuses any other action with ui_action_not_supported before calling Perform.
	Actions []string
	// Hidden marks a node that is in the tree but not on screen (scrolled away, collapsed).
	Hidden bool
	// Disabled marks a node that does not accept input now. The toolkit refuses actions on
	// it with ui_action_not_supported.
	Disabled bool
	// Checked is the state of a checkable node (toggle, checkbox); nil when not checkable.
	Checked *bool
	// Focused marks the node that has input focus.
	Focused bool
	// Secure marks a password or other secure entry (the official isPassword,
	// secureTextEntry): its Text is never published — not in the tree, not matched by
	// ui.query_nodes' textContains, not in ui.perform_action's outcome — only its Label.
	Secure bool
	// NavigatesBack marks the node that navigates back (a navigation bar's back button):
	// ansight ui back taps it.
	NavigatesBack bool
	// Bounds is the node's frame in screen points, origin top-left; nil when unknown.
	Bounds *Bounds
	// Properties are the node's computed styles and other implementation-specific
	// properties ("backgroundColor": "#1C1C1E", "fontSize": "17"), as the Screen can give
	// them. They are published as the node's "properties" object only when the caller asks
	// for includeComputedStyles (or includeProperties): trees stay small by default.
	Properties map[string]string
	// Children are the node's children in z/reading order.
	Children []*Node
}

// Bounds is a rectangle in screen points, origin at the top-left corner of the screen.
type Bounds struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Common actions of ui.perform_action. A Screen may support others; names are matched
// exactly.
const (
	ActionTap      = "tap"      // activate (press a button, open a row)
	ActionFocus    = "focus"    // give input focus
	ActionSetValue = "setValue" // replace the value (text, or a boolean for a toggle)
	ActionTypeText = "typeText" // append text as if typed
	ActionToggle   = "toggle"   // flip a checkable node
	ActionSelect   = "select"   // choose an item or option
)

// supports reports whether the node lists action.
func (n *Node) supports(action string) bool { return slices.Contains(n.Actions, action) }

// detail says which optional parts of a node a result carries.
type detail struct {
	bounds     bool // includeBounds (default true)
	properties bool // includeComputedStyles or includeProperties (default false)
}

// treeNode projects n (without children) onto the tree model's node, as the official
// SDKs publish one: the label, the displayed text as visual.text, a field's text as its
// value (visual.value) and a checkable node's state as its value ("true"/"false"). A
// secure node carries its label only. The node's text, what a text selector compares, is
// then the official readers' first of them: the label, else the displayed text, else the
// value.
func (n *Node) treeNode(d detail) *uitree.Node {
	t := &uitree.Node{
		ID:            n.ID,
		Type:          n.Type,
		AutomationID:  n.AutomationID,
		Label:         strings.TrimSpace(n.Label),
		Role:          n.Role,
		Actions:       n.Actions,
		Visible:       !n.Hidden,
		Enabled:       !n.Disabled,
		Focusable:     n.supports(ActionFocus) || n.supports(ActionTypeText) || n.supports(ActionSetValue) && n.Checked == nil,
		Focused:       n.Focused,
		Checked:       n.Checked,
		Secure:        n.Secure,
		NavigatesBack: n.NavigatesBack,
		ChildCount:    len(n.Children),
	}
	if t.Actions == nil {
		t.Actions = []string{}
	}
	text := strings.TrimSpace(n.Text)
	switch {
	case n.Secure:
	case n.Checked != nil:
		t.VisualText, t.Value = text, strconv.FormatBool(*n.Checked)
	case n.editable():
		t.Value = text
	default:
		t.VisualText = text
	}
	t.Text = cmp.Or(t.Label, t.VisualText, t.Value)
	if d.bounds && n.Bounds != nil {
		t.Bounds = &uitree.Rect{X: n.Bounds.X, Y: n.Bounds.Y, Width: n.Bounds.Width, Height: n.Bounds.Height}
	}
	if d.properties && len(n.Properties) > 0 {
		t.Properties, _ = wire.Marshal(n.Properties) // string map: never fails; keys sorted
	}
	return t
}

// editable reports whether the node's Text is a value a person edits (a text field).
func (n *Node) editable() bool {
	return n.Role == "textbox" || n.supports(ActionTypeText)
}
