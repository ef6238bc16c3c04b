package player

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/schema"
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
// complexity bounds of schemas (schema.CheckBounds).
//
// The form reads the schema as the validator does: the same parsed tree (schema.Document),
// with references resolved the same way.
func FormOf(raw jsontext.Value) (*Field, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return &Field{Kind: KindObject}, nil
	}
	doc, err := schema.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("player: argumentsSchema: %w", err)
	}
	// The work below follows references and alternatives: bounded by the schema's size
	// with its references expanded, which an app's schema must not make unbounded.
	if err := doc.CheckBounds(); err != nil {
		return jsonField(nil, err.Error()), nil
	}
	root, _ := viewOf(doc.Root()) // an object or a boolean: Parse checked
	g := &formGen{doc: doc}
	return g.field(root, 0, nil), nil
}

// view is a schema object as the form reads it: the members of one object of the
// document, or of several merged into one (a $ref with its target, the parts of an allOf).
type view struct {
	kw      map[string]schema.Node // keywords
	boolean *bool                  // a boolean schema (true: anything, false: nothing)
	// from is the object a $ref among kw is written in: references resolve from there.
	from schema.Node
	// props and required replace kw's properties and required once allOf parts with
	// properties (or required) on both sides were merged.
	props          []prop
	required       []string
	mergedProps    bool
	mergedRequired bool
}

// prop is one member of properties: a name and its schema.
type prop struct {
	name   string
	schema schema.Node
}

// viewOf reads a schema: an object or a boolean.
func viewOf(n schema.Node) (*view, error) {
	switch n.Kind() {
	case '{':
		v := &view{kw: make(map[string]schema.Node, n.Len()), from: n}
		for name, val := range n.Members() {
			v.kw[name] = val
		}
		return v, nil
	case 't', 'f':
		b := n.Kind() == 't'
		return &view{kw: map[string]schema.Node{}, boolean: &b}, nil
	}
	return nil, errors.New("not a schema")
}

// clone copies v, so that merging into the copy leaves v as it was.
func (v *view) clone() *view {
	c := *v
	c.kw = maps.Clone(v.kw)
	return &c
}

func (v *view) has(name string) bool {
	switch {
	case name == "properties" && v.mergedProps, name == "required" && v.mergedRequired:
		return true
	}
	_, ok := v.kw[name]
	return ok
}

// properties lists the object's properties in schema order.
func (v *view) properties() ([]prop, error) {
	if v.mergedProps {
		return v.props, nil
	}
	p, ok := v.kw["properties"]
	if !ok {
		return nil, nil
	}
	if p.Kind() != '{' {
		return nil, errors.New("the schema has a properties member that is not an object")
	}
	var out []prop
	for name, s := range p.Members() {
		out = append(out, prop{name, s})
	}
	return out, nil
}

// requiredNames reads required: an array of strings.
func (v *view) requiredNames() ([]string, error) {
	if v.mergedRequired {
		return v.required, nil
	}
	r, ok := v.kw["required"]
	if !ok || r.Kind() == 'n' {
		return nil, nil
	}
	if r.Kind() != '[' {
		return nil, errors.New("the schema has a malformed required")
	}
	var out []string
	for e := range r.Elems() {
		if e.Kind() != '"' {
			return nil, errors.New("the schema has a malformed required")
		}
		out = append(out, e.Text())
	}
	return out, nil
}

// formGen holds the document for resolving references and counts fields.
type formGen struct {
	doc    *schema.Document
	fields int
}

// jsonField is a raw-JSON field with a reason.
func jsonField(v *view, reason string) *Field {
	f := &Field{Kind: KindJSON, Reason: reason}
	if v != nil {
		f.Title, f.Description = v.str("title"), v.str("description")
		f.Default = v.kw["default"].JSON()
	}
	return f
}

func (v *view) str(name string) string { return v.kw[name].Text() }

func (v *view) num(name string) *float64 {
	n := v.kw[name]
	if n.Kind() != '0' {
		return nil
	}
	f, err := strconv.ParseFloat(string(n.JSON()), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil
	}
	return &f
}

func (v *view) count(name string) *int64 {
	f := v.num(name)
	if f == nil || *f < 0 || *f != math.Trunc(*f) || *f > 1<<53 {
		return nil
	}
	i := int64(*f)
	return &i
}

