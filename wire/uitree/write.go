package uitree

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// maxVisualRunes bounds visual.text and visual.value, as the official SDKs do (240
// characters, then "...").
const maxVisualRunes = 240

// Flag bits Append declares in flagBits and sets in each node's flags (the official
// defaults).
const (
	FlagVisible = 1
	FlagEnabled = 2
)

// Append appends t to dst as a compact v2 payload that passes the official gate: a
// format ending with ".compact.v2" (t.Format when it is one, else [FormatGeneric]), the
// types registry in first-seen pre-order, an integer typeId and no type member on every
// node, explicit visible and enabled booleans beside flags, and for each node the members
// the official SDKs' node schema requires (id, typeId, role, supportedActions,
// interactable, visible, enabled, focusable, childCount, visual). A secure node's value
// is never written. Only exported fields are read, so a tree built in code writes as
// well as a parsed one.
func Append(dst []byte, t *Tree) []byte {
	w := writer{b: dst, ids: map[string]int{}}
	w.registry(t.Root)
	format := t.Format
	if !t.Compact() {
		format = FormatGeneric
	}
	w.raw(`{"format":`)
	w.str(format)
	w.member("platform", t.Platform)
	w.member("source", t.Source)
	w.member("adapter", t.Adapter)
	w.raw(`,"capturedAtUtc":`)
	at := t.CapturedAt
	if at.IsZero() {
		at = time.Unix(0, 0)
	}
	w.str(at.UTC().Format(time.RFC3339Nano))
	if t.SnapshotID != "" {
		w.member("snapshotId", t.SnapshotID)
		w.raw(`,"revision":`)
		w.int(t.Revision)
		w.raw(`,"nodeIdentity":{"scope":"snapshot","source":`)
		w.str(t.Source)
		w.raw(`,"staleAfterRevision":`)
		w.int(t.Revision)
		w.raw(`}`)
	}
	w.member("rootScope", t.RootScope)
	if t.CurrentPageID != "" {
		w.raw(`,"currentPage":{"id":`)
		w.str(t.CurrentPageID)
		w.raw(`}`)
	}
	if t.pageContext { // keep a framework tree's page context (see Find's order)
		w.raw(`,"flagBits":{"visible":1,"enabled":2,"currentPage":4,"activePage":8},"types":[`)
	} else {
		w.raw(`,"flagBits":{"visible":1,"enabled":2},"types":[`)
	}
	for i, name := range w.types {
		if i > 0 {
			w.raw(",")
		}
		w.str(name)
	}
	w.raw(`]`)
	if cs := t.CoordinateSpace; cs != nil {
		w.raw(`,"coordinateSpace":`)
		w.rect(*cs)
	}
	count := t.NodeCount
	if count == 0 {
		count = countNodes(t.Root)
	}
	w.raw(`,"nodeCount":`)
	w.int(int64(count))
	if t.TotalNodes > 0 {
		w.raw(`,"totalNodes":`)
		w.int(int64(t.TotalNodes))
	}
	w.raw(`,"truncated":`)
	w.bool(t.Truncated)
	w.raw(`,"root":`)
	w.node(t.Root, true)
	w.raw(`}`)
	return w.b
}

// AppendNode appends one node (without its children) in the compact v2 node form, with
// typeId into types (a node whose type is missing from types gets typeId 0), and, when
// withType, its resolved type name (the form of ui.query_nodes matches and ui.inspect_node
// ancestors, which are not tree nodes).
func AppendNode(dst []byte, n *Node, types []string, withType bool) []byte {
	w := writer{b: dst, ids: make(map[string]int, len(types))}
	for i, name := range types {
		if _, ok := w.ids[name]; !ok {
			w.ids[name] = i
		}
	}
	w.types = types
	w.withType = withType
	w.node(n, false)
	return w.b
}

// Types returns the type registry Append writes for a tree rooted at root.
func Types(root *Node) []string {
	w := writer{ids: map[string]int{}}
	w.registry(root)
	return w.types
}

// typeName is the name a node is registered under.
func typeName(n *Node) string { return TypeName(n.Type) }

// TypeName is the name Append registers a type under: typ, or "View" when it is blank
// (the gate refuses blank type names).
func TypeName(typ string) string {
	if isBlank(typ) {
		return "View"
	}
	return typ
}

func countNodes(n *Node) int {
	if n == nil {
		return 0
	}
	c := 1
	for _, k := range n.Children {
		c += countNodes(k)
	}
	return c
}

// writer appends JSON. Strings are quoted by jsontext; invalid UTF-8 becomes U+FFFD.
type writer struct {
	b        []byte
	ids      map[string]int
	types    []string
	withType bool
}

func (w *writer) registry(n *Node) {
	if n == nil {
		return
	}
	name := typeName(n)
	if _, ok := w.ids[name]; !ok {
		w.ids[name] = len(w.types)
		w.types = append(w.types, name)
	}
	for _, c := range n.Children {
		w.registry(c)
	}
}

func (w *writer) raw(s string) { w.b = append(w.b, s...) }

func (w *writer) str(s string) { w.b, _ = jsontext.AppendQuote(w.b, s) }

