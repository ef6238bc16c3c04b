package schema

import (
	"bytes"
	"encoding/json" // only for the json.Number type the schema library expects; never to decode
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// validateStd validates with the general JSON Schema implementation: every keyword of
// 2020-12, at the cost of decoding the instance into generic Go values.
func (s *Schema) validateStd(instance jsontext.Value) []Violation {
	v, values, err := decodeAny(instance)
	if err != nil {
		return []Violation{{Path: "$", Code: CodeInvalidJSON, Message: "value is not valid JSON: " + err.Error()}}
	}
	if budget := validationBudgetBase + validationBudgetPerValue*values; !s.graph.fits(v, budget) {
		return []Violation{{Path: "$", Code: CodeValidationBudget, Message: fmt.Sprintf(
			"checking this value against the schema would take more than %d steps: the schema's alternatives multiply with the value's depth", budget)}}
	}
	err = s.std.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Path: "$", Code: CodeSchemaMismatch, Message: err.Error()}}
	}
	var out []Violation
	collectViolations(ve, v, &out)
	out = dropSideEffects(out)
	// The library walks objects in map order; sort for a deterministic report.
	slices.SortStableFunc(out, func(a, b Violation) int { return strings.Compare(a.Path, b.Path) })
	if len(out) == 0 { // a group without leaves; still invalid
		out = append(out, Violation{Path: "$", Code: CodeSchemaMismatch, Message: "value does not match the schema"})
	}
	return out
}

// decodeAny decodes one JSON value strictly (no duplicate names, valid UTF-8) into the
// generic form the schema library validates, numbers as json.Number so that none loses
// precision. It also returns the number of JSON values read.
func decodeAny(b []byte) (v any, values int, err error) {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	v, err = readAny(dec, &values)
	if err != nil {
		return nil, 0, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("unexpected data after the value")
		}
		return nil, 0, err
	}
	return v, values, nil
}

func readAny(dec *jsontext.Decoder, values *int) (any, error) {
	*values++
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		m := map[string]any{}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // before the next read voids the token
			v, err := readAny(dec, values)
			if err != nil {
				return nil, err
			}
			m[name] = v
		}
		_, err := dec.ReadToken()
		return m, err
	case '[':
		a := []any{}
		for dec.PeekKind() != ']' {
			v, err := readAny(dec, values)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.ReadToken()
		return a, err
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tameNumber(tok.String())), nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	default:
		return nil, nil
	}
}

// maxExponent bounds the decimal exponent of numbers handed to the general validator,
// which computes with big.Rat: "1e1000000" alone costs it tens of milliseconds.
const maxExponent = 400

// withinExponents reports whether d is a number the general validator keeps as it is: zero,
// or a magnitude within 10^±maxExponent (tameNumber replaces the others).
func (d decimal) withinExponents() bool {
	return d.isZero || d.point >= -maxExponent && d.point <= maxExponent
}

// tameNumber replaces a number whose magnitude is beyond 10^±maxExponent by ±1e400 (huge)
// or ±1e-400 (tiny). Sign, integer-ness and the order relative to any bound a schema
// plausibly states are kept; only comparisons between two such extremes could change.
func tameNumber(lit string) string {
	d := parseDecimal([]byte(lit))
	switch {
	case d.withinExponents():
		return lit
	case d.point > maxExponent && d.neg:
		return "-1e400"
	case d.point > maxExponent:
		return "1e400"
	case d.neg:
		return "-1e-400"
	}
	return "1e-400"
}

