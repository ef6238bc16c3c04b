package player

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Field kinds of a form.
const (
	KindObject  = "object"
	KindArray   = "array"
	KindString  = "string"
	KindInteger = "integer"
	KindNumber  = "number"
	KindBoolean = "boolean"
	KindEnum    = "enum"
	// KindJSON is a value the form cannot express with inputs (composition, recursion, a
	// free-form object, several types): the page edits it as raw JSON. Reason says why.
	KindJSON = "json"
)

// Bounds of form generation: a schema from an app is untrusted input.
const (
	maxFormDepth  = 12   // nested objects and arrays
	maxFormFields = 1000 // fields in one form
	// multilineAbove is the maxLength above which a string gets a text area: ids and
	// names stay on one line, bodies of text do not.
	multilineAbove = 1024
)

// Field is one input of a form generated from a tool's argumentsSchema by [FormOf]: a
// normalized view of the schema in which references are resolved, allOf merged, nullable
// types and scalar alternatives folded, and everything else marked KindJSON. The page
// renders it; validation stays with the schema itself (the host's validator).
type Field struct {
	Kind        string         `json:"kind"`
	Title       string         `json:"title,omitzero"`
	Description string         `json:"description,omitzero"`
	Default     jsontext.Value `json:"default,omitzero"`
	// Enum lists the allowed values of a KindEnum field (a const is a one-value enum).
	Enum []jsontext.Value `json:"enum,omitempty"`
	// Nullable: null is allowed too (the form sends null only from the raw editor).
	Nullable bool `json:"nullable,omitzero"`

	// Strings.
	Format    string `json:"format,omitzero"`
	Pattern   string `json:"pattern,omitzero"`
	MinLength *int64 `json:"minLength,omitzero"`
	MaxLength *int64 `json:"maxLength,omitzero"`
	Multiline bool   `json:"multiline,omitzero"`

	// Numbers.
	Minimum          *float64 `json:"minimum,omitzero"`
	Maximum          *float64 `json:"maximum,omitzero"`
	ExclusiveMinimum *float64 `json:"exclusiveMinimum,omitzero"`
	ExclusiveMaximum *float64 `json:"exclusiveMaximum,omitzero"`
	MultipleOf       *float64 `json:"multipleOf,omitzero"`

	// Objects: the properties in schema order. Open says other members are allowed too
	// (only the raw editor can add them).
	Properties []Property `json:"properties,omitempty"`
	Open       bool       `json:"open,omitzero"`

	// Arrays.
	Items    *Field `json:"items,omitzero"`
	MinItems *int64 `json:"minItems,omitzero"`
	MaxItems *int64 `json:"maxItems,omitzero"`

	// Reason says why a KindJSON field is raw JSON.
	Reason string `json:"reason,omitzero"`
}

// Property is one member of an object field.
type Property struct {
	Name     string `json:"name"`
	Required bool   `json:"required,omitzero"`
	Field    *Field `json:"field"`
}

// FormOf normalizes an argumentsSchema into a form. An empty schema gives an empty
// object form (a tool without arguments). Only malformed JSON is an error: whatever the
// form cannot express becomes a KindJSON field, and so does a schema beyond the
// complexity bounds of schemas.
func FormOf(schema jsontext.Value) (*Field, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return &Field{Kind: KindObject}, nil
	}
	root, err := parseSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("player: argumentsSchema: %w", err)
	}
	// The work below follows references and alternatives: bounded by the schema's size
	// with its references expanded, which an app's schema must not make unbounded.
	if err := checkSchemaBounds(schema); err != nil {
		return jsonField(nil, err.Error()), nil
	}
	g := &formGen{root: schema}
	return g.field(root, 0, nil), nil
}

// schemaNode is one schema object: its members, raw, plus the order of its properties.
type schemaNode struct {
	members map[string]jsontext.Value
	bool    *bool // a boolean schema (true: anything, false: nothing)
}

func parseSchema(raw jsontext.Value) (*schemaNode, error) {
	raw = bytes.TrimSpace(raw)
	switch string(raw) {
	case "true", "false":
		b := string(raw) == "true"
		return &schemaNode{bool: &b}, nil
	}
	var m map[string]jsontext.Value
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return &schemaNode{members: m}, nil
}

// formGen holds the document for resolving references and counts fields.
type formGen struct {
	root   jsontext.Value
	fields int
	// targets caches resolved references: a schema may refer to one definition many
	// times, and each resolution would otherwise walk the document again.
	targets map[string]*schemaNode
}

// jsonField is a raw-JSON field with a reason.
func jsonField(n *schemaNode, reason string) *Field {
	f := &Field{Kind: KindJSON, Reason: reason}
	if n != nil {
		f.Title, f.Description = n.str("title"), n.str("description")
		f.Default = n.members["default"]
	}
	return f
}

