package app

import (
	"context"
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

// Register adds a typed tool: the handler receives the arguments decoded into In (with the
// strict decoder) and returns an Out, marshalled as the call's result.
//
// Schemas that the definition leaves empty are inferred from the Go types: structs become
// closed objects whose properties are the JSON field names (fields without omitempty or
// omitzero are required; a `jsonschema:"…"` tag is the property's description), strings,
// numbers, booleans, slices and string-keyed maps map to their JSON Schema types, and
// jsontext.Value or an interface type accepts any value. In must describe a JSON object (a
// struct, a string-keyed map or jsontext.Value).
//
// For a flattened-string tool (Definition.ArgumentEncoding) the handler's In is decoded
// from the flattened string map (see Call.StringArguments): use map[string]string, or a
// struct whose non-string fields carry the `,string` option (`json:"maxDepth,string"`).
// Flattened tools' arguments and results are not validated against their schemas
// (docs/protocol/catalog.md#argument-encoding: only native JSON tools are).
func Register[In, Out any](a *App, d catalog.Definition, h func(ctx context.Context, c *Call, in In) (Out, error), opts ...ToolOption) error {
	if h == nil {
		return fmt.Errorf("app: tool %q: no handler", d.ID)
	}
	if len(d.ArgumentsSchema) == 0 {
		s, err := inferSchema(reflect.TypeFor[In](), true)
		if err != nil {
			return fmt.Errorf("app: tool %q: inferring the arguments schema from %v: %w", d.ID, reflect.TypeFor[In](), err)
		}
		d.ArgumentsSchema = s
	}
	inferredResult := len(d.ResultSchema) == 0
	if inferredResult {
		s, err := inferSchema(reflect.TypeFor[Out](), false)
		if err != nil {
			return fmt.Errorf("app: tool %q: inferring the result schema from %v: %w", d.ID, reflect.TypeFor[Out](), err)
		}
		d.ResultSchema = s
	}
	flattened := d.ArgumentEncoding == wire.ArgumentEncodingFlattenedString
	// No arguments decode into a struct as its zero value: most calls of tools without
	// parameters skip the decoder.
	structIn := reflect.TypeFor[In]().Kind() == reflect.Struct
	t := Tool{
		Definition: d,
		// The JSON of a plain Go value always matches the schema inferred from its type:
		// validating it again would only cost time (a third of the app's share of a
		// small call). A nil pointer, written as null, is still validated, and fails.
		resultConforms: inferredResult && conformsByConstruction(reflect.TypeFor[Out](), map[reflect.Type]bool{}),
		resultEncoder:  newFlatEncoder(reflect.TypeFor[Out]()),
		Handler: func(ctx context.Context, c *Call) (any, error) {
			var in In
			src := []byte(c.Arguments)
			if flattened {
				var err error
				if src, err = wire.Marshal(c.StringArguments); err != nil {
					return nil, err
				}
			}
			if !structIn || string(src) != "{}" {
				if err := wire.Unmarshal(src, &in); err != nil {
					return nil, &wire.Error{Code: wire.CodeArgumentsInvalid, Message: fmt.Sprintf("Tool '%s' cannot read its arguments: %v", c.ToolID, err)}
				}
			}
			out, err := h(ctx, c, in)
			if err != nil {
				return nil, err
			}
			return out, nil
		},
	}
	for _, o := range opts {
		o(&t)
	}
	return a.Register(t)
}

var (
	rawValueType = reflect.TypeFor[jsontext.Value]()
	timeType     = reflect.TypeFor[time.Time]()
)

// inferSchema derives the protocol form of a JSON Schema from a Go type with
// jsonschema-go, then adapts it: closed objects are the protocol default (their explicit
// additionalProperties:false is dropped), slices are arrays (the marshaller writes nil
// slices as []), raw JSON accepts anything, time.Time is a date-time string.
func inferSchema(t reflect.Type, arguments bool) (jsontext.Value, error) {
	// A top-level pointer describes the value it points to: arguments are never null, and
	// a handler returning a nil result fails the result schema, as it should.
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawValueType || t.Kind() == reflect.Interface {
		if arguments {
			return jsontext.Value(`{"type":"object","additionalProperties":true}`), nil
		}
		return jsontext.Value(`{}`), nil
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		rawValueType: {},
		timeType:     {Type: "string", Format: "date-time"},
	}})
	if err != nil {
		return nil, err
	}
	if arguments && s.Type != "object" {
		return nil, fmt.Errorf("arguments must be a JSON object (a struct or a string-keyed map), not %q", s.Type)
	}
	adaptSchema(s)
	b, err := json.Marshal(s) // Schema's own MarshalJSON
	if err != nil {
		return nil, err
	}
	return schema.Published(b), nil
}

// conformsByConstruction reports whether the JSON the json package writes for any value
// of t matches the schema inferSchema derives from t, so that a typed tool's result need
// not be validated. It holds for plain types only: booleans, numbers, strings, slices,
// arrays and string-keyed maps of plain types, pointers to them (null is allowed), raw
// JSON and empty interfaces (any value is), and structs of plain fields named by plain
// json tags (omitempty and omitzero at most: the schema does not require those fields).
// Anything that writes its own JSON (a Marshaler, time.Time), []byte (a base64 string,
// inferred as an array of bytes), embedded or recursive structs and other tag options are
// validated as every result is. TestConformsByConstruction holds it against the
// validator with random types and values.
func conformsByConstruction(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == rawValueType {
		return true
	}
	if customJSON(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	case reflect.Interface:
		return t.NumMethod() == 0
	case reflect.Pointer:
		return conformsByConstruction(t.Elem(), seen)
	case reflect.Slice, reflect.Array:
		return t.Elem().Kind() != reflect.Uint8 && conformsByConstruction(t.Elem(), seen)
	case reflect.Map:
		return t.Key().Kind() == reflect.String && !customJSON(t.Key()) && conformsByConstruction(t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return false
		}
		seen[t] = true
		defer delete(seen, t)
		names := map[string]bool{}
		for i := range t.NumField() {
			f := t.Field(i)
			tag, tagged := f.Tag.Lookup("json")
			if f.Anonymous { // inlined by the json package, whether exported or not
				return false
			}
			if tag == "-" || !f.IsExported() && !tagged {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			for o := range strings.SplitSeq(opts, ",") {
				if o != "" && o != "omitempty" && o != "omitzero" {
					return false
				}
			}
			if name == "" {
				name = f.Name
			}
			if !f.IsExported() || strings.HasPrefix(name, "'") || names[name] ||
				!conformsByConstruction(f.Type, seen) {
				return false
			}
			names[name] = true
		}
		return true
	}
	return false
}

var (
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	jsonMarshalerToType = reflect.TypeFor[json.MarshalerTo]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
)

// customJSON reports whether t, or a pointer to it, writes its own JSON.
func customJSON(t reflect.Type) bool {
	for _, u := range []reflect.Type{t, reflect.PointerTo(t)} {
		if u.Implements(jsonMarshalerType) || u.Implements(jsonMarshalerToType) || u.Implements(textMarshalerType) {
			return true
		}
	}
	return false
}

// adaptSchema rewrites what jsonschema-go infers into what the SDK publishes.
func adaptSchema(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if slices.Equal(s.Types, []string{"null", "array"}) {
		s.Types, s.Type = nil, "array"
	}
	for _, p := range s.Properties {
		adaptSchema(p)
	}
	adaptSchema(s.Items)
	adaptSchema(s.AdditionalProperties)
	for _, d := range s.Defs {
		adaptSchema(d)
	}
}
