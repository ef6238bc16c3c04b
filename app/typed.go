package app

import (
	"context"
	"fmt"
	"reflect"
	"slices"
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
	if len(d.ResultSchema) == 0 {
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