// field builds the field of schema v at depth; refs are the references being expanded on
// the way here (to stop at recursion).
func (g *formGen) field(v *view, depth int, refs []string) *Field {
	g.fields++
	switch {
	case g.fields > maxFormFields:
		return jsonField(v, "the schema has too many fields for a form")
	case depth > maxFormDepth:
		return jsonField(v, "nested too deeply for a form")
	case v.boolean != nil:
		if *v.boolean {
			return jsonField(nil, "any JSON value")
		}
		return jsonField(nil, "no value is allowed")
	}
	v, refs, err := g.resolve(v, refs)
	switch {
	case err != nil:
		return jsonField(v, err.Error())
	case v.boolean != nil: // a reference to a boolean schema
		return jsonField(v, "any JSON value")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alt, ok := v.kw[k]; ok {
			return g.alternatives(v, k, alt, depth, refs)
		}
	}
	if v.has("not") {
		return jsonField(v, "the schema uses not")
	}

	types, nullable, err := v.types()
	if err != nil {
		return jsonField(v, err.Error())
	}
	var f *Field
	switch {
	case v.has("enum") || v.has("const"):
		f = g.enum(v)
	case len(types) > 1:
		f = jsonField(v, "several types are allowed: "+strings.Join(types, ", "))
	case len(types) == 0:
		switch {
		case v.has("properties"):
			f = g.object(v, depth, refs)
		case v.has("items"):
			f = g.array(v, depth, refs)
		default:
			f = jsonField(v, "any JSON value")
		}
	default:
		switch types[0] {
		case "object":
			f = g.object(v, depth, refs)
		case "array":
			f = g.array(v, depth, refs)
		case "string":
			f = &Field{Kind: KindString, Format: v.str("format"), Pattern: v.str("pattern"),
				MinLength: v.count("minLength"), MaxLength: v.count("maxLength")}
			f.Multiline = f.MaxLength != nil && *f.MaxLength > multilineAbove
		case "integer", "number":
			f = &Field{Kind: types[0], Minimum: v.num("minimum"), Maximum: v.num("maximum"),
				ExclusiveMinimum: v.num("exclusiveMinimum"), ExclusiveMaximum: v.num("exclusiveMaximum"), MultipleOf: v.num("multipleOf")}
		case "boolean":
			f = &Field{Kind: KindBoolean}
		case "null":
			f = &Field{Kind: KindEnum, Enum: []jsontext.Value{jsontext.Value("null")}}
		default:
			f = jsonField(v, "unknown type "+strconv.Quote(types[0]))
		}
	}
	annotate(f, v)
	f.Nullable = f.Nullable || nullable
	return f
}

// annotate gives f the title, description and default of v where f has none.
func annotate(f *Field, v *view) {
	if f.Title == "" {
		f.Title = v.str("title")
	}
	if f.Description == "" {
		f.Description = v.str("description")
	}
	if f.Default == nil {
		f.Default = v.kw["default"].JSON()
	}
}

// resolve follows $ref (inside the document) and merges allOf into one view.
func (g *formGen) resolve(v *view, refs []string) (*view, []string, error) {
	for range 32 { // a chain of references to references
		r, ok := v.kw["$ref"]
		if !ok {
			break
		}
		if r.Kind() != '"' {
			return v, refs, errors.New("the schema has a malformed $ref")
		}
		ref := r.Text()
		if slices.Contains(refs, ref) {
			return v, refs, errors.New("the schema is recursive (" + ref + ")")
		}
		target, err := g.target(v.from, ref)
		if err != nil {
			return v, refs, err
		}
		refs = append(slices.Clip(refs), ref)
		// Members beside $ref (description, default) apply as well; the target's fill in.
		for k, val := range v.kw {
			if k != "$ref" {
				target.kw[k] = val
			}
		}
		if target.boolean != nil {
			return target, refs, nil
		}
		v = target
	}
	if all, ok := v.kw["allOf"]; ok {
		if all.Kind() != '[' {
			return v, refs, errors.New("the schema has a malformed allOf")
		}
		merged := v.clone()
		delete(merged.kw, "allOf")
		for part := range all.Elems() {
			pv, err := viewOf(part)
			if err != nil || pv.boolean != nil {
				return v, refs, errors.New("the schema uses allOf with a boolean or malformed part")
			}
			pv, prefs, err := g.resolve(pv, refs)
			if err != nil {
				return v, refs, err
			}
			refs = prefs
			if err := mergeInto(merged, pv); err != nil {
				return v, refs, err
			}
		}
		v = merged
	}
	return v, refs, nil
}

// target resolves a reference as the validator does (schema.Document.Resolve) and reads
// what it points to.
func (g *formGen) target(from schema.Node, ref string) (*view, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, errors.New("the schema refers to another document (" + ref + ")")
	}
	n, err := g.doc.Resolve(from, ref)
	if err != nil {
		return nil, errors.New("the schema's reference " + ref + " does not resolve")
	}
	v, err := viewOf(n)
	if err != nil {
		return nil, errors.New("the schema's reference " + ref + " is not a schema")
	}
	return v, nil
}

// mergeInto adds part to dst: properties and required are unioned (dst's properties
// first); other members of dst win.
func mergeInto(dst, part *view) error {
	if part.has("properties") {
		if !dst.has("properties") {
			dst.kw["properties"], dst.props, dst.mergedProps = part.kw["properties"], part.props, part.mergedProps
		} else {
			a, err := dst.properties()
			if err != nil {
				return err
			}
			b, err := part.properties()
			if err != nil {
				return err
			}
			joined := slices.Clip(a)
			for _, p := range b {
				if !slices.ContainsFunc(joined, func(q prop) bool { return q.name == p.name }) {
					joined = append(joined, p)
				}
			}
			dst.props, dst.mergedProps = joined, true
		}
	}
	if part.has("required") {
		a, _ := dst.requiredNames()
		b, err := part.requiredNames()
		if err != nil {
			return err
		}
		for _, s := range b {
			if !slices.Contains(a, s) {
				a = append(a, s)
			}
		}
		dst.required, dst.mergedRequired = a, true
	}
	for k, val := range part.kw {
		if _, ok := dst.kw[k]; !ok && k != "properties" && k != "required" {
			dst.kw[k] = val
		}
	}
	return nil
}