// collectViolations flattens the library's error tree into violations: leaves become one
// violation each (one per missing or extra property), anyOf/oneOf/not failures one
// violation at their own location, because the branches' individual complaints would
// contradict each other.
func collectViolations(e *jsonschema.ValidationError, instance any, out *[]Violation) {
	if len(*out) >= MaxViolations {
		return
	}
	add := func(path []string, code, msg string) {
		if len(*out) < MaxViolations {
			*out = append(*out, Violation{Path: formatPath(instance, path), Code: code, Message: msg})
		}
	}
	loc := e.InstanceLocation
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf:
		add(loc, CodeSchemaMismatch, "value matches none of the alternatives (anyOf)")
		return
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			add(loc, CodeSchemaMismatch, fmt.Sprintf("value matches %d alternatives, exactly one is allowed (oneOf)", len(k.Subschemas)))
		} else {
			add(loc, CodeSchemaMismatch, "value matches none of the alternatives (oneOf)")
		}
		return
	case *kind.Not:
		add(loc, CodeSchemaMismatch, "value matches a schema it must not match (not)")
		return
	case *kind.Required:
		for _, p := range k.Missing {
			add(append(loc[:len(loc):len(loc)], p), CodeRequiredPropertyMissing, fmt.Sprintf("required property %q is missing", p))
		}
		return
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			add(append(loc[:len(loc):len(loc)], p), CodeAdditionalPropertyNotAllowed, fmt.Sprintf("property %q is not allowed", p))
		}
		return
	case *kind.FalseSchema:
		if strings.HasSuffix(e.SchemaURL, "/unevaluatedProperties") || strings.HasSuffix(e.SchemaURL, "/additionalProperties") {
			name := ""
			if len(loc) > 0 {
				name = loc[len(loc)-1]
			}
			add(loc, CodeAdditionalPropertyNotAllowed, fmt.Sprintf("property %q is not allowed", name))
		} else {
			add(loc, CodeSchemaMismatch, "no value is allowed here")
		}
		return
	case *kind.Type:
		if k.Got == "null" {
			add(loc, CodeNullNotAllowed, fmt.Sprintf("null is not allowed (expected %s)", strings.Join(k.Want, " or ")))
		} else {
			add(loc, CodeTypeMismatch, fmt.Sprintf("expected %s, got %s", strings.Join(k.Want, " or "), k.Got))
		}
		return
	case *kind.Schema, *kind.Group, *kind.AllOf, *kind.Reference:
		for _, c := range e.Causes {
			collectViolations(c, instance, out)
		}
		return
	}
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collectViolations(c, instance, out)
		}
		return
	}
	code, msg := stdLeaf(e.ErrorKind)
	add(loc, code, msg)
}

