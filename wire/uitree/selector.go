package uitree

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Selector picks nodes of a tree with the official host's semantics. Every non-empty
// criterion must hold (AND); strings are trimmed, compared exactly unless Contains, and
// case-insensitively unless CaseSensitive. The zero Selector has no criteria.
type Selector struct {
	// NodeID compares to the node id (never as a substring, even with Contains).
	NodeID string `json:"nodeId,omitzero"`
	// AutomationID compares to the automation id; an exact comparison also matches an
	// Android resource id "pkg:id/name" against an unqualified "name" (either side).
	AutomationID string `json:"automationId,omitzero"`
	// Text compares to the node's text (see Node.Text), Role to its read or inferred role,
	// Type to its type name.
	Text string `json:"text,omitzero"`
	Role string `json:"role,omitzero"`
	Type string `json:"type,omitzero"`
	// Ancestor compares to the automation id of any ancestor.
	Ancestor string `json:"ancestorAutomationId,omitzero"`
	// Action compares to any of the node's actions.
	Action string `json:"action,omitzero"`
	// Visible and Enabled, when set, require the node's state with its ancestors.
	Visible *bool `json:"visible,omitzero"`
	Enabled *bool `json:"enabled,omitzero"`
	// Contains compares strings as substrings (the official find's default; the other
	// verbs compare exactly).
	Contains bool `json:"contains,omitzero"`
	// CaseSensitive compares strings case-sensitively.
	CaseSensitive bool `json:"caseSensitive,omitzero"`
	// Index picks one of the ordered matches (0-based) when set.
	Index *int `json:"index,omitzero"`
}

// HasCriteria reports whether the selector has a criterion (Index, Contains and
// CaseSensitive are modifiers, not criteria).
func (s *Selector) HasCriteria() bool {
	return s.NodeID != "" || s.AutomationID != "" || s.Text != "" || s.Role != "" || s.Type != "" ||
		s.Ancestor != "" || s.Action != "" || s.Visible != nil || s.Enabled != nil
}

// Normalize trims the selector's strings (a blank one is no criterion), as the official
// host reads them.
func (s Selector) Normalize() Selector {
	for _, p := range []*string{&s.NodeID, &s.AutomationID, &s.Text, &s.Role, &s.Type, &s.Ancestor, &s.Action} {
		*p = trim(*p)
	}
	return s
}

// String describes the selector's criteria for messages: automationId="save" text~"Sa".
func (s *Selector) String() string {
	var b strings.Builder
	op := "="
	if s.Contains {
		op = "~"
	}
	add := func(name, v string, op string) {
		if v == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name + op + strconv.Quote(v))
	}
	add("nodeId", s.NodeID, "=")
	add("automationId", s.AutomationID, op)
	add("text", s.Text, op)
	add("role", s.Role, op)
	add("type", s.Type, op)
	add("ancestor", s.Ancestor, op)
	add("action", s.Action, op)
	for _, st := range []struct {
		name string
		v    *bool
	}{{"visible", s.Visible}, {"enabled", s.Enabled}} {
		if st.v != nil {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(st.name + "=" + strconv.FormatBool(*st.v))
		}
	}
	if s.CaseSensitive {
		b.WriteString(" (case-sensitive)")
	}
	if s.Index != nil {
		fmt.Fprintf(&b, " index=%d", *s.Index)
	}
	return b.String()
}

// Matches reports whether n satisfies every criterion of s (s normalized).
func (s *Selector) Matches(n *Node) bool {
	return (s.NodeID == "" || s.equal(trim(n.ID), s.NodeID)) &&
		(s.AutomationID == "" || s.automation(n.AutomationID, s.AutomationID)) &&
		(s.Text == "" || s.text(n.Text, s.Text)) &&
		(s.Role == "" || s.text(n.Role, s.Role)) &&
		(s.Type == "" || s.text(n.Type, s.Type)) &&
		(s.Ancestor == "" || s.ancestor(n)) &&
		(s.Action == "" || slices.ContainsFunc(n.Actions, func(a string) bool { return s.text(a, s.Action) })) &&
		(s.Visible == nil || n.shown == *s.Visible) &&
		(s.Enabled == nil || n.usable == *s.Enabled)
}

func (s *Selector) ancestor(n *Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if s.automation(p.AutomationID, s.Ancestor) {
			return true
		}
	}
	return false
}

// equal compares exactly, case-insensitively unless CaseSensitive.
func (s *Selector) equal(actual, want string) bool {
	if s.CaseSensitive {
		return actual == want
	}
	return strings.EqualFold(actual, want)
}

// text compares a string criterion (absent actual never matches).
func (s *Selector) text(actual, want string) bool {
	if actual == "" {
		return false
	}
	if !s.Contains {
		return s.equal(actual, want)
	}
	if s.CaseSensitive {
		return strings.Contains(actual, want)
	}
	return strings.Contains(strings.ToLower(actual), strings.ToLower(want))
}

