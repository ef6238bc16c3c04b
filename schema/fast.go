package schema

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ansight-go/ansight/internal/jsonscan"
)

// The fast validator. Tool schemas are small and use a handful of keywords, and the SDK
// validates every call's arguments and result, so a schema built only from those keywords
// is compiled into a plan that validates straight off the JSON text with a pooled
// jsonscan.Scanner: no generic Go values, no allocation when the instance is valid. Any
// other keyword ($ref, allOf/anyOf/oneOf, unevaluated*, patternProperties, …) sends the
// whole schema to the general validator. uniqueItems is checked here for arrays of up to
// maxUniqueItems scalars (strings, numbers within the general validator's exponents,
// literals); an instance with any other such array goes to the general validator whole
// (plan.validate's ok). Both are checked against each other in the tests.

// JSON types as a bit set.
const (
	typeNull uint8 = 1 << iota
	typeBoolean
	typeObject
	typeArray
	typeNumber
	typeString
	typeInteger
)

var typeBits = map[string]uint8{
	"null": typeNull, "boolean": typeBoolean, "object": typeObject, "array": typeArray,
	"number": typeNumber, "string": typeString, "integer": typeInteger,
}

// additional-property modes.
const (
	additionalAny uint8 = iota
	additionalNone
	additionalSchema
)

// literal is an enum or const value: a scalar (objects and arrays send the schema to the
// general validator).
type literal struct {
	kind jsontext.Kind // '"', '0', 't', 'f', 'n'
	str  string        // unquoted string
	num  []byte        // number literal
}

type property struct {
	schema   *plan // nil: not declared in properties, only required
	required int   // index in plan.required, or -1
}

// plan is one compiled (sub)schema of the fast validator.
type plan struct {
	never bool  // the false schema
	types uint8 // 0: any type

	enum     []literal
	hasConst bool
	konst    literal

	props         map[string]property
	required      []string
	additional    uint8
	additionalSch *plan
	minProps      int
	maxProps      int // -1: no limit

	prefix   []*plan
	items    *plan // nil: any
	minItems int
	maxItems int
	unique   bool // uniqueItems: true

	minLen  int
	maxLen  int
	pattern *regexp.Regexp
	format  *jsonschema.Schema // {"format": name}: the library's own format check

	minimum, maximum, exclMin, exclMax []byte // number literals; nil: absent
}

// ignoredKeywords are annotations: they never affect validation. $defs is only reachable
// through $ref, which the fast validator does not support.
var ignoredKeywords = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "$comment": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "$schema": true, "$defs": true,
}

// compilePlan compiles a restored schema tree, or returns nil when it uses a keyword the
// fast validator does not implement.
func compilePlan(n *node) *plan {
	p, ok := planOf(n)
	if !ok {
		return nil
	}
	return p
}

