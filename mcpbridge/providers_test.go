package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/diag"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// The rules each model provider applies to a tool's input schema, written from the
// providers' documentation and the errors their APIs answer. A client that hands an MCP
// tool list to a provider has the whole request refused when one schema breaks a rule.
//
//   - Gemini, FunctionDeclaration.parameters (ai.google.dev/api/caching#Schema, "a select
//     subset of an OpenAPI 3.0 schema object"): only the Schema object's fields; type is one
//     of STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT, given once (nullable says null);
//     enum is a list of strings; an OBJECT's properties "should be non-empty" (the API's
//     error) — a function without parameters is sent without parameters; an ARRAY has items;
//     format is one of the listed ones per type.
//   - OpenAI, function.parameters, non-strict (platform.openai.com function calling): a JSON
//     Schema whose top level is type "object" with properties ("object schema missing
//     properties"), with no oneOf/anyOf/allOf/enum/not at the top level; every array says
//     its items ("array schema missing items").
//   - Anthropic, tool input_schema (docs.anthropic.com tool use): a JSON Schema whose top
//     level is type "object", with no oneOf/allOf/anyOf at the top level.

// provider is one provider's rules: the violations of a tool input schema.
type provider struct {
	name  string
	check func(schema jsontext.Value) []string
}

var providers = []provider{{"gemini", geminiRules}, {"openai", openAIRules}, {"anthropic", anthropicRules}}

// geminiKeywords are the fields of Gemini's Schema object.
var geminiKeywords = []string{"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
	"properties", "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example",
	"anyOf", "propertyOrdering", "default", "items", "minimum", "maximum"}

// geminiFormats are the formats Gemini's Schema accepts, by type.
var geminiFormats = map[string][]string{"string": {"enum", "date-time"}, "integer": {"int32", "int64"}, "number": {"float", "double"}}

func geminiRules(raw jsontext.Value) []string {
	var out []string
	var walk func(v jsontext.Value, at string, top bool)
	walk = func(v jsontext.Value, at string, top bool) {
		var s map[string]jsontext.Value
		if err := wire.Unmarshal(v, &s); err != nil {
			out = append(out, fmt.Sprintf("%s: a schema must be an object, not %s", at, v))
			return
		}
		for k := range s {
			if !slices.Contains(geminiKeywords, k) {
				out = append(out, fmt.Sprintf("%s: unknown field %q", at, k))
			}
		}
		if alts, ok := s["anyOf"]; ok {
			var list []jsontext.Value
			if wire.Unmarshal(alts, &list) != nil || len(list) == 0 {
				out = append(out, at+": anyOf must be a non-empty list of schemas")
			}
			for i, b := range list {
				walk(b, fmt.Sprintf("%s/anyOf/%d", at, i), false)
			}
			if _, typed := s["type"]; !typed {
				return
			}
		}
		var typ string
		if t, ok := s["type"]; !ok || wire.Unmarshal(t, &typ) != nil {
			out = append(out, fmt.Sprintf("%s: type must be one string (not %s)", at, s["type"]))
			return
		}
		if !slices.Contains([]string{"string", "number", "integer", "boolean", "array", "object"}, typ) {
			out = append(out, fmt.Sprintf("%s: unknown type %q", at, typ))
		}
		if f, ok := s["format"]; ok {
			var format string
			if wire.Unmarshal(f, &format) != nil || !slices.Contains(geminiFormats[typ], format) {
				out = append(out, fmt.Sprintf("%s: format %s is not supported for %s", at, f, typ))
			}
		}
		if e, ok := s["enum"]; ok {
			var strs []string
			if typ != "string" || wire.Unmarshal(e, &strs) != nil {
				out = append(out, fmt.Sprintf("%s: enum must be strings of a string type (type %s, enum %s)", at, typ, e))
			}
		}
		if n, ok := s["nullable"]; ok && n.Kind() != 't' && n.Kind() != 'f' {
			out = append(out, at+": nullable must be a boolean")
		}
		switch typ {
		case "object":
			var props map[string]jsontext.Value
			_ = wire.Unmarshal(s["properties"], &props)
			if len(props) == 0 && !top {
				out = append(out, at+": properties: should be non-empty for OBJECT type")
			}
			var req []string
			_ = wire.Unmarshal(s["required"], &req)
			for _, r := range req {
				if _, ok := props[r]; !ok {
					out = append(out, fmt.Sprintf("%s: required %q is not a property", at, r))
				}
			}
			for name, p := range props {
				walk(p, at+"/properties/"+name, false)
			}
		case "array":
			items, ok := s["items"]
			if !ok {
				out = append(out, at+": items: missing field")
				break
			}
			walk(items, at+"/items", false)
		}
	}
	walk(raw, "parameters", true)
	return out
}

