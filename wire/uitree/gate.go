package uitree

import "fmt"

// Rule is one rule of the official host's compact v2 gate.
type Rule string

// The gate's rules, in the order the official host checks them.
const (
	// RulePayload: the payload is a JSON object.
	RulePayload Rule = "payload"
	// RuleRoot: root is a JSON object.
	RuleRoot Rule = "root"
	// RuleFormat: format is a string ending with ".compact.v2" (ordinal; any prefix).
	RuleFormat Rule = "format"
	// RuleTypes: types is a non-empty array of non-blank strings.
	RuleTypes Rule = "types"
	// RuleTypeID: every node has a typeId that is a JSON integer (no fraction or
	// exponent, 32 bits) with 0 <= typeId < len(types).
	RuleTypeID Rule = "typeId"
	// RuleForbidden: no node has a type, kind, styleId or stacking member (even null).
	RuleForbidden Rule = "forbidden-member"
	// RuleChildren: children is absent, null, or an array whose every element is an
	// object.
	RuleChildren Rule = "children"
)

// Rules lists the gate's rules in order.
var Rules = []Rule{RulePayload, RuleRoot, RuleFormat, RuleTypes, RuleTypeID, RuleForbidden, RuleChildren}

// GateError is a payload the official gate refuses: the official CLI's ui verbs and app
// interact then fail with "The visual-tree response was not a valid compact v2 payload."
type GateError struct {
	Rule    Rule
	Pointer string // the offending value ("" for the payload itself)
	Msg     string
}

func (e *GateError) Error() string {
	where := e.Pointer
	if where == "" {
		where = "the payload"
	}
	return fmt.Sprintf("not a valid compact v2 payload (rule %s): %s: %s", e.Rule, where, e.Msg)
}

// Validate applies the official host's compact v2 gate to a payload and returns the
// first rule it breaks (a *GateError), or nil when the official host accepts it. JSON the
// reader cannot parse at all is returned as Parse's error.
func Validate(data []byte) error {
	r, err := read(data)
	if err != nil {
		if err == error(errNotObject) {
			return &GateError{Rule: RulePayload, Msg: "not a JSON object"}
		}
		return err
	}
	return r.gateError()
}

// gateError is the first rule the read payload breaks.
func (r *reader) gateError() error {
	switch {
	case r.rootKind != '{':
		return &GateError{Rule: RuleRoot, Pointer: "/root", Msg: "root is not a JSON object"}
	case r.formatKind != '"':
		return &GateError{Rule: RuleFormat, Pointer: "/format", Msg: "format is not a string"}
	case !hasSuffix(r.tree.Format, CompactSuffix):
		return &GateError{Rule: RuleFormat, Pointer: "/format", Msg: fmt.Sprintf("format %q does not end with %q", r.tree.Format, CompactSuffix)}
	case r.typesKind != '[':
		return &GateError{Rule: RuleTypes, Pointer: "/types", Msg: "types is not an array"}
	case len(r.types) == 0:
		return &GateError{Rule: RuleTypes, Pointer: "/types", Msg: "types is empty"}
	case r.typesBlank:
		return &GateError{Rule: RuleTypes, Pointer: "/types", Msg: "an element of types is not a non-blank string"}
	}
	if len(r.gate) > 0 {
		v := r.gate[0]
		return &GateError{Rule: v.rule, Pointer: v.pointer, Msg: v.msg}
	}
	for _, n := range r.tree.nodes {
		if n.TypeID >= len(r.types) || n.TypeID < 0 {
			return &GateError{Rule: RuleTypeID, Pointer: pointerOf(n),
				Msg: fmt.Sprintf("typeId %d is outside the %d types", n.TypeID, len(r.types))}
		}
	}
	return nil
}

// pointerOf is the JSON Pointer of a node, from its ancestors.
func pointerOf(n *Node) string {
	var idx []int
	for c := n; c.Parent != nil; c = c.Parent {
		for i, s := range c.Parent.Children {
			if s == c {
				idx = append(idx, i)
				break
			}
		}
	}
	p := "/root"
	for i := len(idx) - 1; i >= 0; i-- {
		p += fmt.Sprintf("/children/%d", idx[i])
	}
	return p
}