func planOf(n *node) (*plan, bool) {
	switch n.kind {
	case 't':
		return &plan{maxProps: -1, maxItems: -1, maxLen: -1}, true
	case 'f':
		return &plan{never: true}, true
	case '{':
	default:
		return nil, false
	}
	p := &plan{maxProps: -1, maxItems: -1, maxLen: -1}
	var required *node
	var ok bool
	for _, m := range n.members {
		v := m.value
		switch m.name {
		case "type":
			if p.types, ok = typesOf(v); !ok {
				return nil, false
			}
		case "enum":
			if v.kind != '[' {
				return nil, false
			}
			p.enum = make([]literal, 0, len(v.elems))
			for _, e := range v.elems {
				l, ok := literalOf(e)
				if !ok {
					return nil, false
				}
				p.enum = append(p.enum, l)
			}
		case "const":
			if p.konst, ok = literalOf(v); !ok {
				return nil, false
			}
			p.hasConst = true
		case "properties":
			if v.kind != '{' {
				return nil, false
			}
			if p.props == nil {
				p.props = make(map[string]property, len(v.members))
			}
			for _, pm := range v.members {
				sub, ok := planOf(pm.value)
				if !ok {
					return nil, false
				}
				e, found := p.props[pm.name]
				if !found {
					e.required = -1
				}
				e.schema = sub
				p.props[pm.name] = e
			}
		case "required":
			required = v
		case "additionalProperties":
			switch v.kind {
			case 't':
				p.additional = additionalAny
			case 'f':
				p.additional = additionalNone
			default:
				sub, ok := planOf(v)
				if !ok {
					return nil, false
				}
				p.additional, p.additionalSch = additionalSchema, sub
			}
		case "minProperties":
			if p.minProps, ok = intOf(v); !ok {
				return nil, false
			}
		case "maxProperties":
			if p.maxProps, ok = intOf(v); !ok {
				return nil, false
			}
		case "items":
			if p.items, ok = planOf(v); !ok {
				return nil, false
			}
		case "prefixItems":
			if v.kind != '[' {
				return nil, false
			}
			for _, e := range v.elems {
				sub, ok := planOf(e)
				if !ok {
					return nil, false
				}
				p.prefix = append(p.prefix, sub)
			}
		case "minItems":
			if p.minItems, ok = intOf(v); !ok {
				return nil, false
			}
		case "maxItems":
			if p.maxItems, ok = intOf(v); !ok {
				return nil, false
			}
		case "minLength":
			if p.minLen, ok = intOf(v); !ok {
				return nil, false
			}
		case "maxLength":
			if p.maxLen, ok = intOf(v); !ok {
				return nil, false
			}
		case "pattern":
			re, err := regexp.Compile(v.str)
			if v.kind != '"' || err != nil {
				return nil, false
			}
			p.pattern = re
		case "format":
			if v.kind != '"' {
				return nil, false
			}
			if p.format = formatChecker(v.str); p.format == nil {
				return nil, false
			}
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			if v.kind != '0' {
				return nil, false
			}
			switch m.name {
			case "minimum":
				p.minimum = v.raw
			case "maximum":
				p.maximum = v.raw
			case "exclusiveMinimum":
				p.exclMin = v.raw
			default:
				p.exclMax = v.raw
			}
		case "uniqueItems":
			switch v.kind {
			case 't':
				p.unique = true
			case 'f':
			default:
				return nil, false
			}
		default:
			if !ignoredKeywords[m.name] {
				return nil, false
			}
		}
	}
	if required != nil {
		if required.kind != '[' || len(required.elems) > 64 {
			return nil, false
		}
		if p.props == nil {
			p.props = make(map[string]property, len(required.elems))
		}
		for _, e := range required.elems {
			if e.kind != '"' || slicesContains(p.required, e.str) {
				return nil, false
			}
			prop, found := p.props[e.str]
			if !found {
				prop.schema = nil
			}
			prop.required = len(p.required)
			p.props[e.str] = prop
			p.required = append(p.required, e.str)
		}
	}
	return p, true
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func typesOf(v *node) (uint8, bool) {
	switch v.kind {
	case '"':
		b, ok := typeBits[v.str]
		return b, ok
	case '[':
		var bits uint8
		for _, e := range v.elems {
			b, ok := typeBits[e.str]
			if e.kind != '"' || !ok {
				return 0, false
			}
			bits |= b
		}
		return bits, bits != 0
	}
	return 0, false
}

func literalOf(v *node) (literal, bool) {
	switch v.kind {
	case '"':
		return literal{kind: '"', str: v.str}, true
	case '0':
		return literal{kind: '0', num: v.raw}, true
	case 't', 'f', 'n':
		return literal{kind: v.kind}, true
	}
	return literal{}, false
}

// intOf reads a non-negative integer keyword value (5 or 5.0).
func intOf(v *node) (int, bool) {
	if v.kind != '0' {
		return 0, false
	}
	d := parseDecimal(v.raw)
	if d.neg && !d.isZero || !d.isInteger() {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v.raw), 64)
	if err != nil || f > 1<<31 {
		return 0, false
	}
	return int(f), true
}

// formatCheckers caches one compiled {"format": name} schema per format name, so the fast
// validator checks formats with exactly the library's rules.
var formatCheckers sync.Map // string → *jsonschema.Schema