func (n *schemaNode) str(name string) string {
	var s string
	if raw, ok := n.members[name]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

func (n *schemaNode) num(name string) *float64 {
	raw, ok := n.members[name]
	if !ok {
		return nil
	}
	var v float64
	if json.Unmarshal(raw, &v) != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

func (n *schemaNode) count(name string) *int64 {
	v := n.num(name)
	if v == nil || *v < 0 || *v != math.Trunc(*v) || *v > 1<<53 {
		return nil
	}
	i := int64(*v)
	return &i
}

// field builds the field of schema n at depth; refs are the references being expanded on
// the way here (to stop at recursion).
func (g *formGen) field(n *schemaNode, depth int, refs []string) *Field {
	g.fields++
	switch {
	case g.fields > maxFormFields:
		return jsonField(n, "the schema has too many fields for a form")
	case depth > maxFormDepth:
		return jsonField(n, "nested too deeply for a form")
	case n.bool != nil:
		if *n.bool {
			return jsonField(nil, "any JSON value")
		}
		return jsonField(nil, "no value is allowed")
	}
	n, refs, err := g.resolve(n, refs)
	switch {
	case err != nil:
		return jsonField(n, err.Error())
	case n.bool != nil: // a reference to a boolean schema
		return jsonField(n, "any JSON value")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if raw, ok := n.members[k]; ok {
			return g.alternatives(n, k, raw, depth, refs)
		}
	}
	if _, ok := n.members["not"]; ok {
		return jsonField(n, "the schema uses not")
	}

	types, nullable, err := n.types()
	if err != nil {
		return jsonField(n, err.Error())
	}
	var f *Field
	switch {
	case n.members["enum"] != nil || n.members["const"] != nil:
		f = g.enum(n)
	case len(types) > 1:
		f = jsonField(n, "several types are allowed: "+strings.Join(types, ", "))
	case len(types) == 0:
		switch {
		case n.members["properties"] != nil:
			f = g.object(n, depth, refs)
		case n.members["items"] != nil:
			f = g.array(n, depth, refs)
		default:
			f = jsonField(n, "any JSON value")
		}
	default:
		switch types[0] {
		case "object":
			f = g.object(n, depth, refs)
		case "array":
			f = g.array(n, depth, refs)
		case "string":
			f = &Field{Kind: KindString, Format: n.str("format"), Pattern: n.str("pattern"),
				MinLength: n.count("minLength"), MaxLength: n.count("maxLength")}
			f.Multiline = f.MaxLength != nil && *f.MaxLength > multilineAbove
		case "integer", "number":
			f = &Field{Kind: types[0], Minimum: n.num("minimum"), Maximum: n.num("maximum"),
				ExclusiveMinimum: n.num("exclusiveMinimum"), ExclusiveMaximum: n.num("exclusiveMaximum"), MultipleOf: n.num("multipleOf")}
		case "boolean":
			f = &Field{Kind: KindBoolean}
		case "null":
			f = &Field{Kind: KindEnum, Enum: []jsontext.Value{jsontext.Value("null")}}
		default:
			f = jsonField(n, "unknown type "+strconv.Quote(types[0]))
		}
	}
	if f.Title == "" {
		f.Title = n.str("title")
	}
	if f.Description == "" {
		f.Description = n.str("description")
	}
	if f.Default == nil {
		f.Default = n.members["default"]
	}
	f.Nullable = f.Nullable || nullable
	return f
}

// resolve follows $ref (local JSON pointers only) and merges allOf into one node.
func (g *formGen) resolve(n *schemaNode, refs []string) (*schemaNode, []string, error) {
	for range 32 { // a chain of references to references
		raw, ok := n.members["$ref"]
		if !ok {
			break
		}
		var ref string
		if err := json.Unmarshal(raw, &ref); err != nil {
			return n, refs, errors.New("the schema has a malformed $ref")
		}
		if slices.Contains(refs, ref) {
			return n, refs, errors.New("the schema is recursive (" + ref + ")")
		}
		target, err := g.pointer(ref)
		if err != nil {
			return n, refs, err
		}
		refs = append(slices.Clip(refs), ref)
		// Members beside $ref (description, default) apply as well; the target's fill in.
		merged := &schemaNode{members: maps(target.members)}
		for k, v := range n.members {
			if k != "$ref" {
				merged.members[k] = v
			}
		}
		if target.bool != nil {
			merged.bool = target.bool
			return merged, refs, nil
		}
		n = merged
	}
	if raw, ok := n.members["allOf"]; ok {
		var parts []jsontext.Value
		if err := json.Unmarshal(raw, &parts); err != nil {
			return n, refs, errors.New("the schema has a malformed allOf")
		}
		merged := &schemaNode{members: maps(n.members)}
		delete(merged.members, "allOf")
		for _, p := range parts {
			pn, err := parseSchema(p)
			if err != nil || pn.bool != nil {
				return n, refs, errors.New("the schema uses allOf with a boolean or malformed part")
			}
			pn, prefs, err := g.resolve(pn, refs)
			if err != nil {
				return n, refs, err
			}
			refs = prefs
			if err := mergeInto(merged, pn); err != nil {
				return n, refs, err
			}
		}
		n = merged
	}
	return n, refs, nil
}

func maps(m map[string]jsontext.Value) map[string]jsontext.Value {
	out := make(map[string]jsontext.Value, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// mergeInto adds the members of part to dst: properties and required are unioned (dst's
// properties first); other members of dst win.
func mergeInto(dst, part *schemaNode) error {
	for k, v := range part.members {
		switch k {
		case "properties":
			if old, ok := dst.members[k]; ok {
				joined, err := joinObjects(old, v)
				if err != nil {
					return err
				}
				v = joined
			}
			dst.members[k] = v
		case "required":
			var a, b []string
			_ = json.Unmarshal(dst.members[k], &a)
			if err := json.Unmarshal(v, &b); err != nil {
				return errors.New("the schema has a malformed required")
			}
			for _, s := range b {
				if !slices.Contains(a, s) {
					a = append(a, s)
				}
			}
			raw, _ := json.Marshal(a)
			dst.members[k] = raw
		default:
			if _, ok := dst.members[k]; !ok {
				dst.members[k] = v
			}
		}
	}
	return nil
}

// joinObjects concatenates the members of two JSON objects, keeping a's on duplicates.
func joinObjects(a, b jsontext.Value) (jsontext.Value, error) {
	am, err := orderedMembers(a)
	if err != nil {
		return nil, err
	}
	bm, err := orderedMembers(b)
	if err != nil {
		return nil, err
	}
	var enc jsontext.Encoder
	var buf bytes.Buffer
	enc.Reset(&buf)
	enc.WriteToken(jsontext.BeginObject)
	seen := map[string]bool{}
	for _, m := range append(am, bm...) {
		if seen[m.name] {
			continue
		}
		seen[m.name] = true
		enc.WriteToken(jsontext.String(m.name))
		enc.WriteValue(m.value)
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

type member struct {
	name  string
	value jsontext.Value
}

// orderedMembers lists an object's members in document order.
func orderedMembers(raw jsontext.Value) ([]member, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errors.New("the schema has a properties member that is not an object")
	}
	var out []member
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String() // before the next read voids the token
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		out = append(out, member{name, slices.Clone(v)})
	}
	return out, nil
}

// pointer resolves a reference inside the document: "#", "#/$defs/x", "#/definitions/x"
// or any other JSON pointer fragment.
func (g *formGen) pointer(ref string) (*schemaNode, error) {
	if n, ok := g.targets[ref]; ok {
		return n, nil
	}
	n, err := g.walk(ref)
	if err != nil {
		return nil, err
	}
	if g.targets == nil {
		g.targets = map[string]*schemaNode{}
	}
	g.targets[ref] = n
	return n, nil
}

func (g *formGen) walk(ref string) (*schemaNode, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, errors.New("the schema refers to another document (" + ref + ")")
	}
	cur := g.root
	if ptr := ref[1:]; ptr != "" {
		if !strings.HasPrefix(ptr, "/") {
			return nil, errors.New("the schema uses an anchor reference (" + ref + ")")
		}
		for _, tok := range strings.Split(ptr[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			var obj map[string]jsontext.Value
			if err := json.Unmarshal(cur, &obj); err != nil {
				return nil, errors.New("the schema's reference " + ref + " does not resolve")
			}
			next, ok := obj[tok]
			if !ok {
				return nil, errors.New("the schema's reference " + ref + " does not resolve")
			}
			cur = next
		}
	}
	n, err := parseSchema(cur)
	if err != nil {
		return nil, errors.New("the schema's reference " + ref + " is not a schema")
	}
	return n, nil
}

// types reads "type" (a string or an array), taking "null" out as nullable.
func (n *schemaNode) types() (types []string, nullable bool, err error) {
	raw, ok := n.members["type"]
	if !ok {
		return nil, false, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, false, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, false, errors.New("the schema has a malformed type")
	}
	for _, t := range many {
		if t == "null" {
			nullable = true
		} else {
			types = append(types, t)
		}
	}
	if len(types) == 0 && nullable {
		return []string{"null"}, false, nil
	}
	return types, nullable, nil
}

func (g *formGen) enum(n *schemaNode) *Field {
	f := &Field{Kind: KindEnum}
	if raw, ok := n.members["const"]; ok {
		f.Enum = []jsontext.Value{raw}
	} else if err := json.Unmarshal(n.members["enum"], &f.Enum); err != nil || len(f.Enum) == 0 {
		return jsonField(n, "the schema has a malformed enum")
	}
	for i, v := range f.Enum {
		if string(v) == "null" {
			f.Enum = slices.Delete(f.Enum, i, i+1)
			f.Nullable = true
			break
		}
	}
	if len(f.Enum) == 0 {
		f.Enum = []jsontext.Value{jsontext.Value("null")}
	}
	return f
}

// alternatives folds anyOf/oneOf of scalar constants into an enum, and X-or-null into a
// nullable X; anything else is raw JSON.
func (g *formGen) alternatives(n *schemaNode, keyword string, raw jsontext.Value, depth int, refs []string) *Field {
	var parts []jsontext.Value
	if err := json.Unmarshal(raw, &parts); err != nil || len(parts) == 0 {
		return jsonField(n, "the schema has a malformed "+keyword)
	}
	type branch struct {
		n    *schemaNode
		refs []string
	}
	var consts []jsontext.Value
	var other []branch
	nullable := false
	for _, p := range parts {
		pn, err := parseSchema(p)
		if err != nil {
			return jsonField(n, "the schema has a malformed "+keyword)
		}
		prefs := refs
		if pn.bool == nil {
			if pn, prefs, err = g.resolve(pn, refs); err != nil {
				return jsonField(n, err.Error())
			}
		}
		_, hasEnum := pn.members["enum"]
		_, hasConst := pn.members["const"]
		if t, _, _ := pn.types(); len(t) == 1 && t[0] == "null" && !hasEnum && !hasConst {
			nullable = true
			continue
		}
		if hasEnum || hasConst {
			if e := g.enum(pn); e.Kind == KindEnum {
				consts = append(consts, e.Enum...)
				nullable = nullable || e.Nullable
				continue
			}
		}
		other = append(other, branch{pn, prefs})
	}
	var f *Field
	switch {
	case len(other) == 0 && len(consts) > 0:
		f = &Field{Kind: KindEnum, Enum: consts}
	case len(other) == 1 && len(consts) == 0:
		inner := &schemaNode{members: maps(other[0].n.members), bool: other[0].n.bool}
		if inner.bool == nil {
			for _, k := range []string{"title", "description", "default"} {
				if v, ok := n.members[k]; ok {
					inner.members[k] = v
				}
			}
		}
		f = g.field(inner, depth, other[0].refs)
	default:
		return jsonField(n, "the schema offers alternatives ("+keyword+")")
	}
	f.Nullable = f.Nullable || nullable
	if f.Title == "" {
		f.Title = n.str("title")
	}
	if f.Description == "" {
		f.Description = n.str("description")
	}
	if f.Default == nil {
		f.Default = n.members["default"]
	}
	return f
}

func (g *formGen) object(n *schemaNode, depth int, refs []string) *Field {
	f := &Field{Kind: KindObject}
	var required []string
	if raw, ok := n.members["required"]; ok {
		if err := json.Unmarshal(raw, &required); err != nil {
			return jsonField(n, "the schema has a malformed required")
		}
	}
	// The protocol's closed-object default: other members are refused unless the schema
	// says otherwise.
	if ap, ok := n.members["additionalProperties"]; ok && string(bytes.TrimSpace(ap)) != "false" {
		f.Open = true
	}
	if raw, ok := n.members["properties"]; ok {
		members, err := orderedMembers(raw)
		if err != nil {
			return jsonField(n, err.Error())
		}
		for _, m := range members {
			pn, err := parseSchema(m.value)
			var pf *Field
			if err != nil {
				pf = jsonField(nil, "the property's schema is malformed")
			} else {
				pf = g.field(pn, depth+1, refs)
			}
			f.Properties = append(f.Properties, Property{Name: m.name, Required: slices.Contains(required, m.name), Field: pf})
		}
	}
	if len(f.Properties) == 0 && f.Open {
		return jsonField(n, "a free-form object")
	}
	return f
}

func (g *formGen) array(n *schemaNode, depth int, refs []string) *Field {
	f := &Field{Kind: KindArray, MinItems: n.count("minItems"), MaxItems: n.count("maxItems")}
	if _, ok := n.members["prefixItems"]; ok {
		return jsonField(n, "a tuple (prefixItems)")
	}
	raw, ok := n.members["items"]
	if !ok {
		return jsonField(n, "an array of any values")
	}
	in, err := parseSchema(raw)
	if err != nil {
		return jsonField(n, "the schema has malformed items")
	}
	f.Items = g.field(in, depth+1, refs)
	return f
}
