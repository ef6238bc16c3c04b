package app

import (
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// A typed tool's result is most often a flat struct — strings, booleans and integers
// under plain json tags — and the json package's reflective encoder cost a small call
// about as much as the rest of the app's share together (0.6–0.8 µs for an 8-field
// struct). flatEncoder writes such a result from a plan made once at registration: the
// fields in declaration order, their names quoted in advance. It writes exactly what
// wire.Marshal writes, which stays the reference: any type outside that form gets no
// plan, and a value this encoder cannot write (a string that is not valid UTF-8) is
// handed to wire.Marshal, which says why. FuzzFlatResult and TestFlatResultMatchesMarshal
// hold the two against each other.

// flatEncoder encodes values of one flat struct type, or of a pointer to it.
type flatEncoder struct {
	pointer bool
	fields  []flatField
}

// flatField is one member of a flat struct's JSON.
type flatField struct {
	index int
	kind  reflect.Kind
	head  string // `"name":`, the name quoted as the json package quotes it
	// omitZero: omitted when zero (omitzero, or omitempty on a string, whose JSON is
	// then empty). omitempty on a boolean or a number omits nothing: their JSON is never
	// empty.
	omitZero bool
}

// newFlatEncoder returns the plan for t, or nil when t (or what it points to) is not a flat
// struct: exported fields of kind bool, string or integer, named by their Go name or by a
// json tag with no option but omitempty and omitzero, no field of a type that writes its
// own JSON or says itself when it is zero (IsZero), no embedded field, no name used twice.
func newFlatEncoder(t reflect.Type) *flatEncoder {
	e := &flatEncoder{}
	if t.Kind() == reflect.Pointer {
		e.pointer, t = true, t.Elem()
	}
	if t.Kind() != reflect.Struct || customJSON(t) {
		return nil
	}
	names := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, tagged := f.Tag.Lookup("json")
		if f.Anonymous {
			return nil
		}
		if tag == "-" || !f.IsExported() && !tagged {
			continue
		}
		if !f.IsExported() {
			return nil // the json package refuses it
		}
		name, opts, _ := strings.Cut(tag, ",")
		omitEmpty, omitZero := false, false
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "":
			case "omitempty":
				omitEmpty = true
			case "omitzero":
				omitZero = true
			default:
				return nil
			}
		}
		if name == "" {
			name = f.Name
		}
		if strings.HasPrefix(name, "'") || !utf8.ValidString(name) || names[name] {
			return nil
		}
		names[name] = true
		k := f.Type.Kind()
		switch k {
		case reflect.Bool, reflect.String,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			return nil
		}
		if customJSON(f.Type) || hasIsZero(f.Type) {
			return nil
		}
		head, err := jsontext.AppendQuote(nil, name)
		if err != nil {
			return nil
		}
		e.fields = append(e.fields, flatField{index: i, kind: k, head: string(append(head, ':')),
			omitZero: omitZero || omitEmpty && k == reflect.String})
	}
	return e
}

// hasIsZero reports whether t or *t has an IsZero method, which omitzero would call.
func hasIsZero(t reflect.Type) bool {
	_, ok := t.MethodByName("IsZero")
	_, okp := reflect.PointerTo(t).MethodByName("IsZero")
	return ok || okp
}

// encode returns v's JSON, or ok false when only wire.Marshal can say what it is (an
// invalid string).
func (e *flatEncoder) encode(v any) (out jsontext.Value, ok bool) {
	return e.appendJSON(nil, v)
}

// appendJSON appends v's JSON to dst, or returns ok false (and dst as it was) when only
// wire.Marshal can say what it is (an invalid string).
func (e *flatEncoder) appendJSON(dst []byte, v any) (out []byte, ok bool) {
	rv := reflect.ValueOf(v)
	if e.pointer {
		if rv.IsNil() {
			return append(dst, "null"...), true
		}
		rv = rv.Elem()
	}
	b, ok := e.append(dst, rv)
	if !ok {
		return dst, false
	}
	return b, true
}

// append appends the JSON of the struct rv to b; ok is false for a string that is not
// valid UTF-8.
func (e *flatEncoder) append(b []byte, rv reflect.Value) (_ []byte, ok bool) {
	b = append(b, '{')
	first := true
	for i := range e.fields {
		f := &e.fields[i]
		fv := rv.Field(f.index)
		if f.omitZero && fv.IsZero() {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, f.head...)
		switch f.kind {
		case reflect.Bool:
			b = strconv.AppendBool(b, fv.Bool())
		case reflect.String:
			if b, ok = appendJSONString(b, fv.String()); !ok {
				return nil, false
			}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			b = strconv.AppendInt(b, fv.Int(), 10)
		default:
			b = strconv.AppendUint(b, fv.Uint(), 10)
		}
	}
	return append(b, '}'), true
}

// appendJSONString appends s quoted as the json package quotes it: plain ASCII as is,
// anything else through jsontext. ok is false for invalid UTF-8.
func appendJSONString(dst []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			out, err := jsontext.AppendQuote(dst, s)
			return out, err == nil
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"'), true
}