func formatChecker(name string) *jsonschema.Schema {
	if s, ok := formatCheckers.Load(name); ok {
		return s.(*jsonschema.Schema)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(denyLoader{})
	c.AssertFormat()
	if err := c.AddResource(schemaURL, map[string]any{"format": name}); err != nil {
		return nil
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil
	}
	formatCheckers.Store(name, s)
	return s
}

// maxInstanceDepth is the deepest nesting of objects and arrays an instance may have: the
// limit jsontext applies, so that the fast validator refuses exactly what it refuses.
const maxInstanceDepth = 10000

// pathSeg is one step of the instance location: an array index, or a member name as the
// scanner returns it (unescaped, pointing into its buffers: valid until its next Reset).
type pathSeg struct {
	name  []byte // member name; unused for an array index
	index int    // array index; -1 for a member name
}

// fastState is the pooled per-call state of the fast validator.
type fastState struct {
	scan    jsonscan.Scanner
	data    []byte // the instance
	path    []pathSeg
	scratch []byte
	out     []Violation
	// items are the places in data of the elements of the uniqueItems arrays being read;
	// unescaped holds two of them unescaped, to compare.
	items     []span
	unescaped [2][]byte
}

// span is data[start:end].
type span struct{ start, end int }

// maxUniqueItems is the longest uniqueItems array the fast validator compares (pair by
// pair); a longer one goes to the general validator, which hashes.
const maxUniqueItems = 32

// errGeneral ends a fast validation that met what only the general validator checks: a
// uniqueItems array holding objects or arrays (deep equality), numbers beyond its
// exponents (it tames them: tameNumber), or more than maxUniqueItems elements.
var errGeneral = errors.New("schema: for the general validator")

var fastStates = sync.Pool{New: func() any { return new(fastState) }}

// validate checks instance against p; ok is false when the instance needs the general
// validator (errGeneral), whose verdict is then the one.
func (p *plan) validate(instance jsontext.Value) (_ []Violation, ok bool) {
	st := fastStates.Get().(*fastState)
	st.scan.Reset(instance, maxInstanceDepth)
	st.data = instance
	st.path = st.path[:0]
	st.items = st.items[:0]
	st.out = nil
	err := st.value(p)
	if err == nil {
		err = st.scan.End()
	}
	out, ok := st.out, true
	switch {
	case err == errGeneral:
		out, ok = nil, false
	case err != nil:
		out = []Violation{{Path: "$", Code: CodeInvalidJSON, Message: "value is not valid JSON: " + jsonscan.Elide(err.Error(), 256)}}
	}
	st.out = nil
	// Drop every reference to instance before going back to the pool.
	st.scan.Release()
	st.data = nil
	if cap(st.items) > 4*maxUniqueItems {
		st.items = nil
	}
	for i := range st.unescaped {
		if cap(st.unescaped[i]) > 4<<10 {
			st.unescaped[i] = nil
		}
	}
	if cap(st.path) > 64 {
		st.path = nil
	} else {
		clear(st.path[:cap(st.path)])
	}
	fastStates.Put(st)
	return out, ok
}

// add records a violation at the current path.
func (st *fastState) add(code, format string, args ...any) {
	if len(st.out) >= MaxViolations {
		return
	}
	b := []byte{'$'}
	for _, s := range st.path {
		if s.index >= 0 {
			b = appendPathSegment(b, strconv.Itoa(s.index), true)
		} else {
			b = appendPathSegment(b, string(s.name), false)
		}
	}
	st.out = append(st.out, Violation{Path: string(b), Code: code, Message: fmt.Sprintf(format, args...)})
}

// addMember records a violation at the current path's member name (one missing or not
// allowed), which may be empty: "" is a member name like any other (`$[""]`).
func (st *fastState) addMember(name, code, format string, args ...any) {
	st.path = append(st.path, pathSeg{name: []byte(name), index: -1})
	st.add(code, format, args...)
	st.path = st.path[:len(st.path)-1]
}

// str returns the unquoted content of a string value read by the scanner (escaped as it
// reported), without allocating when it has no escapes.
func (st *fastState) str(v []byte, escaped bool) []byte {
	if !escaped {
		return v[1 : len(v)-1]
	}
	st.scratch = jsonscan.AppendUnescaped(st.scratch[:0], v[1:len(v)-1]) // valid: the scanner checked it
	return st.scratch
}

// kindBits maps the first byte of a value to its JSON type.
var kindBits = func() (t [256]uint8) {
	t['n'], t['t'], t['f'], t['{'], t['['], t['"'] = typeNull, typeBoolean, typeBoolean, typeObject, typeArray, typeString
	t['-'] = typeNumber
	for c := '0'; c <= '9'; c++ {
		t[c] = typeNumber
	}
	return t
}()

// kindOf returns the jsontext kind of the value that starts with byte c ('0' for a number).
func kindOf(c byte) jsontext.Kind {
	if kindBits[c] == typeNumber {
		return '0'
	}
	return jsontext.Kind(c)
}

// inside records, in a syntax error found within a container's member or element, the
// name or index under which it was found.
func inside(err error, seg string) error {
	if e, ok := err.(*jsonscan.Error); ok {
		return e.In(seg)
	}
	return err
}

// value validates the next value against p. A returned error is a syntax error of the
// instance; violations are collected in st.out.
func (st *fastState) value(p *plan) error {
	c := st.scan.Peek()
	if p.never {
		st.add(CodeSchemaMismatch, "no value is allowed here")
		return st.scan.Skip()
	}
	if c == '{' || c == '[' {
		if p.types != 0 && p.types&kindBits[c] == 0 {
			st.typeMismatch(p.types, kindOf(c))
			return st.scan.Skip()
		}
		if p.enum != nil || p.hasConst {
			st.literalMismatch(p)
			return st.scan.Skip()
		}
		if c == '{' {
			return st.object(p)
		}
		return st.array(p)
	}

	var v []byte
	var escaped bool
	var err error
	if c == '"' {
		v, escaped, err = st.scan.String()
	} else {
		v, err = st.scan.Value()
	}
	if err != nil {
		return err
	}
	k := kindOf(c)
	if p.types != 0 && p.types&kindBits[c] == 0 {
		if k != '0' || p.types&typeInteger == 0 || !isIntegerLiteral(v) {
			st.typeMismatch(p.types, k)
			return nil
		}
	}
	if p.enum != nil || p.hasConst {
		if !st.matchesLiterals(p, k, v, escaped) {
			st.literalMismatch(p)
			return nil
		}
	}
	switch k {
	case '"':
		st.string(p, v, escaped)
	case '0':
		st.number(p, v)
	}
	return nil
}

func isIntegerLiteral(v []byte) bool {
	for _, c := range v {
		if c == '.' || c == 'e' || c == 'E' { // 1.0 and 1e2 are integers too
			d := parseDecimal(v)
			return d.isInteger()
		}
	}
	return true
}

func (st *fastState) typeMismatch(want uint8, k jsontext.Kind) {
	if k == 'n' {
		st.add(CodeNullNotAllowed, "null is not allowed (expected %s)", typeNames(want))
		return
	}
	got := "object"
	switch k {
	case '[':
		got = "array"
	case '"':
		got = "string"
	case '0':
		got = "number"
	case 't', 'f':
		got = "boolean"
	}
	st.add(CodeTypeMismatch, "expected %s, got %s", typeNames(want), got)
}

func typeNames(bits uint8) string {
	var names []string
	for _, n := range [...]string{"null", "boolean", "object", "array", "number", "string", "integer"} {
		if bits&typeBits[n] != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, " or ")
}

func (st *fastState) matchesLiterals(p *plan, k jsontext.Kind, v []byte, escaped bool) bool {
	if p.hasConst && !st.equalLiteral(&p.konst, k, v, escaped) {
		return false
	}
	if p.enum == nil {
		return true
	}
	for i := range p.enum {
		if st.equalLiteral(&p.enum[i], k, v, escaped) {
			return true
		}
	}
	return false
}

func (st *fastState) equalLiteral(l *literal, k jsontext.Kind, v []byte, escaped bool) bool {
	switch {
	case l.kind != k:
		return false
	case k == '"':
		return string(st.str(v, escaped)) == l.str
	case k == '0':
		return compareDecimal(v, l.num) == 0
	}
	return true
}

func (st *fastState) literalMismatch(p *plan) {
	if p.hasConst && p.enum == nil {
		st.add(CodeConstValueInvalid, "value must be %s", literalText(&p.konst))
		return
	}
	var opts []string
	for i := range p.enum {
		opts = append(opts, literalText(&p.enum[i]))
	}
	st.add(CodeEnumValueInvalid, "value must be one of %s", strings.Join(opts, ", "))
}

func literalText(l *literal) string {
	switch l.kind {
	case '"':
		return strconv.Quote(l.str)
	case '0':
		return string(l.num)
	case 't':
		return "true"
	case 'f':
		return "false"
	}
	return "null"
}

func (st *fastState) string(p *plan, v []byte, escaped bool) {
	if p.minLen == 0 && p.maxLen < 0 && p.pattern == nil && p.format == nil {
		return
	}
	s := st.str(v, escaped)
	// A failed format ends the checks of this value, as in the general validator.
	if p.format != nil {
		if err := p.format.Validate(string(s)); err != nil {
			st.add(CodeFormatInvalid, "value is not a valid %s", formatName(p.format))
			return
		}
	}
	if p.minLen > 0 || p.maxLen >= 0 {
		n := utf8.RuneCount(s)
		if n < p.minLen {
			st.add(CodeMinLength, "length %d is below the minimum length %d", n, p.minLen)
		}
		if p.maxLen >= 0 && n > p.maxLen {
			st.add(CodeMaxLength, "length %d exceeds the maximum length %d", n, p.maxLen)
		}
	}
	if p.pattern != nil && !p.pattern.Match(s) {
		st.add(CodePatternMismatch, "value does not match the pattern %q", p.pattern.String())
	}
}

func formatName(s *jsonschema.Schema) string {
	if s.Format != nil {
		return s.Format.Name
	}
	return "value"
}

func (st *fastState) number(p *plan, v []byte) {
	if p.minimum != nil && compareDecimal(v, p.minimum) < 0 {
		st.add(CodeMinimum, "%s is below the minimum %s", numText(v), numText(p.minimum))
	}
	if p.maximum != nil && compareDecimal(v, p.maximum) > 0 {
		st.add(CodeMaximum, "%s exceeds the maximum %s", numText(v), numText(p.maximum))
	}
	if p.exclMin != nil && compareDecimal(v, p.exclMin) <= 0 {
		st.add(CodeExclusiveMinimum, "%s must be greater than %s", numText(v), numText(p.exclMin))
	}
	if p.exclMax != nil && compareDecimal(v, p.exclMax) >= 0 {
		st.add(CodeExclusiveMaximum, "%s must be less than %s", numText(v), numText(p.exclMax))
	}
}

// numText writes a number literal in the normalized form messages use (only on the error
// path: it allocates).
func numText(lit []byte) string {
	if d := parseDecimal(lit); len(lit) > 64 || d.point > maxExponent || d.point < -maxExponent {
		return string(lit) // big.Rat would expand the exponent
	}
	r, ok := new(big.Rat).SetString(string(lit))
	if !ok {
		return string(lit)
	}
	return ratText(r)
}

func (st *fastState) object(p *plan) error {
	if err := st.scan.EnterObject(); err != nil {
		return err
	}
	var seen uint64
	count := 0
	for ; ; count++ {
		name, more, err := st.scan.Member(count)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		prop, declared := p.props[string(name)]
		if declared && prop.required >= 0 {
			seen |= 1 << prop.required
		}
		switch {
		case declared && prop.schema != nil:
			err = st.member(name, prop.schema)
		case p.additional == additionalNone:
			st.addMember(string(name), CodeAdditionalPropertyNotAllowed, "property %q is not allowed", name)
			err = st.scan.Skip()
		case p.additional == additionalSchema:
			err = st.member(name, p.additionalSch)
		default:
			err = st.scan.Skip()
		}
		if err != nil {
			return inside(err, string(name))
		}
	}
	for i, name := range p.required {
		if seen&(1<<i) == 0 {
			st.addMember(name, CodeRequiredPropertyMissing, "required property %q is missing", name)
		}
	}
	if count < p.minProps {
		st.add(CodeMinProperties, "object has %d properties, fewer than the minimum %d", count, p.minProps)
	}
	if p.maxProps >= 0 && count > p.maxProps {
		st.add(CodeMaxProperties, "object has %d properties, more than the maximum %d", count, p.maxProps)
	}
	return nil
}

// member validates the value of the member name against sub.
func (st *fastState) member(name []byte, sub *plan) error {
	st.path = append(st.path, pathSeg{name: name, index: -1})
	err := st.value(sub)
	st.path = st.path[:len(st.path)-1]
	return err
}

func (st *fastState) array(p *plan) error {
	if err := st.scan.EnterArray(); err != nil {
		return err
	}
	n := 0
	for ; ; n++ {
		more, err := st.scan.Element(n)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		var sub *plan
		if n < len(p.prefix) {
			sub = p.prefix[n]
		} else {
			sub = p.items
		}
		start := 0
		if p.unique {
			if c := st.scan.Peek(); c == '{' || c == '[' || n == maxUniqueItems {
				return errGeneral
			}
			start = st.scan.Pos()
		}
		if sub == nil {
			err = st.scan.Skip()
		} else {
			st.path = append(st.path, pathSeg{index: n})
			err = st.value(sub)
			st.path = st.path[:len(st.path)-1]
		}
		if err != nil {
			return inside(err, strconv.Itoa(n))
		}
		if p.unique {
			item := span{start, st.scan.Pos()}
			if kindOf(st.data[start]) == '0' && !parseDecimal(st.data[item.start:item.end]).withinExponents() {
				return errGeneral
			}
			st.items = append(st.items, item)
		}
	}
	if n < p.minItems {
		st.add(CodeMinItems, "array has %d items, fewer than the minimum %d", n, p.minItems)
	}
	if p.maxItems >= 0 && n > p.maxItems {
		st.add(CodeMaxItems, "array has %d items, more than the maximum %d", n, p.maxItems)
	}
	if p.unique {
		items := st.items[len(st.items)-n:]
		if i, j, dup := st.duplicates(items); dup {
			st.add(CodeUniqueItems, "items %d and %d are equal", i, j)
		}
		st.items = st.items[:len(st.items)-n]
	}
	return nil
}

// duplicates finds, as the general validator does, the first element equal to an earlier
// one, j, and the first earlier one it equals, i. The elements are scalars.
func (st *fastState) duplicates(items []span) (i, j int, dup bool) {
	for j = 1; j < len(items); j++ {
		for i = 0; i < j; i++ {
			if st.equalItems(items[i], items[j]) {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// equalItems reports whether two scalar elements are equal as JSON values: strings by
// their characters, numbers by their value (1 equals 1.0), literals by their text.
func (st *fastState) equalItems(a, b span) bool {
	x, y := st.data[a.start:a.end], st.data[b.start:b.end]
	k := kindOf(x[0])
	switch {
	case k != kindOf(y[0]):
		return false
	case k == '0':
		return compareDecimal(x, y) == 0
	case k != '"':
		return x[0] == y[0] // true, false, null
	case string(x) == string(y):
		return true
	case bytes.IndexByte(x, '\\') < 0 && bytes.IndexByte(y, '\\') < 0:
		return false
	}
	st.unescaped[0] = jsonscan.AppendUnescaped(st.unescaped[0][:0], x[1:len(x)-1])
	st.unescaped[1] = jsonscan.AppendUnescaped(st.unescaped[1][:0], y[1:len(y)-1])
	return string(st.unescaped[0]) == string(st.unescaped[1])
}
