package mcpbridge

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/jsonscan"
	"github.com/ansight-go/ansight/wire"
)

// The portable schema profile: tool input schemas inside the subset that Gemini's function
// declarations (parameters: a subset of OpenAPI 3.0's Schema), OpenAI's function calling
// (non-strict) and Anthropic's tool input_schema all accept. Clients that hand MCP tool
// schemas to Gemini's function-declaration format (Zed, n8n, opencode…) refuse a whole
// tool list when one schema leaves it; the meta-tools always stay inside it, and exposed
// app tools do with SchemaPortable. The subset (tested in providers_test.go):
//
//   - one type per schema (no type arrays; "null" is nullable:true), or anyOf of typed
//     schemas; enums are strings of a string type;
//   - an object lists its properties (a free-form object cannot be said); an array says its
//     items;
//   - only these keywords: type, format (date-time, int32…), title, description, nullable,
//     enum, properties, required, minProperties, maxProperties, items, minItems, maxItems,
//     minLength, maxLength, pattern, minimum, maximum, anyOf, default (scalars);
//   - no $ref, $defs, additionalProperties, uniqueItems, const, oneOf, allOf, not…
//
// What the subset cannot say is widened, never narrowed, so that every value the exact
// schema accepts is still offered: the receiver's own schema (the app's, or the meta-tool's
// closed one) validates every call anyway. A value the subset cannot describe at all (a
// free-form object, an array of anything, a recursive $ref) is asked for as JSON text: a
// string whose description says so. The bridge turns such strings back into JSON before
// validating or forwarding (decodeText), and accepts the JSON value itself as well.

// SchemaProfile says how the bridge writes the input schemas of exposed app tools.
type SchemaProfile string

// Schema profiles.
const (
	// SchemaExact: app tools' schemas as the app wrote them (closed objects made explicit).
	// Gemini CLI, OpenAI and Anthropic accept them; clients that convert to Gemini's
	// function-declaration format may refuse some.
	SchemaExact SchemaProfile = "exact"
	// SchemaPortable: converted to the subset every major provider accepts (see above).
	SchemaPortable SchemaProfile = "portable"
)

// ParseSchemaProfile reads a profile name ("" is SchemaExact).
func ParseSchemaProfile(s string) (SchemaProfile, error) {
	switch SchemaProfile(s) {
	case "", SchemaExact:
		return SchemaExact, nil
	case SchemaPortable:
		return SchemaPortable, nil
	}
	return "", fmt.Errorf("mcpbridge: unknown schema profile %q (exact or portable)", s)
}

// textPath is where a portable schema asks for JSON text instead of a value: property names,
// and itemsStep for every item of an array. anyValue: the exact schema takes any value
// there, strings included, so a string that is not JSON is that string.
type textPath struct {
	steps    []string
	anyValue bool
}

const itemsStep = "*"

// Bounds of a conversion: the nesting it follows ($ref chains included), and the schemas
// it writes (inlining $refs can multiply them); beyond either, a value is asked for as
// JSON text.
const (
	maxPortableDepth = 32
	maxPortableNodes = 4096
)

// converter converts one schema document.
type converter struct {
	defs  map[string]jsontext.Value // the root's $defs and definitions, by "#/$defs/x"
	text  []textPath
	stack []string // $refs being inlined, to stop at recursion
	nodes int      // schemas converted so far (maxPortableNodes)
}

