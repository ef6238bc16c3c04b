package player

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/examples/notes"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

func TestFormOf(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 15) + `{"type":"string"}` + strings.Repeat(`}}`, 15)
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"no schema", ``, `{"kind":"object"}`},
		{"no arguments", `{"type":"object"}`, `{"kind":"object"}`},
		{"scalars in schema order",
			`{"type":"object","properties":{"z":{"type":"string","minLength":1,"maxLength":200,"description":"Zed."},` +
				`"n":{"type":"integer","minimum":1,"maximum":500,"default":50},"x":{"type":"number","exclusiveMinimum":0,"multipleOf":0.5},` +
				`"b":{"type":"boolean","title":"Bee"},"e":{"enum":["png","jpeg"],"default":"png"}},"required":["z","b"]}`,
			`{"kind":"object","properties":[` +
				`{"name":"z","required":true,"field":{"kind":"string","description":"Zed.","minLength":1,"maxLength":200}},` +
				`{"name":"n","field":{"kind":"integer","default":50,"minimum":1,"maximum":500}},` +
				`{"name":"x","field":{"kind":"number","exclusiveMinimum":0,"multipleOf":0.5}},` +
				`{"name":"b","required":true,"field":{"kind":"boolean","title":"Bee"}},` +
				`{"name":"e","field":{"kind":"enum","default":"png","enum":["png","jpeg"]}}]}`},
		{"multiline text", `{"type":"object","properties":{"body":{"type":"string","maxLength":10000}}}`,
			`{"kind":"object","properties":[{"name":"body","field":{"kind":"string","maxLength":10000,"multiline":true}}]}`},
		{"nested object and array",
			`{"type":"object","properties":{"o":{"type":"object","properties":{"k":{"type":"string"}},"required":["k"]},` +
				`"list":{"type":"array","items":{"type":"object","properties":{"v":{"type":"integer"}}},"minItems":1,"maxItems":3}}}`,
			`{"kind":"object","properties":[` +
				`{"name":"o","field":{"kind":"object","properties":[{"name":"k","required":true,"field":{"kind":"string"}}]}},` +
				`{"name":"list","field":{"kind":"array","items":{"kind":"object","properties":[{"name":"v","field":{"kind":"integer"}}]},"minItems":1,"maxItems":3}}]}`},
		{"untyped object and array", `{"properties":{"a":{"items":{"type":"string"}}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"array","items":{"kind":"string"}}}]}`},
		{"local reference with a description beside it",
			`{"type":"object","properties":{"reference":{"$ref":"#/$defs/ref","description":"Which node."}},"required":["reference"],` +
				`"$defs":{"ref":{"type":"object","description":"A node reference.","properties":{"nodeId":{"type":"string"},"revision":{"type":"integer"}},"required":["nodeId"]}}}`,
			`{"kind":"object","properties":[{"name":"reference","required":true,"field":{"kind":"object","description":"Which node.",` +
				`"properties":[{"name":"nodeId","required":true,"field":{"kind":"string"}},{"name":"revision","field":{"kind":"integer"}}]}}]}`},
		{"definitions and escaped pointers", `{"properties":{"a":{"$ref":"#/definitions/a~1b"}},"definitions":{"a/b":{"type":"boolean"}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"boolean"}}]}`},
		{"recursion stops", `{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"id":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`,
			`{"kind":"object","properties":[{"name":"id","field":{"kind":"string"}},` +
				`{"name":"children","field":{"kind":"array","items":{"kind":"json","reason":"the schema is recursive (#/$defs/node)"}}}]}`},
		{"root reference", `{"type":"object","properties":{"self":{"$ref":"#"}}}`,
			`{"kind":"object","properties":[{"name":"self","field":{"kind":"object","properties":[{"name":"self","field":{"kind":"json","reason":"the schema is recursive (#)"}}]}}]}`},
		{"external reference", `{"properties":{"a":{"$ref":"https://example.com/s.json"}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"json","reason":"the schema refers to another document (https://example.com/s.json)"}}]}`},
		{"anchor reference, resolved as the validator does", `{"properties":{"a":{"$ref":"#name"}},"$defs":{"n":{"$anchor":"name","type":"string","maxLength":8}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"string","maxLength":8}}]}`},
		{"dangling reference", `{"properties":{"a":{"$ref":"#/$defs/none"}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"json","reason":"the schema's reference #/$defs/none does not resolve"}}]}`},
		{"nullable type", `{"properties":{"a":{"type":["string","null"]}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"string","nullable":true}}]}`},
		{"several types", `{"properties":{"a":{"type":["string","integer"]}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"json","reason":"several types are allowed: string, integer"}}]}`},
		{"constants as alternatives", `{"properties":{"a":{"anyOf":[{"const":"x"},{"const":2},{"enum":["y",null]}],"description":"Pick."}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"enum","description":"Pick.","enum":["x",2,"y"],"nullable":true}}]}`},
		{"one type or null", `{"properties":{"a":{"oneOf":[{"type":"integer","minimum":0},{"type":"null"}],"default":3}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"integer","default":3,"nullable":true,"minimum":0}}]}`},
		{"real alternatives", `{"properties":{"a":{"anyOf":[{"type":"string"},{"type":"object","properties":{"b":{"type":"string"}}}]}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"json","reason":"the schema offers alternatives (anyOf)"}}]}`},
		{"not", `{"properties":{"a":{"not":{"type":"string"}}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"json","reason":"the schema uses not"}}]}`},
		{"allOf merges objects",
			`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"boolean"}},"required":["b"]}]}`,
			`{"kind":"object","properties":[{"name":"a","required":true,"field":{"kind":"string"}},{"name":"b","required":true,"field":{"kind":"boolean"}}]}`},
		{"enum with null and const", `{"properties":{"a":{"enum":[null,"on","off"]},"c":{"const":"fixed"}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"enum","enum":["on","off"],"nullable":true}},{"name":"c","field":{"kind":"enum","enum":["fixed"]}}]}`},
		{"free-form object", `{"properties":{"meta":{"type":"object","additionalProperties":true,"description":"Anything."}}}`,
			`{"kind":"object","properties":[{"name":"meta","field":{"kind":"json","description":"Anything.","reason":"a free-form object"}}]}`},
		{"open object with properties", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"string"}}],"open":true}`},
		{"closed explicitly", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"string"}}]}`},
		{"tuple", `{"properties":{"p":{"type":"array","prefixItems":[{"type":"number"},{"type":"number"}]}}}`,
			`{"kind":"object","properties":[{"name":"p","field":{"kind":"json","reason":"a tuple (prefixItems)"}}]}`},
		{"array of anything", `{"properties":{"p":{"type":"array"}}}`,
			`{"kind":"object","properties":[{"name":"p","field":{"kind":"json","reason":"an array of any values"}}]}`},
		{"boolean schemas", `{"properties":{"any":true,"none":false,"empty":{}}}`,
			`{"kind":"object","properties":[{"name":"any","field":{"kind":"json","reason":"any JSON value"}},` +
				`{"name":"none","field":{"kind":"json","reason":"no value is allowed"}},{"name":"empty","field":{"kind":"json","reason":"any JSON value"}}]}`},
		{"odd names", `{"properties":{"a b":{"type":"string"},"ü":{"type":"integer"}}}`,
			`{"kind":"object","properties":[{"name":"a b","field":{"kind":"string"}},{"name":"ü","field":{"kind":"integer"}}]}`},
		{"unknown type", `{"properties":{"a":{"type":"date"}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"json","reason":"unknown type \"date\""}}]}`},
		{"bad numbers are ignored", `{"properties":{"a":{"type":"string","minLength":-1,"maxLength":1.5},"n":{"type":"number","minimum":"x"}}}`,
			`{"kind":"object","properties":[{"name":"a","field":{"kind":"string"}},{"name":"n","field":{"kind":"number"}}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := FormOf(jsontext.Value(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(f, json.Deterministic(true))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("form\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("too deep", func(t *testing.T) {
		f, err := FormOf(jsontext.Value(deep))
		if err != nil {
			t.Fatal(err)
		}
		d := 0
		for f.Kind == KindObject {
			f = f.Properties[0].Field
			d++
		}
		if f.Kind != KindJSON || d != maxFormDepth+1 || !strings.Contains(f.Reason, "deeply") {
			t.Errorf("at depth %d: %+v", d, f)
		}
	})
}

func TestFormOfMalformed(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`{`, `[1,2]`, `"x"`, `{"a":1,"a":2}`} {
		if _, err := FormOf(jsontext.Value(s)); err == nil {
			t.Errorf("FormOf(%s) accepted malformed input", s)
		}
	}
}

// TestFormOfDemoTools: every tool of the demo app gets a form, and the UI tools' arguments
// are real inputs, not raw JSON.
func TestFormOfDemoTools(t *testing.T) {
	t.Parallel()
	a := app.New(app.Options{Guard: catalog.GuardFullAccess})
	if err := notes.New(notes.Options{}).Register(a); err != nil {
		t.Fatal(err)
	}
	q := `{"type":"tool.query","id":"q1","sessionId":"s","sentAt":"2026-01-01T00:00:00Z","capability":"tool.exec","payload":{"detail":"full"}}`
	var w capture
	ctx := t.Context()
	if ok, err := a.Handle(ctx, []byte(q), &w); !ok || err != nil {
		t.Fatalf("query: %v %v", ok, err)
	}
	env, err := wire.DecodeEnvelope(w.msg)
	if err != nil {
		t.Fatal(err)
	}
	// The full catalog is over 32 KiB: the app sends it gzip-wrapped.
	payload, err := wire.DecodePayload(env.Payload, wire.DefaultMaxInflatedBytes)
	if err != nil {
		t.Fatal(err)
	}
	var cat wire.Catalog
	if err := wire.Unmarshal(payload, &cat); err != nil {
		t.Fatal(err)
	}
	if len(cat.Tools) < 10 {
		t.Fatalf("%d tools", len(cat.Tools))
	}
	for _, e := range cat.Tools {
		f, err := FormOf(e.ArgumentsSchema)
		if err != nil || f.Kind != KindObject {
			t.Errorf("%s: %v %+v", e.ID, err, f)
			continue
		}
		if e.ID == "ui.perform_action" {
			// Optional: the official SDKs also take a bare snapshotId and nodeId.
			ref := f.Properties[0]
			if ref.Name != "reference" || ref.Required || ref.Field.Kind != KindObject || len(ref.Field.Properties) < 4 {
				t.Errorf("ui.perform_action reference: %+v", ref)
			}
		}
		for _, p := range f.Properties {
			// An overlay's metadata is a free-form object of scalars by design.
			freeForm := p.Name == "metadata" && (e.ID == "ui.show_overlay" || e.ID == "ui.update_overlay")
			if p.Field.Kind == KindJSON && e.ID != "ui.perform_action" && !freeForm {
				t.Errorf("%s.%s is raw JSON: %s", e.ID, p.Name, p.Field.Reason)
			}
		}
	}
}

type capture struct{ msg []byte }

func (c *capture) Write(_ context.Context, _ transport.MessageType, data []byte) error {
	if c.msg == nil {
		c.msg = append([]byte(nil), data...)
	}
	return nil
}

// FuzzFormOf: a schema comes from an app, so any input must give a form or an error,
// never a panic, and the form stays within its bounds.
func FuzzFormOf(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `true`, `{"type":"object","properties":{"a":{"type":"string"}}}`,
		`{"$ref":"#/$defs/n","$defs":{"n":{"properties":{"c":{"items":{"$ref":"#/$defs/n"}}}}}}`,
		`{"allOf":[{"$ref":"#"},{"properties":{"b":{"enum":[1,null]}}}]}`,
		`{"properties":{"a":{"anyOf":[{"const":1},{"type":"null"}]},"b":{"oneOf":[{"$ref":"#/properties/a"}]}}}`,
		`{"$defs":{"a":{"properties":{"x":{"$ref":"#/$defs/b"},"y":{"$ref":"#/$defs/b"}}},"b":{"properties":{"x":{"$ref":"#/$defs/c"},"y":{"$ref":"#/$defs/c"}}},"c":{"type":"string"}},"$ref":"#/$defs/a"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		form, err := FormOf(schema)
		if err != nil {
			return
		}
		n := 0
		var walk func(*Field, int)
		walk = func(fl *Field, depth int) {
			n++
			if depth > maxFormDepth+2 {
				t.Fatalf("form nested %d deep", depth)
			}
			for _, p := range fl.Properties {
				walk(p.Field, depth+1)
			}
			if fl.Items != nil {
				walk(fl.Items, depth+1)
			}
		}
		walk(form, 0)
		if n > maxFormFields+1 {
			t.Fatalf("%d fields", n)
		}
		if _, err := json.Marshal(form); err != nil {
			t.Fatal(err)
		}
	})
}
