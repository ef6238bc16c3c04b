package flow

import (
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// kind is the JSON type of a value.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// value is one JSON value with the position it was read at: the flow file's tree (read from
// YAML or JSON), and the results a flow's steps compare and save. Numbers keep their
// literal text, so an id like 12345678901234567890 is compared and sent back exactly.
type value struct {
	kind kind
	// text is a string's value, a number's literal, or "true"/"false".
	text string
	// elems are an array's elements or an object's member values; names are an object's
	// member names (string values, with their positions), parallel to elems.
	elems []*value
	names []*value
	pos   Pos
	// tmpl is set on a string that references variables, where the format expands them.
	tmpl *vtext
}

// get returns an object's member named name, or nil.
func (v *value) get(name string) *value {
	if v == nil || v.kind != kindObject {
		return nil
	}
	for i, n := range v.names {
		if n.text == name {
			return v.elems[i]
		}
	}
	return nil
}

// appendJSON appends v as compact JSON.
func (v *value) appendJSON(dst []byte) []byte {
	switch v.kind {
	case kindNull:
		return append(dst, "null"...)
	case kindBool, kindNumber:
		return append(dst, v.text...)
	case kindString:
		b, _ := jsontext.AppendQuote(dst, v.text)
		return b
	case kindArray:
		dst = append(dst, '[')
		for i, e := range v.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = e.appendJSON(dst)
		}
		return append(dst, ']')
	default:
		dst = append(dst, '{')
		for i, e := range v.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst, _ = jsontext.AppendQuote(dst, v.names[i].text)
			dst = append(dst, ':')
			dst = e.appendJSON(dst)
		}
		return append(dst, '}')
	}
}

// json returns v as compact JSON.
func (v *value) json() jsontext.Value { return v.appendJSON(nil) }

// short returns v as compact JSON cut to about limit bytes, for messages.
func (v *value) short(limit int) string {
	if v == nil {
		return "nothing"
	}
	return shorten(string(v.appendJSON(nil)), limit)
}

func shorten(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// equal reports whether a and b are the same JSON value: numbers by their exact value
// (1 equals 1.0), objects whatever the order of their members.
func equal(a, b *value) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kindNull:
		return true
	case kindBool, kindString:
		return a.text == b.text
	case kindNumber:
		return compareNumbers(a.text, b.text) == 0
	case kindArray:
		return slices.EqualFunc(a.elems, b.elems, equal)
	default:
		if len(a.elems) != len(b.elems) {
			return false
		}
		for i, n := range a.names {
			o := b.get(n.text)
			if o == nil || !equal(a.elems[i], o) {
				return false
			}
		}
		return true
	}
}

// maxExactExponent bounds the exponents compared exactly: math/big would allocate a number
// of 10^exponent digits, and a result may carry 1e999999999.
const maxExactExponent = 400

// compareNumbers compares two JSON number literals by value.
func compareNumbers(a, b string) int {
	if a == b {
		return 0
	}
	ra, okA := exactNumber(a)
	rb, okB := exactNumber(b)
	if okA && okB {
		return ra.Cmp(rb)
	}
	fa, _ := strconv.ParseFloat(a, 64)
	fb, _ := strconv.ParseFloat(b, 64)
	switch {
	case fa < fb:
		return -1
	case fa > fb:
		return 1
	}
	return 0
}

func exactNumber(s string) (*big.Rat, bool) {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > maxExactExponent || e < -maxExactExponent {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// isJSONNumber reports whether s is a number in JSON's grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