func openAIRules(raw jsontext.Value) []string {
	var out []string
	var s map[string]jsontext.Value
	if wire.Unmarshal(raw, &s) != nil {
		return []string{"parameters: not an object"}
	}
	if string(s["type"]) != `"object"` {
		out = append(out, fmt.Sprintf("parameters: schema must be a JSON Schema of 'type: \"object\"', got %s", s["type"]))
	}
	if _, ok := s["properties"]; !ok {
		out = append(out, "parameters: object schema missing properties")
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf", "enum", "not"} {
		if _, ok := s[k]; ok {
			out = append(out, "parameters: "+k+" is not permitted at the top level")
		}
	}
	walkSchemas(raw, "parameters", func(at string, s map[string]jsontext.Value) {
		if isArraySchema(s) {
			if _, ok := s["items"]; !ok {
				out = append(out, at+": array schema missing items")
			}
		}
	})
	return out
}

func anthropicRules(raw jsontext.Value) []string {
	var out []string
	var s map[string]jsontext.Value
	if wire.Unmarshal(raw, &s) != nil {
		return []string{"input_schema: not an object"}
	}
	if string(s["type"]) != `"object"` {
		out = append(out, fmt.Sprintf("input_schema.type: must be \"object\", got %s", s["type"]))
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if _, ok := s[k]; ok {
			out = append(out, "input_schema does not support "+k+" at the top level")
		}
	}
	return out
}

// isArraySchema: the schema's type is array, or lists array.
func isArraySchema(s map[string]jsontext.Value) bool {
	t := s["type"]
	return string(t) == `"array"` || t.Kind() == '[' && strings.Contains(string(t), `"array"`)
}