// automation compares automation ids: as text, and, exactly, Android resource ids
// "pkg:id/name" against an unqualified name.
func (s *Selector) automation(actual, want string) bool {
	if s.text(actual, want) {
		return true
	}
	if s.Contains || actual == "" {
		return false
	}
	a, w := resourceName(actual), resourceName(want)
	switch {
	case a != "" && w != "":
		return false
	case a != "":
		return unqualified(want) && s.equal(a, want)
	case w != "":
		return unqualified(actual) && s.equal(actual, w)
	}
	return false
}

// resourceName is the name of an Android resource id "pkg:id/name" ("" otherwise).
func resourceName(id string) string {
	i := strings.Index(id, ":id/")
	if i <= 0 || i+4 >= len(id) {
		return ""
	}
	return id[i+4:]
}

func unqualified(id string) bool { return !strings.ContainsAny(id, ":/") }

// ActionReady reports whether n can take input where it is: shown, usable, and with
// bounds of positive size that intersect the viewport.
func (t *Tree) ActionReady(n *Node) bool {
	vp, ok := t.Viewport()
	return n.shown && n.usable && ok && usableIn(n, vp)
}

func usableIn(n *Node, vp Rect) bool {
	if n.Bounds == nil || !n.Bounds.Usable() {
		return false
	}
	_, ok := n.Bounds.Intersect(vp)
	return ok
}

// Find returns the nodes s matches, duplicates by id dropped (the first wins), in the
// official order for selection: action-ready first, then in the active page, then with
// usable bounds in the viewport, then in document order. Without a usable viewport the
// order is the document's. Index is not applied.
func (t *Tree) Find(s Selector) []*Node {
	s = s.Normalize()
	seen := map[string]bool{}
	var out []*Node
	for _, n := range t.nodes {
		if n.injected || !s.Matches(n) {
			continue
		}
		if id := trim(n.ID); id != "" {
			if seen[id] {
				continue
			}
			seen[id] = true
		}
		out = append(out, n)
	}
	t.order(out)
	return out
}

// order sorts matches for selection (stable).
func (t *Tree) order(nodes []*Node) {
	vp, ok := t.Viewport()
	if !ok || !vp.Usable() {
		return
	}
	rank := func(n *Node) (r int) {
		if n.shown && n.usable && usableIn(n, vp) {
			r += 4
		}
		if n.inActivePage {
			r += 2
		}
		if usableIn(n, vp) {
			r++
		}
		return r
	}
	slices.SortStableFunc(nodes, func(a, b *Node) int { return rank(b) - rank(a) })
}

// NotFoundError is a selector that picks no node: it matched none, or fewer than its
// Index asks for. Nearest holds the closest nodes when it matched none.
type NotFoundError struct {
	Selector Selector
	Matches  int
	Nearest  []Candidate
}

func (e *NotFoundError) Error() string {
	if e.Matches > 0 && e.Selector.Index != nil {
		return fmt.Sprintf("the selector matched %d node(s), but index %d was requested (%s)", e.Matches, *e.Selector.Index, e.Selector.String())
	}
	return "no node matches " + e.Selector.String()
}

// Resolve returns the node s picks: its Index (0 when not set) among the ordered matches
// of [Tree.Find], or a *NotFoundError with the nearest candidates.
func (t *Tree) Resolve(s Selector) (*Node, error) {
	s = s.Normalize()
	matches := t.Find(s)
	i := 0
	if s.Index != nil {
		i = max(0, *s.Index)
	}
	if i < len(matches) {
		return matches[i], nil
	}
	e := &NotFoundError{Selector: s, Matches: len(matches)}
	if len(matches) == 0 {
		e.Nearest = t.Nearest(s, 5)
	}
	return nil, e
}

// HitTest returns the node at point (x, y) in the tree's coordinates: the last shown node
// in document order (the one painted on top) whose bounds contain it, then, when accept is
// given, the nearest of it and its ancestors that accept takes. Nil when none.
func (t *Tree) HitTest(x, y float64, accept func(*Node) bool) *Node {
	var hit *Node
	for _, n := range t.nodes {
		if n.injected || !n.shown || n.Bounds == nil || !n.Bounds.Usable() || !n.Bounds.Contains(x, y) {
			continue
		}
		hit = n
	}
	for n := hit; n != nil; n = n.Parent {
		if accept == nil || accept(n) {
			return n
		}
	}
	return nil
}

// Point converts normalised coordinates (0–1 of the viewport, as the official CLI's
// coordinate forms take them) to the tree's coordinates.
func (t *Tree) Point(nx, ny float64) (x, y float64, ok bool) {
	vp, ok := t.Viewport()
	if !ok || !vp.Usable() {
		return 0, 0, false
	}
	return vp.X + nx*vp.Width, vp.Y + ny*vp.Height, true
}