// portableSchema converts an object schema (a tool's input schema) to the portable
// subset, and returns where it asks for JSON text.
func portableSchema(raw jsontext.Value) (jsontext.Value, []textPath, error) {
	var root map[string]jsontext.Value
	if err := wire.Unmarshal(raw, &root); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	c := &converter{defs: map[string]jsontext.Value{}}
	for _, key := range []string{"$defs", "definitions"} {
		var defs map[string]jsontext.Value
		if v, ok := root[key]; ok && wire.Unmarshal(v, &defs) == nil {
			for name, d := range defs {
				c.defs["#/"+key+"/"+jsonPointerEscape(name)] = d
			}
		}
	}
	out := c.node(raw, nil, 0)
	if out[textMark] != "" { // a free-form root: any properties
		c.text = slices.DeleteFunc(c.text, func(p textPath) bool { return len(p.steps) == 0 })
		out = node{"type": `"object"`}
		if !closedObject(root) {
			out["description"] = quote(strings.TrimSpace(stringValue(root["description"]) + " Takes any properties."))
		}
	}
	// The root is an object that lists its properties (OpenAI), without anyOf (OpenAI,
	// Anthropic): a root of alternatives becomes the object of all their properties.
	if out["type"] != `"object"` || out["anyOf"] != "" {
		out = rootObject(out)
	}
	if out["properties"] == "" {
		out["properties"] = "{}"
	}
	b, err := encodeNode(out)
	return b, c.text, err
}

// rootObject makes a root of alternatives an object with the properties of every object
// branch, required only where all branches require them: wider than the exact schema.
func rootObject(conv node) node {
	out := node{"type": `"object"`}
	if d := conv["description"]; d != "" {
		out["description"] = d
	}
	var list []map[string]jsontext.Value
	_ = wire.Unmarshal(jsontext.Value(conv["anyOf"]), &list)
	props := map[string]jsontext.Value{}
	var required []string
	first := true
	for _, b := range list {
		if stringValue(b["type"]) != "object" {
			continue
		}
		var p map[string]jsontext.Value
		_ = wire.Unmarshal(b["properties"], &p)
		for k, v := range p {
			if _, ok := props[k]; !ok {
				props[k] = v
			}
		}
		var req []string
		_ = wire.Unmarshal(b["required"], &req)
		if first {
			required, first = req, false
		} else {
			required = slices.DeleteFunc(required, func(r string) bool { return !slices.Contains(req, r) })
		}
	}
	if len(props) > 0 {
		out["properties"] = string(mustMarshal(props))
	}
	if len(required) > 0 {
		out["required"] = string(mustMarshal(required))
	}
	return out
}

// node is a converted schema: keyword → JSON text of its value ("" when absent).
type node map[string]string

// textMark marks a node that asks for JSON text (never encoded).
const textMark = "\x00text"

func encodeNode(n node) (jsontext.Value, error) {
	m := make(map[string]jsontext.Value, len(n))
	for k, v := range n {
		if v != "" && k != textMark {
			m[k] = jsontext.Value(v)
		}
	}
	return wire.Marshal(m)
}

func mustMarshal(v any) jsontext.Value {
	b, err := wire.Marshal(v)
	if err != nil {
		panic("mcpbridge: " + err.Error()) // values built here always encode
	}
	return b
}

func quote(s string) string { return string(mustMarshal(s)) }

// jsonPointerEscape escapes a name for a JSON pointer (RFC 6901).
func jsonPointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// asText is the portable form of a value the subset cannot describe: JSON text, recorded at
// path. desc is the original description; what is "an object" or "a value" (anything).
func (c *converter) asText(path []string, desc, what string) node {
	c.text = append(c.text, textPath{steps: slices.Clone(path), anyValue: what != "an object"})
	text := "JSON text of " + what + "."
	switch {
	case strings.Contains(desc, "JSON text"): // the description says so already
		text = desc
	case desc != "":
		text = strings.TrimRight(desc, " ") + " (" + text[:len(text)-1] + ")"
	}
	return node{"type": `"string"`, "description": quote(text), textMark: "1"}
}

