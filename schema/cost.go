package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// What a schema may cost. A schema comes from an app, and a validator (or a form
// generator) does work that can grow exponentially with it: a 1.3 KB schema of anyOf
// nested twenty times through $defs makes a standard validator evaluate a million
// branches for one value. So a schema is bounded when it is compiled (CheckBounds:
// nesting depth, JSON values, and its size with every reference expanded), and each
// validation by the general validator gets a budget of steps proportional to the value
// it checks (Schema.Validate refuses beyond it with CodeValidationBudget).

// Bounds of a schema document.
const (
	// MaxDepth bounds the JSON nesting of a schema document.
	MaxDepth = 64
	// MaxValues bounds the JSON values of a schema document.
	MaxValues = 10000
	// MaxExpansion bounds the size of a schema with every $ref replaced by what it
	// refers to (a recursive reference counts once): the work of validating one value
	// against it, at one level of the value.
	MaxExpansion = 10000
)

// Validation budget: the general validator may take validationBudgetBase steps, plus
// validationBudgetPerValue for each JSON value of the instance. A step is a subschema
// applied to a part of the value. Linear work (a large tree against a recursive node
// schema) stays well within it; work that grows faster than the value does not.
const (
	validationBudgetBase     = 50000
	validationBudgetPerValue = 32
)

// CodeValidationBudget is the violation code of a value whose validation would exceed its
// budget of steps (a schema whose alternatives multiply at every level of the value).
const CodeValidationBudget = "validation_budget_exceeded"

// CheckBounds reports whether a schema document stays within MaxDepth,
// MaxValues and MaxExpansion; a reference it cannot follow (to another
// document, or to nothing) counts as itself. A host applies it to every schema an app
// publishes before it uses one; Compile applies it too, and also refuses references
// it cannot follow. Invalid JSON is an error.
func CheckBounds(raw []byte) error {
	tree, err := parseTree(raw)
	if err != nil {
		return fmt.Errorf("schema is not valid JSON: %w", err)
	}
	publishClosed(tree) // as Compile counts: without the closed-object default
	_, err = newSchemaGraph(tree, false)
	return err
}

// schemaGraph is a schema document with its references resolved: what the bounds and the
// budget walk.
type schemaGraph struct {
	// strict: a reference that does not resolve inside the document is an error (for the
	// compiler, whose validator would follow references this graph cannot).
	strict  bool
	root    *node
	base    map[*node]*node            // each schema object's resource root (the nearest $id, or root)
	anchors map[*node]map[string]*node // anchors of each resource root
}

// newSchemaGraph indexes root and checks its bounds.
func newSchemaGraph(root *node, strict bool) (*schemaGraph, error) {
	g := &schemaGraph{strict: strict, root: root, base: make(map[*node]*node), anchors: make(map[*node]map[string]*node)}
	values := 0
	if err := g.index(root, root, 1, &values); err != nil {
		return nil, err
	}
	e := expansion{g: g, size: make(map[*node]int), open: make(map[*node]bool)}
	if n, err := e.of(root); err != nil {
		return nil, err
	} else if n > MaxExpansion {
		return nil, fmt.Errorf("schema expands to more than %d values with its references followed (at most %d)", n, MaxExpansion)
	}
	return g, nil
}