// stdLeaf names and describes the violation of a leaf keyword, in the words the fast
// validator uses.
func stdLeaf(k jsonschema.ErrorKind) (code, message string) {
	switch k := k.(type) {
	case *kind.Enum:
		opts := make([]string, len(k.Want))
		for i, w := range k.Want {
			opts[i] = valueText(w)
		}
		return CodeEnumValueInvalid, "value must be one of " + strings.Join(opts, ", ")
	case *kind.Const:
		return CodeConstValueInvalid, "value must be " + valueText(k.Want)
	case *kind.Format:
		return CodeFormatInvalid, "value is not a valid " + k.Want
	case *kind.Minimum:
		return CodeMinimum, fmt.Sprintf("%s is below the minimum %s", ratText(k.Got), ratText(k.Want))
	case *kind.Maximum:
		return CodeMaximum, fmt.Sprintf("%s exceeds the maximum %s", ratText(k.Got), ratText(k.Want))
	case *kind.ExclusiveMinimum:
		return CodeExclusiveMinimum, fmt.Sprintf("%s must be greater than %s", ratText(k.Got), ratText(k.Want))
	case *kind.ExclusiveMaximum:
		return CodeExclusiveMaximum, fmt.Sprintf("%s must be less than %s", ratText(k.Got), ratText(k.Want))
	case *kind.MultipleOf:
		return CodeMultipleOf, fmt.Sprintf("%s is not a multiple of %s", ratText(k.Got), ratText(k.Want))
	case *kind.MinLength:
		return CodeMinLength, fmt.Sprintf("length %d is below the minimum length %d", k.Got, k.Want)
	case *kind.MaxLength:
		return CodeMaxLength, fmt.Sprintf("length %d exceeds the maximum length %d", k.Got, k.Want)
	case *kind.Pattern:
		return CodePatternMismatch, fmt.Sprintf("value does not match the pattern %q", k.Want)
	case *kind.MinItems:
		return CodeMinItems, fmt.Sprintf("array has %d items, fewer than the minimum %d", k.Got, k.Want)
	case *kind.MaxItems:
		return CodeMaxItems, fmt.Sprintf("array has %d items, more than the maximum %d", k.Got, k.Want)
	case *kind.AdditionalItems:
		return CodeMaxItems, fmt.Sprintf("array has %d items more than allowed", k.Count)
	case *kind.UniqueItems:
		return CodeUniqueItems, fmt.Sprintf("items %d and %d are equal", k.Duplicates[0], k.Duplicates[1])
	case *kind.MinProperties:
		return CodeMinProperties, fmt.Sprintf("object has %d properties, fewer than the minimum %d", k.Got, k.Want)
	case *kind.MaxProperties:
		return CodeMaxProperties, fmt.Sprintf("object has %d properties, more than the maximum %d", k.Got, k.Want)
	case *kind.Contains:
		return CodeContains, "no item matches the contains schema"
	case *kind.MinContains:
		return CodeContains, fmt.Sprintf("%d items match the contains schema, fewer than %d", len(k.Got), k.Want)
	case *kind.MaxContains:
		return CodeContains, fmt.Sprintf("%d items match the contains schema, more than %d", len(k.Got), k.Want)
	case *kind.Dependency:
		return CodeDependencyMissing, fmt.Sprintf("property %q requires %s", k.Prop, strings.Join(k.Missing, ", "))
	case *kind.DependentRequired:
		return CodeDependencyMissing, fmt.Sprintf("property %q requires %s", k.Prop, strings.Join(k.Missing, ", "))
	case *kind.PropertyNames:
		return CodePropertyNameInvalid, fmt.Sprintf("property name %q is not allowed", k.Property)
	}
	return CodeSchemaMismatch, "value does not match the schema (" + strings.TrimPrefix(fmt.Sprintf("%T", k), "*kind.") + ")"
}

// valueText writes a generic JSON value briefly, for messages.
func valueText(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprint(v)
}

// ratText writes an exact number as a decimal.
func ratText(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	s := r.FloatString(12)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// dropSideEffects removes an additional-property complaint about a property that has
// violations of its own: under unevaluatedProperties, a property whose subschema failed
// counts as unevaluated, and "not allowed" would then mislead.
func dropSideEffects(vs []Violation) []Violation {
	out := vs[:0]
	for i, v := range vs {
		if v.Code == CodeAdditionalPropertyNotAllowed && slices.ContainsFunc(vs, func(w Violation) bool {
			return w != vs[i] && (w.Path == v.Path || strings.HasPrefix(w.Path, v.Path+".") || strings.HasPrefix(w.Path, v.Path+"["))
		}) {
			continue
		}
		out = append(out, v)
	}
	return out
}

// formatPath writes an instance location as "$", "$.a.b", "$[3]" or `$["a b"]`, walking
// the instance to tell array indexes from member names.
func formatPath(instance any, segs []string) string {
	b := make([]byte, 0, 16)
	b = append(b, '$')
	cur := instance
	for _, s := range segs {
		switch c := cur.(type) {
		case []any:
			b = appendPathSegment(b, s, true)
			if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
		case map[string]any:
			b = appendPathSegment(b, s, false)
			cur = c[s]
		default:
			b = appendPathSegment(b, s, false)
			cur = nil
		}
	}
	return string(b)
}

// appendPathSegment appends one step: [i] for an index, .name for an identifier-like
// name, ["name"] otherwise.
func appendPathSegment(b []byte, name string, index bool) []byte {
	if index {
		b = append(b, '[')
		b = append(b, name...)
		return append(b, ']')
	}
	if isIdentifier(name) {
		b = append(b, '.')
		return append(b, name...)
	}
	b = append(b, '[')
	b = strconv.AppendQuote(b, name)
	return append(b, ']')
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return true
}
