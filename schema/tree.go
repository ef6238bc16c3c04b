package schema

import (
	"bytes"
	"encoding/json" // only for the json.Number type the schema library expects; never to decode
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// maxSchemaBytes bounds a schema document; schemas are developer input, but a Set holds
// thousands of them and the published form is sent on every definitions query.
const maxSchemaBytes = 1 << 20

// node is a parsed JSON value that keeps object member order, so that a published schema
// reads the way its author wrote it.
type node struct {
	kind    jsontext.Kind // '{', '[', '"', '0', 't', 'f' or 'n'
	members []member      // objects
	elems   []*node       // arrays
	raw     []byte        // scalars, compact
	str     string        // strings, unquoted
}

type member struct {
	name  string
	value *node
}

// parseTree parses one JSON value strictly: valid UTF-8, no duplicate names, nesting
// bounded by the decoder's default depth limit.
func parseTree(raw []byte) (*node, error) {
	if len(raw) > maxSchemaBytes {
		return nil, fmt.Errorf("schema is %d bytes (at most %d)", len(raw), maxSchemaBytes)
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	n, err := readNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("unexpected data after the schema")
		}
		return nil, err
	}
	return n, nil
}

func readNode(dec *jsontext.Decoder) (*node, error) {
	switch k := dec.PeekKind(); k {
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		n := &node{kind: '{'}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // before the next read voids the token
			v, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, member{name, v})
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return n, nil
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		n := &node{kind: '['}
		for dec.PeekKind() != ']' {
			v, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return n, nil
	default:
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		n := &node{kind: v.Kind(), raw: bytes.Clone(v)}
		if n.kind == '"' {
			u, err := jsontext.AppendUnquote(nil, v)
			if err != nil {
				return nil, err
			}
			n.str = string(u)
		}
		return n, nil
	}
}

// get returns the value of member name, or nil.
func (n *node) get(name string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i := range n.members {
		if n.members[i].name == name {
			return n.members[i].value
		}
	}
	return nil
}

// has reports whether the object n has member name.
func (n *node) has(name string) bool { return n.get(name) != nil }

// set replaces member name or appends it.
func (n *node) set(name string, v *node) {
	for i := range n.members {
		if n.members[i].name == name {
			n.members[i].value = v
			return
		}
	}
	n.members = append(n.members, member{name, v})
}

// remove deletes member name.
func (n *node) remove(name string) {
	for i := range n.members {
		if n.members[i].name == name {
			n.members = append(n.members[:i], n.members[i+1:]...)
			return
		}
	}
}

// isFalse reports whether n is the literal false.
func (n *node) isFalse() bool { return n != nil && n.kind == 'f' }

// clone deep-copies n.
func (n *node) clone() *node {
	c := *n
	if n.members != nil {
		c.members = make([]member, len(n.members))
		for i, m := range n.members {
			c.members[i] = member{m.name, m.value.clone()}
		}
	}
	if n.elems != nil {
		c.elems = make([]*node, len(n.elems))
		for i, e := range n.elems {
			c.elems[i] = e.clone()
		}
	}
	return &c
}

var falseNode = &node{kind: 'f', raw: []byte("false")}

// appendJSON appends n as compact JSON.
func (n *node) appendJSON(dst []byte) []byte {
	switch n.kind {
	case '{':
		dst = append(dst, '{')
		for i, m := range n.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst, _ = jsontext.AppendQuote(dst, m.name) // names came from valid JSON
			dst = append(dst, ':')
			dst = m.value.appendJSON(dst)
		}
		return append(dst, '}')
	case '[':
		dst = append(dst, '[')
		for i, e := range n.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = e.appendJSON(dst)
		}
		return append(dst, ']')
	default:
		return append(dst, n.raw...)
	}
}

// toAny converts n to the generic form the schema library compiles: map[string]any,
// []any, string, json.Number, bool and nil.
func (n *node) toAny() any {
	switch n.kind {
	case '{':
		m := make(map[string]any, len(n.members))
		for _, mb := range n.members {
			m[mb.name] = mb.value.toAny()
		}
		return m
	case '[':
		a := make([]any, len(n.elems))
		for i, e := range n.elems {
			a[i] = e.toAny()
		}
		return a
	case '"':
		return n.str
	case '0':
		return json.Number(n.raw)
	case 't':
		return true
	case 'f':
		return false
	default:
		return nil
	}
}