// index records resource roots and anchors, and counts depth and values.
func (g *schemaGraph) index(n, base *node, depth int, values *int) error {
	*values++
	switch {
	case depth > MaxDepth:
		return fmt.Errorf("schema is nested more than %d levels deep", MaxDepth)
	case *values > MaxValues:
		return fmt.Errorf("schema has more than %d JSON values", MaxValues)
	}
	switch n.kind {
	case '{':
		if id := n.get("$id"); id != nil && id.kind == '"' && n != g.root {
			base = n
		}
		g.base[n] = base
		for _, k := range [...]string{"$anchor", "$dynamicAnchor"} {
			if a := n.get(k); a != nil && a.kind == '"' {
				if g.anchors[base] == nil {
					g.anchors[base] = make(map[string]*node)
				}
				g.anchors[base][a.str] = n
			}
		}
		for _, m := range n.members {
			if err := g.index(m.value, base, depth+1, values); err != nil {
				return err
			}
		}
	case '[':
		for _, e := range n.elems {
			if err := g.index(e, base, depth+1, values); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolve returns what reference ref, written in schema object from, points to.
func (g *schemaGraph) resolve(from *node, ref string) (*node, error) {
	base := g.base[from]
	if base == nil {
		base = g.root
	}
	frag, ok := strings.CutPrefix(ref, "#")
	switch {
	case !ok:
		return nil, fmt.Errorf("schema reference %q is not allowed: references must point inside the schema (#, a JSON pointer or an anchor)", ref)
	case frag == "":
		return base, nil
	case !strings.HasPrefix(frag, "/"):
		if a := g.anchors[base][frag]; a != nil {
			return a, nil
		}
		return nil, fmt.Errorf("schema reference %q names no anchor", ref)
	}
	cur := base
	for tok := range strings.SplitSeq(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		var next *node
		switch cur.kind {
		case '{':
			next = cur.get(tok)
		case '[':
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(cur.elems) {
				next = cur.elems[i]
			}
		}
		if next == nil {
			return nil, fmt.Errorf("schema reference %q does not resolve", ref)
		}
		cur = next
	}
	return cur, nil
}

// refOf returns the reference a schema object's member names, if the member is $ref or
// $dynamicRef with a string value.
func refOf(m member) (string, bool) {
	if (m.name == "$ref" || m.name == "$dynamicRef") && m.value.kind == '"' {
		return m.value.str, true
	}
	return "", false
}

// expansion computes the size of a schema with references replaced by their targets,
// saturating above MaxExpansion. A reference back to a schema being expanded (a
// recursive schema) counts one.
type expansion struct {
	g    *schemaGraph
	size map[*node]int
	open map[*node]bool
}

func (e *expansion) of(n *node) (int, error) {
	if s, ok := e.size[n]; ok {
		return s, nil
	}
	if e.open[n] {
		return 1, nil
	}
	e.open[n] = true
	defer delete(e.open, n)
	total := 1
	add := func(s int) { total = min(total+s, MaxExpansion+1) }
	switch n.kind {
	case '{':
		for _, m := range n.members {
			if m.name == "$defs" || m.name == "definitions" {
				continue // reached through references only
			}
			if ref, ok := refOf(m); ok {
				target, err := e.g.resolve(n, ref)
				if err != nil {
					if e.g.strict {
						return 0, err
					}
					add(1) // nothing to follow
					continue
				}
				s, err := e.of(target)
				if err != nil {
					return 0, err
				}
				add(s)
				continue
			}
			s, err := e.of(m.value)
			if err != nil {
				return 0, err
			}
			add(s)
		}
	case '[':
		for _, el := range n.elems {
			s, err := e.of(el)
			if err != nil {
				return 0, err
			}
			add(s)
		}
	}
	e.size[n] = total
	return total, nil
}

// budgetWalk counts the steps the general validator takes to check a value (decoded as by
// decodeAny) against the schema, over-approximating where the outcome of a keyword would
// decide (every alternative, every branch of a condition, every member for pattern and
// additional properties). It stops as soon as left runs out, or when it would nest deeper
// than maxWalkDepth (a reference cycle that does not descend into the value — which the
// validator refuses as a loop — or a value nested beyond what a schema walk should follow).
type budgetWalk struct {
	g     *schemaGraph
	left  int
	depth int
}

// maxWalkDepth bounds the nesting of a budget walk: a tree 500 levels deep takes a few
// frames per level.
const maxWalkDepth = 4096

// fits reports whether validating v against the graph's root fits in budget steps.
func (g *schemaGraph) fits(v any, budget int) bool {
	w := budgetWalk{g: g, left: budget}
	return w.visit(g.root, v)
}

func (w *budgetWalk) visit(s *node, v any) bool {
	w.left--
	if w.left < 0 || w.depth >= maxWalkDepth {
		return false
	}
	w.depth++
	ok := w.apply(s, v)
	w.depth--
	return ok
}

// apply walks the keywords of schema s at value v.
func (w *budgetWalk) apply(s *node, v any) bool {
	if s.kind != '{' {
		return true // true, false
	}
	obj, _ := v.(map[string]any)
	arr, _ := v.([]any)
	for _, m := range s.members {
		w.left--
		if w.left < 0 {
			return false
		}
		sub := m.value
		ok := true
		switch m.name {
		case "$ref", "$dynamicRef":
			if ref, isRef := refOf(m); isRef {
				if target, err := w.g.resolve(s, ref); err == nil {
					ok = w.visit(target, v)
				}
			}
		case "allOf", "anyOf", "oneOf":
			for _, e := range sub.elems {
				if ok = w.visit(e, v); !ok {
					break
				}
			}
		case "not", "if", "then", "else":
			ok = w.visit(sub, v)
		case "dependentSchemas":
			if obj != nil {
				for _, d := range sub.members {
					if ok = w.visit(d.value, v); !ok {
						break
					}
				}
			}
		case "properties":
			for _, p := range sub.members {
				if pv, has := obj[p.name]; has {
					if ok = w.visit(p.value, pv); !ok {
						break
					}
				}
			}
		case "patternProperties":
			for _, p := range sub.members {
				if ok = w.eachMember(p.value, obj); !ok {
					break
				}
			}
		case "additionalProperties", "unevaluatedProperties":
			ok = w.eachMember(sub, obj)
		case "propertyNames":
			for name := range obj {
				if ok = w.visit(sub, name); !ok {
					break
				}
			}
		case "items", "unevaluatedItems", "contains":
			for _, e := range arr {
				if ok = w.visit(sub, e); !ok {
					break
				}
			}
		case "prefixItems":
			for i, p := range sub.elems {
				if i >= len(arr) {
					break
				}
				if ok = w.visit(p, arr[i]); !ok {
					break
				}
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func (w *budgetWalk) eachMember(s *node, obj map[string]any) bool {
	for _, mv := range obj {
		if !w.visit(s, mv) {
			return false
		}
	}
	return true
}
