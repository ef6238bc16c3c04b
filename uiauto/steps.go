package uiauto

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// notFound is the outcome of a selector that picks nothing, with the nearest candidates.
func (r *runner) notFound(t *uitree.Tree, err error) *Outcome {
	res := r.header(t)
	var nf *uitree.NotFoundError
	if errors.As(err, &nf) {
		res.MatchCount = intPtr(nf.Matches)
		res.Nearest = candidates(t, nf.Nearest)
	}
	return r.fail(CodeNotFound, res, "%v%s", err, nearestHint(res.Nearest))
}

// blocker says why n cannot take action now ("" when it can), and the code to fail with
// if it never can.
func blocker(t *uitree.Tree, n *uitree.Node, action string) (string, wire.Code) {
	switch {
	case !n.Supports(action):
		return fmt.Sprintf("does not support %s (it supports %s)", action, listOr(n.Actions, "no action")), wire.CodeUIActionNotSupported
	case !n.Shown():
		return "is not visible", ""
	case !n.Usable():
		return "is disabled", ""
	}
	if vp, ok := t.Viewport(); ok && vp.Usable() && n.Bounds != nil && n.Bounds.Usable() {
		if _, in := n.Bounds.Intersect(vp); !in {
			return "is outside the viewport", ""
		}
	}
	return "", ""
}

func listOr(items []string, none string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}

// actor is n, or when n does not take action (a label inside a button), the nearest
// ancestor that does — what a tap at n's centre would reach.
func actor(n *uitree.Node, actions ...string) *uitree.Node {
	for c := n; c != nil; c = c.Parent {
		for _, a := range actions {
			if c.Supports(a) {
				return c
			}
		}
	}
	return n
}

// selected is the step of an action on the selector's node.
func (r *runner) selected(t *uitree.Tree, action string, value jsontext.Value) (*step, *Outcome) {
	n, err := t.Resolve(r.sel)
	if err != nil {
		return nil, r.notFound(t, err)
	}
	n = actor(n, action)
	st := &step{node: n, action: action, value: value}
	st.blocker, st.code = blocker(t, n, action)
	return st, nil
}

func quote(s string) jsontext.Value {
	b, _ := jsontext.AppendQuote(nil, s)
	return b
}

// actStep performs the request's action on the selector's node itself (a node named by
// its id takes the action or fails: no ancestor stands in for it).
func (r *runner) actStep(t *uitree.Tree) (*step, *Outcome) {
	n, err := t.Resolve(r.sel)
	if err != nil {
		// A node id names one node of a capture. When it now names a node the rest of the
		// selector refuses (ids that are tree paths, a screen that changed since the ids
		// were read), it is a different element: waiting will not bring the one asked for.
		if other := t.Node(r.sel.NodeID); r.sel.NodeID != "" && other != nil && !other.Injected() {
			return &step{node: other, blocker: "is not the node asked for (" + r.sel.String() + "): the screen changed",
				code: CodeNotFound, final: true}, nil
		}
		return nil, r.notFound(t, err)
	}
	action := strings.TrimSpace(r.req.Action)
	st := &step{node: n, action: action, value: r.req.ActionValue, options: r.req.ActionOptions}
	st.blocker, st.code = blocker(t, n, action)
	return st, nil
}

// pointStep taps the node at the request's point (the topmost shown node there, or its
// nearest ancestor that takes a tap).
func (r *runner) pointStep(t *uitree.Tree) (*step, *Outcome) {
	x, y, ok := t.Point(*r.req.X, *r.req.Y)
	if !ok {
		return nil, r.fail(wire.CodeUIActionNotSupported, r.header(t), "the app's tree has no geometry: a point cannot be placed")
	}
	n := t.HitTest(x, y, func(n *uitree.Node) bool { return n.Supports("tap") })
	if n == nil {
		return nil, r.lacks(t, fmt.Sprintf("no node that takes a tap at (%g, %g)", x, y))
	}
	st := &step{node: n, action: "tap"}
	st.blocker, st.code = blocker(t, n, "tap")
	return st, nil
}

