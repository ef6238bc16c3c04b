package schema

import (
	"errors"
	"iter"

	"github.com/go-json-experiment/json/jsontext"
)

// Document is a schema document read into the tree that the compiler, the bounds and the
// validation budget read too, for tools that walk a schema themselves (the player's form
// generator): object members in the order the author wrote them, references resolved as
// the validator resolves them.
//
// The tree is the schema's published form: the keywords the closed-object default implies
// are omitted, so an object schema without additionalProperties admits no other member
// (docs/protocol/catalog.md#closed-objects). A Document is not safe for concurrent use
// until CheckBounds has returned.
type Document struct {
	root  *node
	graph *schemaGraph
	err   error // of the bounds check, once made
}

// Parse reads a schema document strictly (valid JSON, no duplicate member names, at most
// 1 MiB); the result is an object or a boolean schema. It does not check the document's
// bounds: see [Document.CheckBounds].
func Parse(raw []byte) (*Document, error) {
	tree, err := parseTree(raw)
	if err != nil {
		return nil, err
	}
	if tree.kind != '{' && tree.kind != 't' && tree.kind != 'f' {
		return nil, errors.New("schema must be an object or a boolean")
	}
	publishClosed(tree)
	return &Document{root: tree}, nil
}

// CheckBounds reports whether the document stays within MaxDepth, MaxValues and
// MaxExpansion, as the package-level [CheckBounds] does. A walk that follows references and
// alternatives does work bounded by the expanded size only once this holds.
func (d *Document) CheckBounds() error {
	if d.graph == nil && d.err == nil {
		d.graph, d.err = newSchemaGraph(d.root, false)
	}
	return d.err
}

// Root returns the document's top-level schema.
func (d *Document) Root() Node { return Node{d.root} }

// Resolve returns what the reference ref ($ref or $dynamicRef), written in the schema
// object from, points to: "#", a JSON pointer fragment or an anchor, relative to the
// nearest enclosing $id. A reference to another document does not resolve. The bounds
// are checked first, and their error is Resolve's.
func (d *Document) Resolve(from Node, ref string) (Node, error) {
	if err := d.CheckBounds(); err != nil {
		return Node{}, err
	}
	n, err := d.graph.resolve(from.n, ref)
	return Node{n}, err
}

// Node is one value of a Document: an object, array, string, number, boolean or null. The
// zero Node is no value (what Get returns for a missing member). Nodes compare equal when
// they are the same value of the same document.
type Node struct{ n *node }

// Kind returns the kind of JSON value: '{', '[', '"', '0', 't', 'f' or 'n'; 0 for the zero
// Node.
func (v Node) Kind() jsontext.Kind {
	if v.n == nil {
		return 0
	}
	return v.n.kind
}

// Get returns the member name of an object, or the zero Node.
func (v Node) Get(name string) Node { return Node{v.n.get(name)} }

// Members yields the members of an object in document order.
func (v Node) Members() iter.Seq2[string, Node] {
	return func(yield func(string, Node) bool) {
		if v.n == nil {
			return
		}
		for _, m := range v.n.members {
			if !yield(m.name, Node{m.value}) {
				return
			}
		}
	}
}

// Elems yields the elements of an array in order.
func (v Node) Elems() iter.Seq[Node] {
	return func(yield func(Node) bool) {
		if v.n == nil {
			return
		}
		for _, e := range v.n.elems {
			if !yield(Node{e}) {
				return
			}
		}
	}
}

// Len returns the number of members of an object or elements of an array.
func (v Node) Len() int {
	if v.n == nil {
		return 0
	}
	return len(v.n.members) + len(v.n.elems)
}

// Text returns the value of a string, unquoted, or "".
func (v Node) Text() string {
	if v.n == nil {
		return ""
	}
	return v.n.str
}

// JSON returns the value as compact JSON, or nil for the zero Node.
func (v Node) JSON() jsontext.Value {
	if v.n == nil {
		return nil
	}
	return v.n.appendJSON(nil)
}
