package wire

import (
	"bytes"
	"encoding"
	"reflect"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// shape is what the strict scanner knows about the Go type a JSON value is decoded into:
// for a struct, the JSON names of its fields, so that a key differing from one of them only
// by case can be refused before the json package silently ignores it (the key-smuggling
// hole of encoding/json v1, whose case-folding match would take it); for containers, the
// shape of the elements. A nil *shape means "any JSON": no names are known below it.
type shape struct {
	fields []field // struct fields by JSON name (embedded structs flattened)
	elem   *shape  // element of a slice, array or map; nil = any JSON
	isObj  bool    // a struct: keys are checked against fields
	// foldDistinct: no two fields' names are equal under case folding.
	foldDistinct bool
}

// field is one JSON member of a struct.
type field struct {
	name   []byte // the JSON name; bytes because it is compared with input slices
	nocase bool   // the field itself opts into case-insensitive matching (`case:ignore`)
	shape  *shape // the field's value
}

// lookup returns the field named exactly name, or else the field whose name equals name
// under case folding (variant = true), or nothing.
func (s *shape) lookup(name []byte) (f *field, variant bool) {
	for i := range s.fields {
		if bytes.Equal(s.fields[i].name, name) {
			return &s.fields[i], false
		}
	}
	for i := range s.fields {
		if bytes.EqualFold(s.fields[i].name, name) {
			return &s.fields[i], !s.fields[i].nocase
		}
	}
	return nil, false
}

var (
	shapeCache sync.Map // reflect.Type -> *shape (nil for "any JSON")
	shapeMu    sync.Mutex

	// Types whose JSON form is their own business: their members are unknown to us.
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	unmarshalerFromType = reflect.TypeFor[json.UnmarshalerFrom]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	valueType           = reflect.TypeFor[jsontext.Value]()
)

// shapeOf returns the cached shape of t, deriving it on first use.
func shapeOf(t reflect.Type) *shape {
	if s, ok := shapeCache.Load(t); ok {
		return s.(*shape)
	}
	shapeMu.Lock()
	defer shapeMu.Unlock()
	if s, ok := shapeCache.Load(t); ok {
		return s.(*shape)
	}
	building := map[reflect.Type]*shape{}
	s := buildShape(t, building)
	for bt, bs := range building {
		shapeCache.Store(bt, bs)
	}
	shapeCache.Store(t, s)
	return s
}

// buildShape derives a shape; building holds the shapes under construction so that
// recursive types (Outcome.Evidence holds Outcomes) terminate.
func buildShape(t reflect.Type, building map[reflect.Type]*shape) *shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == valueType || customJSON(t) {
		return nil
	}
	if s, ok := building[t]; ok {
		return s
	}
	switch t.Kind() {
	case reflect.Struct:
		s := &shape{isObj: true}
		building[t] = s
		s.fields = structFields(t, building, nil, map[reflect.Type]bool{})
		s.foldDistinct = foldDistinct(s.fields)
		return s
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // []byte is a base64 string
		}
		fallthrough
	case reflect.Map:
		s := &shape{}
		building[t] = s
		s.elem = buildShape(t.Elem(), building)
		if s.elem == nil {
			return nil // a container of anything tells the scanner nothing
		}
		return s
	}
	return nil
}

// customJSON reports whether t decodes itself (its JSON members are not its fields).
func customJSON(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(unmarshalerType) || pt.Implements(unmarshalerFromType) ||
		pt.Implements(textUnmarshalerType)
}

// structFields lists the JSON members of struct t the way the json package names them:
// the tag name or the Go name, "-" and unexported fields skipped, untagged embedded
// structs (and `inline` fields) flattened, shallower names winning over embedded ones.
func structFields(t reflect.Type, building map[reflect.Type]*shape, out []field, seen map[reflect.Type]bool) []field {
	if seen[t] {
		return out
	}
	seen[t] = true
	var embedded []reflect.Type
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, hasTag := sf.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, opts := tag, ""
		if j := strings.IndexByte(tag, ','); j >= 0 {
			name, opts = tag[:j], tag[j:]
		}
		name = strings.Trim(name, "'")
		ft := sf.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		inline := hasOpt(opts, "inline") || hasOpt(opts, "embed") || (sf.Anonymous && name == "")
		if hasOpt(opts, "unknown") {
			continue // a catch-all for unknown members: nothing to compare against
		}
		if inline && ft.Kind() == reflect.Struct && !customJSON(ft) {
			embedded = append(embedded, ft)
			continue
		}
		if inline || (!sf.IsExported() && !hasTag) || !sf.IsExported() {
			continue // an inline map/Value is a catch-all too; unexported fields are invisible
		}
		if name == "" {
			name = sf.Name
		}
		if containsField(out, name) {
			continue
		}
		out = append(out, field{
			name:   []byte(name),
			nocase: hasOpt(opts, "case:ignore") || hasOpt(opts, "nocase"),
			shape:  buildShape(sf.Type, building),
		})
	}
	for _, et := range embedded {
		out = structFields(et, building, out, seen)
	}
	return out
}

func hasOpt(opts, opt string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

func containsField(fs []field, name string) bool {
	for _, f := range fs {
		if string(f.name) == name {
			return true
		}
	}
	return false
}

// foldDistinct reports whether no two of fs have names equal under case folding.
func foldDistinct(fs []field) bool {
	for i := range fs {
		for j := range i {
			if bytes.EqualFold(fs[i].name, fs[j].name) {
				return false
			}
		}
	}
	return true
}