// typeStep replaces the field's text (setValue) or, with Append, adds to it (typeText).
// A field that takes only typeText is replaced only when empty; one that takes only
// setValue gets its text plus the value when appending.
func (r *runner) typeStep(t *uitree.Tree) (*step, *Outcome) {
	var n *uitree.Node
	if r.req.Focused && !r.sel.HasCriteria() {
		if n = firstReady(t, func(n *uitree.Node) bool { return n.Focused }); n == nil {
			return nil, r.fail(CodeNotFound, r.header(t), "no field has focus: tap one first, or give a target")
		}
	} else {
		var err error
		if n, err = t.Resolve(r.sel); err != nil {
			return nil, r.notFound(t, err)
		}
	}
	n = actor(n, "setValue", "typeText")
	value := *r.req.Value
	st := &step{node: n}
	switch {
	case !r.req.Append && n.Supports("setValue"):
		st.action, st.value = "setValue", quote(value)
	case !r.req.Append && n.Supports("typeText") && n.Value == "" && !n.Secure:
		st.action, st.value = "typeText", quote(value)
	case !r.req.Append && n.Supports("typeText"):
		st.action = "typeText"
		st.blocker, st.code = "takes typeText only, which cannot replace its text: use --append, or clear it first", wire.CodeUIActionNotSupported
		return st, nil
	case r.req.Append && n.Supports("typeText"):
		st.action, st.value = "typeText", quote(value)
	case r.req.Append && n.Supports("setValue") && !n.Secure:
		st.action, st.value = "setValue", quote(n.Value+value)
	default:
		st.action = "setValue"
		st.blocker, st.code = fmt.Sprintf("takes no text (it supports %s)", listOr(n.Actions, "no action")), wire.CodeUIActionNotSupported
		return st, nil
	}
	st.blocker, st.code = blocker(t, n, st.action)
	return st, nil
}

// scrollable reports whether a node takes a swipe, and with which action.
func scrollAction(n *uitree.Node) string {
	for _, a := range []string{"scroll", "swipe"} {
		if n.Supports(a) {
			return a
		}
	}
	return ""
}

// firstReady is the first node, action-ready ones before the rest, that accept takes.
func firstReady(t *uitree.Tree, accept func(*uitree.Node) bool) *uitree.Node {
	var rest *uitree.Node
	for _, n := range t.Nodes() {
		if !accept(n) {
			continue
		}
		if t.ActionReady(n) {
			return n
		}
		if rest == nil {
			rest = n
		}
	}
	return rest
}

// lacks is the outcome of an app whose tree cannot express an operation.
func (r *runner) lacks(t *uitree.Tree, what string) *Outcome {
	return r.fail(wire.CodeUIActionNotSupported, r.header(t), "the app's tree has %s, so %s cannot be done with its %s", what, r.req.Operation, PerformActionToolID)
}