// node converts one schema at path.
func (c *converter) node(raw jsontext.Value, path []string, depth int) node {
	c.nodes++
	if depth > maxPortableDepth || c.nodes > maxPortableNodes {
		return c.asText(path, "", "a value")
	}
	var s map[string]jsontext.Value
	if wire.Unmarshal(raw, &s) != nil { // true, false, or not a schema: anything goes
		return c.asText(path, "", "a value")
	}
	desc := stringValue(s["description"])
	if ref := stringValue(s["$ref"]); ref != "" {
		target, ok := c.defs[ref]
		if !ok || slices.Contains(c.stack, ref) {
			return c.asText(path, desc, "a value")
		}
		c.stack = append(c.stack, ref)
		n := c.node(target, path, depth+1)
		c.stack = c.stack[:len(c.stack)-1]
		if desc != "" {
			n["description"] = quote(desc)
		}
		return n
	}
	s = c.mergeAllOf(s)
	out := node{}
	for _, k := range []string{"title", "description"} {
		if v := stringValue(s[k]); v != "" {
			out[k] = quote(v)
		}
	}
	if isTrue(s["nullable"]) {
		out["nullable"] = "true"
	}
	// Alternatives: oneOf is anyOf here (the receiver's schema keeps "exactly one").
	alts := s["anyOf"]
	if alts == nil {
		alts = s["oneOf"]
	}
	if alts != nil {
		return c.alternatives(out, alts, path, depth, desc)
	}
	types := typesOf(s)
	if slices.Contains(types, "null") {
		out["nullable"] = "true"
		types = slices.DeleteFunc(types, func(t string) bool { return t == "null" })
	}
	switch len(types) {
	case 0:
		return c.asText(path, desc, "a value")
	case 1:
		return c.typed(out, s, types[0], path, depth, desc)
	}
	// Several types: one branch per type, each with the keywords that apply to it.
	var list []jsontext.Value
	for _, t := range types {
		b := c.typed(node{}, s, t, path, depth, "")
		enc, err := encodeNode(b)
		if err == nil {
			list = append(list, enc)
		}
	}
	out["anyOf"] = string(mustMarshal(list))
	return out
}

// alternatives converts anyOf/oneOf: a null branch becomes nullable, one branch left is the
// schema itself.
func (c *converter) alternatives(out node, raw jsontext.Value, path []string, depth int, desc string) node {
	var list []jsontext.Value
	if wire.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return c.asText(path, desc, "a value")
	}
	var branches []node
	for _, b := range list {
		var m map[string]jsontext.Value
		if wire.Unmarshal(b, &m) == nil && len(m) == 1 && stringValue(m["type"]) == "null" {
			out["nullable"] = "true"
			continue
		}
		n := c.node(b, path, depth+1)
		if n[textMark] != "" {
			// A branch the subset cannot say makes the whole a value given as text; the
			// paths its conversion recorded under this one are dropped with it.
			c.text = slices.DeleteFunc(c.text, func(p textPath) bool {
				return len(p.steps) >= len(path) && slices.Equal(p.steps[:len(path)], path)
			})
			return c.asText(path, desc, "a value")
		}
		branches = append(branches, n)
	}
	switch len(branches) {
	case 0:
		return c.asText(path, desc, "a value")
	case 1:
		b := branches[0]
		for k, v := range out {
			if b[k] == "" {
				b[k] = v
			}
		}
		return b
	}
	enc := make([]jsontext.Value, 0, len(branches))
	for _, b := range branches {
		e, err := encodeNode(b)
		if err == nil {
			enc = append(enc, e)
		}
	}
	out["anyOf"] = string(mustMarshal(enc))
	return out
}

