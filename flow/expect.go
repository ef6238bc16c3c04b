package flow

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ansight-go/ansight/schema"
)

// An expectation checks one value of a step's outcome, found by a JSON Pointer (RFC 6901).
type expectation struct {
	pos  Pos
	path string
	toks []string
	// op is the operator: equals, contains, matches, exists, length, range (lt and/or gt),
	// schema. operand is its value (a template where variables expand).
	op      string
	operand *value
	re      *regexp.Regexp // matches without variables, compiled when read
	exists  bool
	length  int
	lt, gt  *value
	schema  *schema.Schema
}

// operators are the keys of an expectation besides path; lt and gt may be given together.
var operators = []string{"equals", "contains", "matches", "exists", "length", "lt", "gt", "schema"}

// String says the expectation as a person reads it: `/title equals "Groceries"`.
func (e *expectation) String() string {
	path := e.path
	if path == "" {
		path = "the result"
	}
	switch e.op {
	case "exists":
		if e.exists {
			return path + " exists"
		}
		return path + " does not exist"
	case "length":
		return fmt.Sprintf("%s has length %d", path, e.length)
	case "range":
		var parts []string
		if e.gt != nil {
			parts = append(parts, "> "+e.gt.short(40))
		}
		if e.lt != nil {
			parts = append(parts, "< "+e.lt.short(40))
		}
		return path + " " + strings.Join(parts, " and ")
	case "schema":
		return path + " matches the schema " + e.operand.short(80)
	}
	return fmt.Sprintf("%s %s %s", path, e.op, e.operand.short(80))
}

// parsePointer splits a JSON Pointer into its unescaped tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("%q is not a JSON Pointer: it begins with / (\"/title\", \"/items/0/id\"; \"\" is the whole result)", p)
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, fmt.Errorf("%q: ~ is written ~0 and / is written ~1 in a JSON Pointer", p)
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

// resolve returns the value at toks in doc, or nil.
func resolve(doc *value, toks []string) *value {
	v := doc
	for _, t := range toks {
		switch {
		case v == nil:
			return nil
		case v.kind == kindObject:
			v = v.get(t)
		case v.kind == kindArray:
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 || n >= len(v.elems) || (len(t) > 1 && t[0] == '0') || t[0] == '+' {
				return nil
			}
			v = v.elems[n]
		default:
			return nil
		}
	}
	return v
}

func (d *decoder) expects(v *value) []*expectation {
	if v.kind == kindObject {
		// One expectation may be written without the list around it.
		v = &value{kind: kindArray, elems: []*value{v}, pos: v.pos}
	}
	if v.kind != kindArray {
		d.fail(v.pos, "expect must be a list of {path: /…, OPERATOR: …}, not %s", v.kind)
		return nil
	}
	var out []*expectation
	for _, ev := range v.elems {
		if e := d.expectation(ev); e != nil {
			out = append(out, e)
		}
	}
	return out
}

func (d *decoder) expectation(v *value) *expectation {
	if !d.object(v, "an expectation", append([]string{"path"}, operators...)...) {
		return nil
	}
	e := &expectation{pos: v.pos}
	if p := v.get("path"); p != nil {
		if s, ok := d.str(p, "path"); ok {
			toks, err := parsePointer(s)
			if err != nil {
				d.fail(p.pos, "path: %v", err)
				return nil
			}
			e.path, e.toks = s, toks
		}
	}
	var ops []string
	for _, n := range v.names {
		if slices.Contains(operators, n.text) {
			ops = append(ops, n.text)
		}
	}
	isRange := len(ops) == 2 && slices.Contains(ops, "lt") && slices.Contains(ops, "gt")
	switch {
	case len(ops) == 0:
		d.fail(v.pos, "an expectation needs an operator: one of %s", strings.Join(operators, ", "))
		return nil
	case len(ops) > 1 && !isRange:
		d.fail(v.get(ops[1]).pos, "an expectation has one operator (only lt and gt go together): make one expectation each for %s", strings.Join(ops, " and "))
		return nil
	}
	op := v.get(ops[0])
	e.op = ops[0]
	switch e.op {
	case "equals", "contains":
		e.operand = d.tmplValue(op)
	case "matches":
		e.operand = d.tmplString(op, "matches")
		if e.operand != nil && e.operand.tmpl == nil {
			re, err := regexp.Compile(op.text)
			if err != nil {
				d.fail(op.pos, "matches: %v", err)
				return nil
			}
			e.re = re
		}
	case "exists":
		e.exists, _ = d.boolean(op, "exists")
	case "length":
		e.length, _ = d.integer(op, "length", 0, 1<<31-1)
	case "lt", "gt":
		e.op = "range"
		for _, name := range []string{"lt", "gt"} {
			if b := v.get(name); b != nil {
				b = d.tmplValue(b)
				if b != nil && b.kind != kindNumber && !(b.kind == kindString && b.tmpl != nil && b.tmpl.whole() != nil) {
					d.fail(b.pos, "%s must be a number, not %s", name, b.kind)
				}
				if name == "lt" {
					e.lt = b
				} else {
					e.gt = b
				}
			}
		}
	case "schema":
		if op.kind != kindObject && op.kind != kindBool {
			d.fail(op.pos, "schema must be a JSON Schema (an object), not %s", op.kind)
			return nil
		}
		s, err := schema.Compile(op.json())
		if err != nil {
			d.fail(op.pos, "schema: %v", err)
			return nil
		}
		e.operand, e.schema = op, s
	}
	return e
}