// types reads "type" (a string or an array), taking "null" out as nullable.
func (v *view) types() (types []string, nullable bool, err error) {
	t, ok := v.kw["type"]
	if !ok {
		return nil, false, nil
	}
	switch t.Kind() {
	case '"':
		return []string{t.Text()}, false, nil
	case '[':
	default:
		return nil, false, errors.New("the schema has a malformed type")
	}
	for e := range t.Elems() {
		switch {
		case e.Kind() != '"':
			return nil, false, errors.New("the schema has a malformed type")
		case e.Text() == "null":
			nullable = true
		default:
			types = append(types, e.Text())
		}
	}
	if len(types) == 0 && nullable {
		return []string{"null"}, false, nil
	}
	return types, nullable, nil
}

func (g *formGen) enum(v *view) *Field {
	f := &Field{Kind: KindEnum}
	if c, ok := v.kw["const"]; ok {
		f.Enum = []jsontext.Value{c.JSON()}
	} else if e := v.kw["enum"]; e.Kind() == '[' && e.Len() > 0 {
		for val := range e.Elems() {
			f.Enum = append(f.Enum, val.JSON())
		}
	} else {
		return jsonField(v, "the schema has a malformed enum")
	}
	for i, val := range f.Enum {
		if string(val) == "null" {
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
func (g *formGen) alternatives(v *view, keyword string, alt schema.Node, depth int, refs []string) *Field {
	if alt.Kind() != '[' || alt.Len() == 0 {
		return jsonField(v, "the schema has a malformed "+keyword)
	}
	type branch struct {
		v    *view
		refs []string
	}
	var consts []jsontext.Value
	var other []branch
	nullable := false
	for p := range alt.Elems() {
		pv, err := viewOf(p)
		if err != nil {
			return jsonField(v, "the schema has a malformed "+keyword)
		}
		prefs := refs
		if pv.boolean == nil {
			if pv, prefs, err = g.resolve(pv, refs); err != nil {
				return jsonField(v, err.Error())
			}
		}
		hasEnum, hasConst := pv.has("enum"), pv.has("const")
		if t, _, _ := pv.types(); len(t) == 1 && t[0] == "null" && !hasEnum && !hasConst {
			nullable = true
			continue
		}
		if hasEnum || hasConst {
			if e := g.enum(pv); e.Kind == KindEnum {
				consts = append(consts, e.Enum...)
				nullable = nullable || e.Nullable
				continue
			}
		}
		other = append(other, branch{pv, prefs})
	}
	var f *Field
	switch {
	case len(other) == 0 && len(consts) > 0:
		f = &Field{Kind: KindEnum, Enum: consts}
	case len(other) == 1 && len(consts) == 0:
		inner := other[0].v.clone()
		if inner.boolean == nil {
			for _, k := range []string{"title", "description", "default"} {
				if val, ok := v.kw[k]; ok {
					inner.kw[k] = val
				}
			}
		}
		f = g.field(inner, depth, other[0].refs)
	default:
		return jsonField(v, "the schema offers alternatives ("+keyword+")")
	}
	f.Nullable = f.Nullable || nullable
	annotate(f, v)
	return f
}

func (g *formGen) object(v *view, depth int, refs []string) *Field {
	f := &Field{Kind: KindObject}
	required, err := v.requiredNames()
	if err != nil {
		return jsonField(v, err.Error())
	}
	// The protocol's closed-object default: other members are refused unless the schema
	// says otherwise (the document omits an explicit additionalProperties:false).
	if ap, ok := v.kw["additionalProperties"]; ok && ap.Kind() != 'f' {
		f.Open = true
	}
	props, err := v.properties()
	if err != nil {
		return jsonField(v, err.Error())
	}
	for _, p := range props {
		var pf *Field
		if pv, err := viewOf(p.schema); err != nil {
			pf = jsonField(nil, "the property's schema is malformed")
		} else {
			pf = g.field(pv, depth+1, refs)
		}
		f.Properties = append(f.Properties, Property{Name: p.name, Required: slices.Contains(required, p.name), Field: pf})
	}
	if len(f.Properties) == 0 && f.Open {
		return jsonField(v, "a free-form object")
	}
	return f
}

func (g *formGen) array(v *view, depth int, refs []string) *Field {
	f := &Field{Kind: KindArray, MinItems: v.count("minItems"), MaxItems: v.count("maxItems")}
	if v.has("prefixItems") {
		return jsonField(v, "a tuple (prefixItems)")
	}
	items, ok := v.kw["items"]
	if !ok {
		return jsonField(v, "an array of any values")
	}
	in, err := viewOf(items)
	if err != nil {
		return jsonField(v, "the schema has malformed items")
	}
	f.Items = g.field(in, depth+1, refs)
	return f
}