// walkSchemas calls f on every subschema of a JSON Schema (properties, items, $defs,
// combinators, additionalProperties), at its JSON pointer.
func walkSchemas(raw jsontext.Value, at string, f func(at string, s map[string]jsontext.Value)) {
	var s map[string]jsontext.Value
	if wire.Unmarshal(raw, &s) != nil {
		return
	}
	f(at, s)
	for _, k := range []string{"properties", "$defs", "definitions", "patternProperties"} {
		var m map[string]jsontext.Value
		if wire.Unmarshal(s[k], &m) == nil {
			for name, sub := range m {
				walkSchemas(sub, at+"/"+k+"/"+name, f)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not", "contains"} {
		if v, ok := s[k]; ok {
			walkSchemas(v, at+"/"+k, f)
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		var list []jsontext.Value
		if wire.Unmarshal(s[k], &list) == nil {
			for i, sub := range list {
				walkSchemas(sub, fmt.Sprintf("%s/%s/%d", at, k, i), f)
			}
		}
	}
}

// trickySchemas are app argument schemas that leave the portable subset in every way the
// issue's clients refuse (additionalProperties, objects without properties, enum without
// type, uniqueItems, type arrays, $ref) and a few more.
var trickySchemas = map[string]string{
	"ref": `{"type":"object","$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}},` +
		`"properties":{"from":{"$ref":"#/$defs/point"},"to":{"$ref":"#/$defs/point","description":"Where to."}},"required":["from"]}`,
	"recursive ref": `{"type":"object","definitions":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/definitions/node"}}}}},` +
		`"properties":{"tree":{"$ref":"#/definitions/node"}}}`,
	"nullable types": `{"type":"object","properties":{"limit":{"type":["integer","null"],"minimum":1},"name":{"type":["string","null"]},"either":{"type":["string","integer"]}}}`,
	"untyped enums":  `{"type":"object","properties":{"mode":{"enum":["fast","slow"]},"level":{"enum":[1,2,3]},"maybe":{"enum":["a",null]},"fixed":{"const":"v1"}}}`,
	"unique items":   `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"},"uniqueItems":true,"maxItems":5}}}`,
	"free-form":      `{"type":"object","properties":{"metadata":{"type":"object","additionalProperties":{"type":"string"}},"anything":{},"list":{"type":"array"}},"additionalProperties":false}`,
	"combinators": `{"type":"object","properties":{"target":{"oneOf":[{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]},{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}]},` +
		`"size":{"allOf":[{"type":"integer"},{"minimum":0}]},"not":{"not":{"type":"string"}}}}`,
	"formats":      `{"type":"object","properties":{"email":{"type":"string","format":"email"},"at":{"type":"string","format":"date-time"},"n":{"type":"integer","exclusiveMinimum":0,"multipleOf":2}}}`,
	"root oneOf":   `{"type":"object","oneOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"string"}},"required":["b"]}]}`,
	"no arguments": `{"type":"object"}`,
	"patterns":     `{"type":"object","additionalProperties":true,"patternProperties":{"^x-":{"type":"string"}},"properties":{"id":{"type":"string","pattern":"^[a-z]+$","minLength":1}},"required":["id","ghost"]}`,
}

// appCatalog is the tools of an app with the SDK's standard tools (UI, files, diagnostics)
// and the tricky schemas, as definitions.
func appCatalog(t *testing.T) []wire.ToolEntry {
	t.Helper()
	a := app.New(app.Options{Guard: catalog.GuardFullAccess})
	for _, err := range []error{
		ui.Register(a, emptyScreen{}, ui.Options{}),
		files.Register(a, files.Options{Roots: []files.Root{{Alias: "docs", Path: t.TempDir()}}}),
		diag.Register(a, diag.Options{}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(trickySchemas)) {
		id := "fixture." + strings.ReplaceAll(name, " ", "_")
		if err := a.Register(app.Tool{Definition: catalog.Definition{ID: id, Name: name, Description: "A fixture: " + name + ".", Category: "fixture",
			Policy: wire.PolicyRead, ArgumentsSchema: jsontext.Value(trickySchemas[name]), ResultSchema: jsontext.Value(`{"type":"object","additionalProperties":true}`)},
			Handler: func(context.Context, *app.Call) (any, error) { return jsontext.Value(`{}`), nil }}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	cat := apptest.New(t, a).Send(wire.TypeQuery, `{"detail":"definitions"}`).Catalog
	if cat == nil || len(cat.Tools) < 20 {
		t.Fatalf("catalog %+v", cat)
	}
	return cat.Tools
}

type emptyScreen struct{}

func (emptyScreen) Capture(context.Context) (*ui.Node, error) {
	return &ui.Node{ID: "root", Role: "window"}, nil
}
func (emptyScreen) Perform(context.Context, string, ui.Action) (map[string]any, error) {
	return nil, nil
}
func (emptyScreen) Render(context.Context) (image.Image, error) {
	return image.NewGray(image.Rect(0, 0, 2, 2)), nil
}

// TestEverySchemaEveryProvider checks every input schema the bridge can send, in each
// profile, against each provider's rules: the meta-tools' in both (they are portable
// always); exposed app tools' exact ones against OpenAI's and Anthropic's (Gemini's
// subset is what the portable profile is for), portable ones against all three.
func TestEverySchemaEveryProvider(t *testing.T) {
	t.Parallel()
	tools := appCatalog(t)
	for _, profile := range []SchemaProfile{SchemaExact, SchemaPortable} {
		t.Run(string(profile), func(t *testing.T) {
			t.Parallel()
			f := newFakeBackend(t)
			f.addSession("s1", "com.example.app", wire.PolicyCritical, tools)
			h := newHarness(t, f, Options{ExposeAppTools: "s1", SchemaProfile: profile, AllowCritical: true})
			h.sync()
			listed := h.listTools()
			if len(listed) != len(tools)+9 {
				t.Fatalf("%d tools listed, want %d app tools and 9 meta-tools", len(listed), len(tools))
			}
			for _, tl := range listed {
				raw, err := json.Marshal(tl.InputSchema)
				if err != nil {
					t.Fatal(err)
				}
				meta := strings.HasPrefix(tl.Name, "ansight_")
				if profile == SchemaExact && strings.HasPrefix(tl.Name, "fixture_") {
					continue // exact is the app's own doing: only portable promises these
				}
				for _, p := range providers {
					if p.name == "gemini" && profile == SchemaExact && !meta {
						continue
					}
					if v := p.check(raw); len(v) > 0 {
						t.Errorf("%s refuses %s: %s\n%s", p.name, tl.Name, strings.Join(v, "; "), raw)
					}
				}
			}
		})
	}
}

// TestProviderRulesCatch: the rules refuse what the providers refuse, so that the test
// above cannot pass by checking nothing.
func TestProviderRulesCatch(t *testing.T) {
	t.Parallel()
	for name, raw := range trickySchemas {
		if name == "no arguments" {
			continue
		}
		if v := geminiRules(jsontext.Value(raw)); len(v) == 0 {
			t.Errorf("gemini accepts the tricky schema %q", name)
		}
	}
	for _, tc := range []struct {
		provider provider
		schema   string
	}{
		{providers[1], `{"type":"object"}`},
		{providers[1], `{"type":"object","properties":{"a":{"type":"array"}}}`},
		{providers[1], `{"type":"object","properties":{},"anyOf":[{"required":["a"]}]}`},
		{providers[2], `{"properties":{}}`},
		{providers[2], `{"type":"object","oneOf":[{}]}`},
		{providers[0], `{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`},
	} {
		if v := tc.provider.check(jsontext.Value(tc.schema)); len(v) == 0 {
			t.Errorf("%s accepts %s", tc.provider.name, tc.schema)
		}
	}
}