func (w *writer) int(v int64) { w.b = strconv.AppendInt(w.b, v, 10) }

func (w *writer) bool(v bool) { w.b = strconv.AppendBool(w.b, v) }

// num writes a float, integral values as integers (official readers try an int first
// for some members).
func (w *writer) num(f float64) {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		w.raw("0")
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		w.int(int64(f))
	default:
		w.b = strconv.AppendFloat(w.b, f, 'g', -1, 64)
	}
}

// member writes ,"name":"value" when value is not empty.
func (w *writer) member(name, value string) {
	if value == "" {
		return
	}
	w.b = append(w.b, ',', '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':')
	w.str(value)
}

func (w *writer) flag(name string, v bool) {
	if !v {
		return
	}
	w.b = append(w.b, ',', '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, `":true`...)
}

func (w *writer) rect(r Rect) {
	w.raw(`{"x":`)
	w.num(r.X)
	w.raw(`,"y":`)
	w.num(r.Y)
	w.raw(`,"width":`)
	w.num(r.Width)
	w.raw(`,"height":`)
	w.num(r.Height)
	w.raw(`}`)
}

// bounded cuts s to the official SDKs' visual text bound.
func bounded(s string) (string, bool) {
	if utf8.RuneCountInString(s) <= maxVisualRunes {
		return s, false
	}
	i, n := 0, 0
	for i = range s {
		if n == maxVisualRunes {
			break
		}
		n++
	}
	return s[:i] + "...", true
}

// node writes n, with its children when children is set.
func (w *writer) node(n *Node, children bool) {
	w.raw(`{"id":`)
	w.str(n.ID)
	w.raw(`,"typeId":`)
	w.int(int64(w.ids[typeName(n)]))
	if w.withType {
		w.member("type", typeName(n))
	}
	w.member("automationId", n.AutomationID)
	w.member("label", n.Label)
	full := n.Value
	if n.Secure {
		full = ""
	}
	// A value with no text anywhere would read as the text: it goes to props.value, which
	// is read as the value only. Otherwise it is visual.value, cut as the official SDKs
	// cut it, and whole as the value member when cut.
	hasText := !isBlank(n.Text)
	valueAsText := !hasText && full != ""
	value, cut := bounded(full)
	if valueAsText {
		value, cut = "", false
	}
	whole := ""
	if cut {
		whole = full
	}
	visualText, _ := bounded(n.VisualText)
	// Without a text member a reader takes the label, the value member, visual.text, then
	// visual.value: the member is written only when the node's text is something else.
	if hasText && n.Text != firstNonBlank(n.Label, whole, visualText, value) {
		w.member("text", n.Text)
	}
	w.member("value", whole)
	role := n.Role
	if role == "" {
		role = inferRole(n.Type)
	}
	w.raw(`,"role":`)
	w.str(role)
	w.raw(`,"supportedActions":[`)
	for i, a := range n.Actions {
		if i > 0 {
			w.raw(",")
		}
		w.str(a)
	}
	w.raw(`],"interactable":`)
	w.bool(n.Visible && n.Enabled && len(n.Actions) > 0)
	w.raw(`,"visible":`)
	w.bool(n.Visible)
	w.raw(`,"enabled":`)
	w.bool(n.Enabled)
	flags := int64(0)
	if n.Visible {
		flags |= FlagVisible
	}
	if n.Enabled {
		flags |= FlagEnabled
	}
	w.raw(`,"flags":`)
	w.int(flags)
	w.raw(`,"focusable":`)
	w.bool(n.Focusable)
	w.flag("focused", n.Focused)
	if n.Checked != nil {
		w.raw(`,"checked":`)
		w.bool(*n.Checked)
	}
	w.flag("isPassword", n.Secure)
	w.flag("navigatesBack", n.NavigatesBack)
	w.flag("currentPage", n.CurrentPage)
	w.flag("activePage", n.ActivePage)
	childCount := n.ChildCount
	if childCount < len(n.Children) {
		childCount = len(n.Children)
	}
	w.raw(`,"childCount":`)
	w.int(int64(childCount))
	w.flag("truncated", n.Stub)
	w.raw(`,"visual":{"opacity":`)
	if n.Opacity != nil {
		w.num(*n.Opacity)
	} else {
		w.raw("1")
	}
	w.member("foreground", n.Foreground)
	w.member("background", n.Background)
	w.member("text", visualText)
	w.member("value", value)
	w.raw(`}`)
	if valueAsText {
		w.raw(`,"props":{"value":`)
		w.str(full)
		w.raw(`}`)
	}
	if n.Z != 0 {
		w.raw(`,"z":`)
		w.num(n.Z)
	}
	if n.Bounds != nil {
		w.raw(`,"bounds":`)
		w.rect(*n.Bounds)
	}
	if len(n.Properties) > 0 && n.Properties.Kind() == '{' {
		w.raw(`,"properties":`)
		w.b = append(w.b, n.Properties...)
	}
	if children && len(n.Children) > 0 {
		w.raw(`,"children":[`)
		for i, c := range n.Children {
			if i > 0 {
				w.raw(",")
			}
			w.node(c, true)
		}
		w.raw(`]`)
	}
	w.raw(`}`)
}