// swipeStep scrolls a node: the selector's (or the nearest ancestor that scrolls), the
// one under the start point, or the first that scrolls. The value is the swipe's
// direction, as the official CLI names it (up reveals what is below).
func (r *runner) swipeStep(t *uitree.Tree) (*step, *Outcome) {
	accept := func(n *uitree.Node) bool { return scrollAction(n) != "" }
	var n *uitree.Node
	dir := cmpOrString(r.req.Direction, "up")
	if r.req.Orientation != "" {
		o, _ := parseOrientation(r.req.Orientation) // validated
		dir = o.direction()
	}
	opts := map[string]any{}
	switch {
	case r.req.StartX != nil:
		x, y, ok := t.Point(*r.req.StartX, *r.req.StartY)
		if !ok {
			return nil, r.fail(wire.CodeUIActionNotSupported, r.header(t), "the app's tree has no geometry: swipe coordinates cannot be placed")
		}
		if n = t.HitTest(x, y, accept); n == nil {
			return nil, r.lacks(t, fmt.Sprintf("no node that supports scroll or swipe at (%g, %g)", x, y))
		}
		dir = orientation{*r.req.EndX - *r.req.StartX, *r.req.EndY - *r.req.StartY}.direction()
		opts["startX"], opts["startY"], opts["endX"], opts["endY"] = *r.req.StartX, *r.req.StartY, *r.req.EndX, *r.req.EndY
	case r.sel.HasCriteria():
		m, err := t.Resolve(r.sel)
		if err != nil {
			return nil, r.notFound(t, err)
		}
		if n = actor(m, "scroll", "swipe"); scrollAction(n) == "" {
			return &step{node: m, action: "scroll", blocker: "neither it nor an ancestor supports scroll or swipe", code: wire.CodeUIActionNotSupported}, nil
		}
	default:
		if n = firstReady(t, accept); n == nil {
			return nil, r.lacks(t, "no node that supports scroll or swipe")
		}
	}
	opts["direction"] = dir
	opts["length"] = cmpOrFloat(r.req.Length, DefaultSwipeLength)
	opts["durationMs"] = cmpOr(r.req.DurationMs, DefaultSwipeDuration)
	if r.req.Orientation != "" {
		opts["orientation"] = r.req.Orientation
	}
	st := &step{node: n, action: scrollAction(n), value: quote(dir), options: options(opts)}
	st.blocker, st.code = blocker(t, n, st.action)
	return st, nil
}

func cmpOrFloat(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// options writes an options object with sorted keys.
func options(m map[string]any) jsontext.Value {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = jsontext.AppendQuote(b, k)
		b = append(b, ':')
		switch v := m[k].(type) {
		case string:
			b, _ = jsontext.AppendQuote(b, v)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = 0
			}
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
	}
	return append(b, '}')
}

// pinchStep pinches the node that supports pinch: the selector's, the one under the
// centre, or the first. The value is the scale.
func (r *runner) pinchStep(t *uitree.Tree) (*step, *Outcome) {
	accept := func(n *uitree.Node) bool { return n.Supports("pinch") }
	var n *uitree.Node
	opts := map[string]any{"scale": r.req.Scale, "startDistance": cmpOrFloat(r.req.StartDistance, DefaultPinchDistance),
		"angleDegrees": r.req.AngleDegrees, "durationMs": cmpOr(r.req.DurationMs, DefaultPinchDuration)}
	switch {
	case r.sel.HasCriteria():
		m, err := t.Resolve(r.sel)
		if err != nil {
			return nil, r.notFound(t, err)
		}
		if n = actor(m, "pinch"); !n.Supports("pinch") {
			return &step{node: m, action: "pinch", blocker: "neither it nor an ancestor supports pinch", code: wire.CodeUIActionNotSupported}, nil
		}
	case r.req.CenterX != nil:
		x, y, ok := t.Point(*r.req.CenterX, *r.req.CenterY)
		if !ok {
			return nil, r.fail(wire.CodeUIActionNotSupported, r.header(t), "the app's tree has no geometry: the pinch centre cannot be placed")
		}
		if n = t.HitTest(x, y, accept); n == nil {
			return nil, r.lacks(t, fmt.Sprintf("no node that supports pinch at (%g, %g)", x, y))
		}
		opts["centerX"], opts["centerY"] = *r.req.CenterX, *r.req.CenterY
	default:
		if n = firstReady(t, accept); n == nil {
			return nil, r.lacks(t, "no node that supports pinch")
		}
	}
	st := &step{node: n, action: "pinch", value: jsontext.Value(strconv.FormatFloat(r.req.Scale, 'g', -1, 64)), options: options(opts)}
	st.blocker, st.code = blocker(t, n, st.action)
	return st, nil
}

// backStep taps the node the tree marks as navigating back.
func (r *runner) backStep(t *uitree.Tree) (*step, *Outcome) {
	n := firstReady(t, func(n *uitree.Node) bool { return n.NavigatesBack })
	if n == nil {
		return nil, r.lacks(t, "no node marked navigatesBack (a back button)")
	}
	st := &step{node: n, action: "tap"}
	st.blocker, st.code = blocker(t, n, "tap")
	return st, nil
}