// typed converts a schema of one type t.
func (c *converter) typed(out node, s map[string]jsontext.Value, t string, path []string, depth int, desc string) node {
	out["type"] = quote(t)
	if d := stringValue(s["default"]); d != "" && t == "string" {
		out["default"] = quote(d)
	} else if v := s["default"]; v != nil && (t == "integer" || t == "number" || t == "boolean") && isScalar(v) {
		out["default"] = string(v)
	}
	var notes []string
	switch t {
	case "object":
		var props map[string]jsontext.Value
		if wire.Unmarshal(s["properties"], &props) != nil || len(props) == 0 {
			return c.asText(path, desc, "an object")
		}
		conv := make(map[string]jsontext.Value, len(props))
		for name, p := range props {
			n := c.node(p, append(slices.Clone(path), name), depth+1)
			enc, err := encodeNode(n)
			if err != nil {
				return c.asText(path, desc, "an object")
			}
			conv[name] = enc
		}
		out["properties"] = string(mustMarshal(conv))
		var req []string
		if wire.Unmarshal(s["required"], &req) == nil {
			req = slices.DeleteFunc(req, func(r string) bool { _, ok := props[r]; return !ok })
			if len(req) > 0 {
				out["required"] = string(mustMarshal(slices.Compact(slices.Sorted(slices.Values(req)))))
			}
		}
		copyInts(out, s, "minProperties", "maxProperties")
	case "array":
		items := s["items"]
		if items == nil || string(items) == "true" || string(items) == "{}" {
			n := c.asText(append(slices.Clone(path), itemsStep), "", "a value")
			out["items"] = string(mustMarshal(n.encoded()))
		} else {
			n := c.node(items, append(slices.Clone(path), itemsStep), depth+1)
			out["items"] = string(mustMarshal(n.encoded()))
		}
		copyInts(out, s, "minItems", "maxItems")
		if isTrue(s["uniqueItems"]) {
			notes = append(notes, "No duplicates.")
		}
	case "string":
		copyInts(out, s, "minLength", "maxLength")
		if p := stringValue(s["pattern"]); p != "" {
			out["pattern"] = quote(p)
		}
		switch f := stringValue(s["format"]); f {
		case "":
		case "date-time":
			out["format"] = quote(f)
		default:
			notes = append(notes, "Format: "+f+".")
		}
	case "integer", "number":
		for _, k := range []string{"minimum", "maximum"} {
			if v := s[k]; v != nil && v.Kind() == '0' {
				out[k] = string(v)
			}
		}
		// An exclusive bound is said as the inclusive one (wider; the receiver checks).
		if v := s["exclusiveMinimum"]; v != nil && v.Kind() == '0' && out["minimum"] == "" {
			out["minimum"] = string(v)
			notes = append(notes, "Greater than "+string(v)+".")
		}
		if v := s["exclusiveMaximum"]; v != nil && v.Kind() == '0' && out["maximum"] == "" {
			out["maximum"] = string(v)
			notes = append(notes, "Less than "+string(v)+".")
		}
		switch f := stringValue(s["format"]); f {
		case "int32", "int64", "float", "double":
			out["format"] = quote(f)
		}
	}
	if e := enumOf(s); e != nil {
		var strs []string
		others := false
		for _, v := range e {
			switch v.Kind() {
			case '"':
				strs = append(strs, stringValue(v))
			case 'n':
				out["nullable"] = "true"
			default:
				others = true
			}
		}
		switch {
		case t == "string" && !others && len(strs) > 0:
			out["enum"] = string(mustMarshal(strs))
		default:
			vals := make([]string, len(e))
			for i, v := range e {
				vals[i] = string(v)
			}
			notes = append(notes, "One of: "+strings.Join(vals, ", ")+".")
		}
	}
	if len(notes) > 0 {
		d := stringValue(jsontext.Value(out["description"]))
		out["description"] = quote(strings.TrimSpace(d + " " + strings.Join(notes, " ")))
	}
	return out
}

func (n node) encoded() jsontext.Value {
	b, err := encodeNode(n)
	if err != nil {
		panic("mcpbridge: " + err.Error())
	}
	return b
}

