package schema

// The protocol's closed-object default (docs/protocol/catalog.md#closed-objects): on the wire, an object schema without
// additionalProperties admits no additional properties. A standard validator reads the
// absence as "anything goes", so before compiling we restore the keyword, and when
// publishing we strip it again. Both walks visit the same places, so that
// restore(publish(s)) means the same as restore(s).
//
// A schema composed with allOf/anyOf/oneOf (or $ref, if/then/else and dependentSchemas,
// which compose in 2020-12 too) is closed once, at the composing level, with unevaluatedProperties:false: closing every branch with
// additionalProperties:false would reject the properties that the other branches declare.
// Branches themselves stay as written; their nested property schemas are closed as usual.

// isObjectSchema reports whether n describes objects: its type is or includes "object", or
// it declares properties.
func isObjectSchema(n *node) bool {
	if n == nil || n.kind != '{' {
		return false
	}
	if n.has("properties") {
		return true
	}
	t := n.get("type")
	switch {
	case t == nil:
		return false
	case t.kind == '"':
		return t.str == "object"
	case t.kind == '[':
		for _, e := range t.elems {
			if e.kind == '"' && e.str == "object" {
				return true
			}
		}
	}
	return false
}

var compositionKeywords = [...]string{"allOf", "anyOf", "oneOf"}

// isComposed reports whether n combines other schemas that may declare properties.
func isComposed(n *node) bool {
	for _, k := range compositionKeywords {
		if n.has(k) {
			return true
		}
	}
	return n.has("$ref") || n.has("$dynamicRef") || n.has("if") || n.has("dependentSchemas")
}

// closesAtComposition reports whether a composed schema n gets the default
// unevaluatedProperties:false: it describes objects itself or one of its direct branches
// does.
func closesAtComposition(n *node) bool {
	if isObjectSchema(n) {
		return true
	}
	for _, k := range compositionKeywords {
		if b := n.get(k); b != nil && b.kind == '[' {
			for _, e := range b.elems {
				if isObjectSchema(e) {
					return true
				}
			}
		}
	}
	return false
}

// restoreClosed adds the closed-object default to n and its subschemas, in place.
func restoreClosed(n *node) { walkClosed(n, false, restoreOne) }

// publishClosed removes what restoreClosed would add, in place.
func publishClosed(n *node) { walkClosed(n, false, publishOne) }

func restoreOne(n *node, branch bool) {
	if branch || n.has("additionalProperties") {
		return
	}
	if isComposed(n) {
		if closesAtComposition(n) && !n.has("unevaluatedProperties") {
			n.set("unevaluatedProperties", falseNode)
		}
		return
	}
	if isObjectSchema(n) {
		n.set("additionalProperties", falseNode)
	}
}

func publishOne(n *node, branch bool) {
	if branch {
		return
	}
	if isComposed(n) {
		if !n.has("additionalProperties") && closesAtComposition(n) && n.get("unevaluatedProperties").isFalse() {
			n.remove("unevaluatedProperties")
		}
		return
	}
	if isObjectSchema(n) && n.get("additionalProperties").isFalse() {
		n.remove("additionalProperties")
	}
}

// walkClosed applies fn to n and every subschema position that the closed default reaches:
// properties, patternProperties, additionalProperties, unevaluatedProperties, items,
// prefixItems, unevaluatedItems, contains, $defs and definitions as ordinary schemas; the
// branches of allOf/anyOf/oneOf, if/then/else and dependentSchemas as branches. "not" is
// left alone: closing inside a negation would widen what it accepts.
func walkClosed(n *node, branch bool, fn func(*node, bool)) {
	if n == nil || n.kind != '{' {
		return
	}
	fn(n, branch)
	for _, m := range n.members {
		v := m.value
		switch m.name {
		case "properties", "patternProperties", "$defs", "definitions":
			if v.kind == '{' {
				for _, p := range v.members {
					walkClosed(p.value, false, fn)
				}
			}
		case "additionalProperties", "unevaluatedProperties", "items", "unevaluatedItems", "contains":
			walkClosed(v, false, fn)
		case "prefixItems":
			if v.kind == '[' {
				for _, e := range v.elems {
					walkClosed(e, false, fn)
				}
			}
		case "allOf", "anyOf", "oneOf":
			if v.kind == '[' {
				for _, e := range v.elems {
					walkClosed(e, true, fn)
				}
			}
		case "if", "then", "else":
			walkClosed(v, true, fn)
		case "dependentSchemas":
			if v.kind == '{' {
				for _, p := range v.members {
					walkClosed(p.value, true, fn)
				}
			}
		}
	}
}