// check evaluates the expectation against got, the value at its path (nil when there is
// none); it returns what was found when it does not hold ("" when it holds), or an error
// when a variable cannot be expanded.
func (e *expectation) check(got *value, sc *scope) (actual string, err error) {
	if e.op == "exists" {
		if (got != nil) == e.exists {
			return "", nil
		}
		if got == nil {
			return "nothing at " + e.pathName(), nil
		}
		return got.short(200), nil
	}
	if got == nil {
		return "nothing at " + e.pathName(), nil
	}
	mismatch := got.short(200)
	switch e.op {
	case "equals":
		want, err := sc.expandValue(e.operand)
		if err != nil {
			return "", err
		}
		if equal(got, want) {
			return "", nil
		}
	case "contains":
		want, err := sc.expandValue(e.operand)
		if err != nil {
			return "", err
		}
		if contains(got, want) {
			return "", nil
		}
	case "matches":
		re := e.re
		if re == nil {
			pat, err := sc.expandString(e.operand)
			if err != nil {
				return "", err
			}
			if re, err = regexp.Compile(pat); err != nil {
				return "", errorf(e.pos, "matches: %v", err)
			}
		}
		if (got.kind == kindString || got.kind == kindNumber) && re.MatchString(got.text) {
			return "", nil
		}
	case "length":
		n, ok := lengthOf(got)
		if ok && n == e.length {
			return "", nil
		}
		if ok {
			return fmt.Sprintf("length %d: %s", n, mismatch), nil
		}
	case "range":
		if got.kind != kindNumber {
			return got.kind.String() + ": " + mismatch, nil
		}
		for _, bound := range []struct {
			v    *value
			sign int
		}{{e.lt, -1}, {e.gt, 1}} {
			if bound.v == nil {
				continue
			}
			b, err := sc.expandValue(bound.v)
			if err != nil {
				return "", err
			}
			if b.kind != kindNumber {
				return "", errorf(bound.v.pos, "the bound %s is %s, not a number", bound.v.text, b.kind)
			}
			if compareNumbers(got.text, b.text) != bound.sign {
				return mismatch, nil
			}
		}
		return "", nil
	case "schema":
		vs := e.schema.Validate(got.json())
		if len(vs) == 0 {
			return "", nil
		}
		msgs := make([]string, 0, 3)
		for _, v := range vs[:min(3, len(vs))] {
			msgs = append(msgs, v.Path+": "+v.Message)
		}
		return mismatch + " (" + strings.Join(msgs, "; ") + ")", nil
	}
	return mismatch, nil
}

func (e *expectation) pathName() string {
	if e.path == "" {
		return "the result"
	}
	return e.path
}

// contains: a string holds a substring; an array an element that matches want (equal to
// it, or for an object want, holding its members); an object every member of want, each
// matching (recursively: an object member holds the wanted object's members).
func contains(got, want *value) bool {
	switch got.kind {
	case kindString:
		return want.kind == kindString && strings.Contains(got.text, want.text)
	case kindArray:
		return slices.ContainsFunc(got.elems, func(e *value) bool { return matchesPart(e, want) })
	case kindObject:
		return want.kind == kindObject && matchesPart(got, want)
	}
	return false
}

// matchesPart: got equals want, or both are objects and got has every member of want,
// each matching.
func matchesPart(got, want *value) bool {
	if got.kind != kindObject || want.kind != kindObject {
		return equal(got, want)
	}
	for i, n := range want.names {
		g := got.get(n.text)
		if g == nil || !matchesPart(g, want.elems[i]) {
			return false
		}
	}
	return true
}

// lengthOf is a string's length in characters, an array's elements, an object's members.
func lengthOf(v *value) (int, bool) {
	switch v.kind {
	case kindString:
		return utf8.RuneCountInString(v.text), true
	case kindArray, kindObject:
		return len(v.elems), true
	}
	return 0, false
}

// expectError is what a step that expects a refusal requires of the error.
type expectError struct {
	pos  Pos
	code string
	kind string
}

func (e *expectError) String() string {
	switch {
	case e.code != "" && e.kind != "":
		return fmt.Sprintf("an error %s (%s)", e.code, e.kind)
	case e.code != "":
		return "an error " + e.code
	case e.kind != "":
		return "an error of kind " + e.kind
	}
	return "an error"
}

func (d *decoder) expectError(v *value) *expectError {
	if !d.object(v, "expectError", "code", "kind") {
		return nil
	}
	e := &expectError{pos: v.pos}
	if c := v.get("code"); c != nil {
		e.code, _ = d.nonEmpty(c, "expectError.code")
	}
	if k := v.get("kind"); k != nil {
		if s, ok := d.str(k, "expectError.kind"); ok {
			if !slices.Contains([]string{"denied", "unavailable", "invalid", "failed"}, s) {
				d.fail(k.pos, "expectError.kind must be denied, unavailable, invalid or failed, not %q", s)
			}
			e.kind = s
		}
	}
	return e
}