// mergeAllOf folds allOf into the schema: properties and required add up, other keywords of
// the schema itself win. (An allOf the fold cannot express is widened to its first parts.)
func (c *converter) mergeAllOf(s map[string]jsontext.Value) map[string]jsontext.Value {
	var raw []jsontext.Value
	if wire.Unmarshal(s["allOf"], &raw) != nil {
		return s
	}
	parts := make([]map[string]jsontext.Value, 0, len(raw))
	for _, r := range raw {
		var p map[string]jsontext.Value
		if wire.Unmarshal(r, &p) != nil {
			continue
		}
		if ref := stringValue(p["$ref"]); ref != "" && !slices.Contains(c.stack, ref) {
			if d, ok := c.defs[ref]; ok && wire.Unmarshal(d, &p) != nil {
				continue
			}
		}
		parts = append(parts, p)
	}
	out := make(map[string]jsontext.Value, len(s))
	for k, v := range s {
		if k != "allOf" {
			out[k] = v
		}
	}
	props := map[string]jsontext.Value{}
	_ = wire.Unmarshal(out["properties"], &props)
	var req []string
	_ = wire.Unmarshal(out["required"], &req)
	for _, p := range parts {
		var pp map[string]jsontext.Value
		if wire.Unmarshal(p["properties"], &pp) == nil {
			for k, v := range pp {
				if _, ok := props[k]; !ok {
					props[k] = v
				}
			}
		}
		var pr []string
		if wire.Unmarshal(p["required"], &pr) == nil {
			req = append(req, pr...)
		}
		for k, v := range p {
			if _, ok := out[k]; !ok && k != "properties" && k != "required" {
				out[k] = v
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = mustMarshal(props)
	}
	if len(req) > 0 {
		out["required"] = mustMarshal(req)
	}
	return out
}

// typesOf is the types a schema allows: its type keyword, or what its keywords imply.
func typesOf(s map[string]jsontext.Value) []string {
	if t := s["type"]; t != nil {
		if t.Kind() == '"' {
			return []string{stringValue(t)}
		}
		var list []string
		if wire.Unmarshal(t, &list) == nil {
			return slices.Compact(list)
		}
		return nil
	}
	if e := enumOf(s); e != nil {
		var types []string
		for _, v := range e {
			var t string
			switch v.Kind() {
			case '"':
				t = "string"
			case '0':
				t = "number"
				if !strings.ContainsAny(string(v), ".eE") {
					t = "integer"
				}
			case 't', 'f':
				t = "boolean"
			case 'n':
				t = "null"
			default:
				continue
			}
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
		return types
	}
	switch {
	case s["properties"] != nil || s["additionalProperties"] != nil || s["required"] != nil:
		return []string{"object"}
	case s["items"] != nil || s["prefixItems"] != nil:
		return []string{"array"}
	case s["minLength"] != nil || s["maxLength"] != nil || s["pattern"] != nil || s["format"] != nil:
		return []string{"string"}
	case s["minimum"] != nil || s["maximum"] != nil || s["exclusiveMinimum"] != nil || s["exclusiveMaximum"] != nil || s["multipleOf"] != nil:
		return []string{"number"}
	}
	return nil
}

// enumOf is the values of enum, or const as a one-value enum.
func enumOf(s map[string]jsontext.Value) []jsontext.Value {
	var e []jsontext.Value
	if wire.Unmarshal(s["enum"], &e) == nil && len(e) > 0 {
		return e
	}
	if v := s["const"]; v != nil {
		return []jsontext.Value{v}
	}
	return nil
}

func copyInts(out node, s map[string]jsontext.Value, keys ...string) {
	for _, k := range keys {
		if v := s[k]; v != nil && v.Kind() == '0' {
			if _, err := strconv.ParseUint(string(v), 10, 63); err == nil {
				out[k] = string(v)
			}
		}
	}
}

func stringValue(v jsontext.Value) string {
	var s string
	if v == nil || v.Kind() != '"' || wire.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

func isTrue(v jsontext.Value) bool { return string(v) == "true" }

// closedObject: an object schema that takes no property at all.
func closedObject(s map[string]jsontext.Value) bool {
	var props map[string]jsontext.Value
	_ = wire.Unmarshal(s["properties"], &props)
	return len(props) == 0 && (string(s["additionalProperties"]) == "false" || string(s["unevaluatedProperties"]) == "false")
}

func isScalar(v jsontext.Value) bool {
	switch v.Kind() {
	case '"', '0', 't', 'f':
		return true
	}
	return false
}

// decodeText turns the JSON text a portable schema asked for at paths back into JSON: a
// string there that parses as JSON is replaced by its value; a value given as JSON already
// stays. A string that does not parse is an error naming where.
func decodeText(args jsontext.Value, paths []textPath) (jsontext.Value, error) {
	if len(paths) == 0 || len(args) == 0 {
		return args, nil
	}
	out := args
	for _, p := range paths {
		if unchangedAt(out, p.steps) {
			continue
		}
		var err error
		if out, err = decodeAt(out, p.steps, p.anyValue, ""); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// unchangedAt reports, without decoding v into a map, that decodeAt would give v back (or
// its members re-encoded) for path: v is an object, valid, without duplicate names, whose
// member path[0] is absent, or is there and not a string when it is the path's last step.
// Anything else — a string to decode, a member to go into, an error to report — is left
// to decodeAt. This is every ansight_call_app_tool whose arguments are an object, as
// agents send them, for each of its three paths (arguments, after's two): decoding the
// whole input into a map and encoding it again for each was a tenth of the bridge's own
// CPU per call. FuzzDecodeText holds it against decodeAt.
func unchangedAt(v jsontext.Value, path []string) bool {
	if len(path) == 0 || path[0] == itemsStep || v.Kind() != '{' {
		return false
	}
	s := textScanners.Get().(*jsonscan.Scanner)
	defer func() { s.Release(); textScanners.Put(s) }()
	s.Reset(v, wire.MaxDepth) // strict as decoding into a map: duplicate names, depth, UTF-8
	if s.EnterObject() != nil {
		return false
	}
	for i := 0; ; i++ {
		name, more, err := s.Member(i)
		if err != nil {
			return false
		}
		if !more {
			break
		}
		if string(name) == path[0] && (len(path) > 1 || s.Peek() == '"') {
			return false
		}
		if s.Skip() != nil {
			return false
		}
	}
	return s.End() == nil
}

// textScanners are unchangedAt's.
var textScanners = sync.Pool{New: func() any { return new(jsonscan.Scanner) }}

// decodeAt applies one path to v (at pointer where, for errors).
func decodeAt(v jsontext.Value, path []string, anyValue bool, where string) (jsontext.Value, error) {
	if len(path) == 0 {
		if v.Kind() != '"' {
			return v, nil
		}
		var text string
		if err := wire.Unmarshal(v, &text); err != nil {
			return nil, err
		}
		inner := jsontext.Value(text)
		if !inner.IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) {
			if anyValue { // the string itself, not JSON text
				return v, nil
			}
			return nil, fmt.Errorf("%s is JSON text, and %q does not parse as JSON", cmp.Or(where, "/"), abbreviate(text, 40))
		}
		var check jsontext.Value
		if err := wire.Unmarshal(inner, &check); err != nil { // strict: no duplicate names
			return nil, fmt.Errorf("%s is JSON text: %v", cmp.Or(where, "/"), err)
		}
		return check, nil
	}
	step := path[0]
	switch {
	case step == itemsStep && v.Kind() == '[':
		var list []jsontext.Value
		if err := wire.Unmarshal(v, &list); err != nil {
			return nil, err
		}
		for i := range list {
			n, err := decodeAt(list[i], path[1:], anyValue, where+"/"+strconv.Itoa(i))
			if err != nil {
				return nil, err
			}
			list[i] = n
		}
		return wire.Marshal(list)
	case step != itemsStep && v.Kind() == '{':
		var m map[string]jsontext.Value
		if err := wire.Unmarshal(v, &m); err != nil {
			return nil, err
		}
		member, ok := m[step]
		if !ok {
			return v, nil
		}
		n, err := decodeAt(member, path[1:], anyValue, where+"/"+jsonPointerEscape(step))
		if err != nil {
			return nil, err
		}
		m[step] = n
		return wire.Marshal(m)
	}
	return v, nil
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
