package schema

import (
	"errors"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Violation is one reason an instance does not match a schema, as reported in
// tool_arguments_schema_invalid / tool_result_schema_invalid details.
type Violation struct {
	// Path locates the offending value: "$" for the root, "$.reference.nodeId" for a
	// member, "$[3]" for an array element, `$["odd name"]` for names that are not plain
	// identifiers. For a missing or extra property it is the property's own path.
	Path string `json:"path"`
	// Code is stable and machine-readable; see the Code constants.
	Code string `json:"code"`
	// Message is for humans.
	Message string `json:"message"`
}

// Violation codes. The first six are the reference SDK's; the others name the remaining
// JSON Schema keywords.
const (
	CodeRequiredPropertyMissing      = "required_property_missing"
	CodeAdditionalPropertyNotAllowed = "additional_property_not_allowed"
	CodeTypeMismatch                 = "type_mismatch"
	CodeEnumValueInvalid             = "enum_value_invalid"
	CodeFormatInvalid                = "format_invalid"
	CodeNullNotAllowed               = "null_not_allowed"
	CodeConstValueInvalid            = "const_value_invalid"
	CodeMinimum                      = "minimum"
	CodeMaximum                      = "maximum"
	CodeExclusiveMinimum             = "exclusive_minimum"
	CodeExclusiveMaximum             = "exclusive_maximum"
	CodeMultipleOf                   = "multiple_of"
	CodeMinLength                    = "min_length"
	CodeMaxLength                    = "max_length"
	CodePatternMismatch              = "pattern_mismatch"
	CodeMinItems                     = "min_items"
	CodeMaxItems                     = "max_items"
	CodeUniqueItems                  = "unique_items"
	CodeMinProperties                = "min_properties"
	CodeMaxProperties                = "max_properties"
	CodeContains                     = "contains"
	CodeDependencyMissing            = "dependency_missing"
	CodePropertyNameInvalid          = "property_name_invalid"
	CodeSchemaMismatch               = "schema_mismatch" // anyOf, oneOf, not, a false schema
	CodeInvalidJSON                  = "invalid_json"
)

// MaxViolations bounds the violations one Validate call reports.
const MaxViolations = 32

// Schema is a compiled JSON Schema 2020-12 with the protocol's closed-object default
// restored. It is immutable and safe for concurrent use.
type Schema struct {
	published jsontext.Value // wire form (restored defaults stripped)
	canonical jsontext.Value // RFC 8785 form of published, for definition revisions
	object    bool           // top-level "type" is "object"
	fast      *plan          // allocation-free validator; nil when a keyword needs std
	std       *jsonschema.Schema
	graph     *schemaGraph // for the validation budget of std
	// emptyOK records that {} is valid, decided once when compiled: most tools take no
	// arguments, and most calls of a tool without parameters pass exactly {}.
	emptyOK bool
}

// schemaCache maps a schema document (as written) to its compiled form. Apps register a
// fixed set of tools whose schemas repeat (NewSet runs on every registry or guard change),
// so compiled schemas are shared; the cache stops growing at maxCachedSchemas.
var schemaCache sync.Map // string → *Schema

const maxCachedSchemas = 8192

var cachedSchemas struct {
	sync.Mutex
	n int
}

// Compile compiles a JSON Schema 2020-12 document written in the protocol's form:
// every object schema without additionalProperties is closed before compiling (see the
// package doc). References may point only inside the document: the loader refuses every
// external URL, file:// included, so compiling never touches the file system or network.
// A document beyond the bounds of CheckBounds is refused. Compiled schemas are
// cached by document bytes.
func Compile(raw jsontext.Value) (*Schema, error) {
	if s, ok := schemaCache.Load(string(raw)); ok {
		return s.(*Schema), nil
	}
	s, err := compileSchema(raw)
	if err != nil {
		return nil, err
	}
	cachedSchemas.Lock()
	if cachedSchemas.n < maxCachedSchemas {
		if _, loaded := schemaCache.LoadOrStore(string(raw), s); !loaded {
			cachedSchemas.n++
		}
	}
	cachedSchemas.Unlock()
	return s, nil
}

// schemaURL is where a schema document lives for the compiler. Relative references
// resolve against it and then fail in denyLoader.
const schemaURL = "https://schemas.ansight.invalid/tool.json"

// denyLoader refuses to load any URL: schemas must be self-contained.
type denyLoader struct{}

func (denyLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q is not allowed (schemas must be self-contained)", url)
}

func compileSchema(raw jsontext.Value) (*Schema, error) {
	tree, err := parseTree(raw)
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	if tree.kind != '{' && tree.kind != 't' && tree.kind != 'f' {
		return nil, errors.New("schema must be an object or a boolean")
	}
	if d := tree.get("$schema"); d != nil && (d.kind != '"' || d.str != "https://json-schema.org/draft/2020-12/schema") {
		return nil, errors.New(`"$schema" must be "https://json-schema.org/draft/2020-12/schema" (or absent)`)
	}
	published := tree.clone()
	publishClosed(published)
	graph, err := newSchemaGraph(published, true)
	if err != nil {
		return nil, err
	}
	restoreClosed(tree)

	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(denyLoader{})
	c.AssertFormat()
	if err := c.AddResource(schemaURL, tree.toAny()); err != nil {
		return nil, err
	}
	std, err := c.Compile(schemaURL)
	if err != nil {
		return nil, err
	}
	t := tree.get("type")
	pub := jsontext.Value(published.appendJSON(nil))
	canon := jsontext.Value(append([]byte(nil), pub...))
	if err := canon.Canonicalize(); err != nil {
		return nil, err
	}
	sc := &Schema{
		published: pub,
		canonical: canon,
		object:    t != nil && t.kind == '"' && t.str == "object",
		fast:      compilePlan(tree),
		std:       std,
		graph:     graph,
	}
	sc.emptyOK = len(sc.validate(emptyObject)) == 0
	return sc, nil
}

var emptyObject = jsontext.Value(`{}`)

// IsObject reports whether the schema's top-level type is "object" (what an arguments
// schema must be).
func (s *Schema) IsObject() bool { return s.object }

// Published returns the schema's compact wire form: as written, with the keywords the
// closed-object default implies omitted (see Published). The caller must not modify
// it.
func (s *Schema) Published() jsontext.Value { return s.published }

// Canonical returns the RFC 8785 form of Published, which definition revisions hash. The
// caller must not modify it.
func (s *Schema) Canonical() jsontext.Value { return s.canonical }

// Published returns the compact wire form of a schema written in the protocol's form
// or in standard form: every additionalProperties:false (or, at a composing level,
// unevaluatedProperties:false) that the closed-object default implies is omitted; explicit
// true or a schema is kept, and member order is preserved. Invalid JSON is returned
// unchanged (Definition.Check rejects it).
func Published(raw jsontext.Value) jsontext.Value {
	tree, err := parseTree(raw)
	if err != nil {
		return raw
	}
	publishClosed(tree)
	return tree.appendJSON(nil)
}

// Standard returns the compact standard JSON Schema form of a schema written in the
// protocol's form: additionalProperties:false restored into every object schema that lacks
// the keyword (unevaluatedProperties:false at a composing level), so that a standard
// validator — an MCP client's, a form generator's — reads it as the app enforces it.
// Invalid JSON is returned unchanged.
func Standard(raw jsontext.Value) jsontext.Value {
	tree, err := parseTree(raw)
	if err != nil {
		return raw
	}
	restoreClosed(tree)
	return tree.appendJSON(nil)
}

// Validate checks instance against the schema and returns nil when it matches, else at
// most MaxViolations violations in a deterministic order. An instance that is not valid
// JSON (duplicate member names included) yields one CodeInvalidJSON violation.
//
// Schemas built from the common keywords (type, enum, const, properties, required,
// additionalProperties, items, prefixItems, the length, size and range bounds, pattern,
// format) validate straight off the JSON text without allocating; others ($ref,
// composition, unevaluated*, …) decode the instance for the general validator.
func (s *Schema) Validate(instance jsontext.Value) []Violation {
	if s.emptyOK && string(instance) == "{}" {
		return nil
	}
	return s.validate(instance)
}

func (s *Schema) validate(instance jsontext.Value) []Violation {
	if s.fast != nil {
		if out, ok := s.fast.validate(instance); ok {
			return out
		}
	}
	return s.validateStd(instance)
}
