package mcpbridge

import (
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire"
)

// TestPortableSchema: what the conversion makes of each thing the subset cannot say.
func TestPortableSchema(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
		text           []string // text paths, joined with "/"
	}{
		{"ref inlined", trickySchemas["ref"],
			`{"properties":{"from":{"properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"type":"object"},` +
				`"to":{"description":"Where to.","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"type":"object"}},"required":["from"],"type":"object"}`, nil},
		{"recursion as text", trickySchemas["recursive ref"],
			`{"properties":{"tree":{"properties":{"children":{"items":{"description":"JSON text of a value.","type":"string"},"type":"array"},"name":{"type":"string"}},"type":"object"}},"type":"object"}`,
			[]string{"tree/children/*"}},
		{"nullable", trickySchemas["nullable types"],
			`{"properties":{"either":{"anyOf":[{"type":"string"},{"type":"integer"}]},"limit":{"minimum":1,"nullable":true,"type":"integer"},"name":{"nullable":true,"type":"string"}},"type":"object"}`, nil},
		{"typed enums", trickySchemas["untyped enums"],
			`{"properties":{"fixed":{"enum":["v1"],"type":"string"},"level":{"description":"One of: 1, 2, 3.","type":"integer"},"maybe":{"enum":["a"],"nullable":true,"type":"string"},"mode":{"enum":["fast","slow"],"type":"string"}},"type":"object"}`, nil},
		{"unique items", trickySchemas["unique items"],
			`{"properties":{"tags":{"description":"No duplicates.","items":{"type":"string"},"maxItems":5,"type":"array"}},"type":"object"}`, nil},
		{"free-form as text", trickySchemas["free-form"],
			`{"properties":{"anything":{"description":"JSON text of a value.","type":"string"},"list":{"items":{"description":"JSON text of a value.","type":"string"},"type":"array"},"metadata":{"description":"JSON text of an object.","type":"string"}},"type":"object"}`,
			[]string{"anything", "list/*", "metadata"}},
		{"combinators", trickySchemas["combinators"],
			`{"properties":{"not":{"description":"JSON text of a value.","type":"string"},"size":{"minimum":0,"type":"integer"},` +
				`"target":{"anyOf":[{"properties":{"id":{"type":"string"}},"required":["id"],"type":"object"},{"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}]}},"type":"object"}`,
			[]string{"not"}},
		{"formats", trickySchemas["formats"],
			`{"properties":{"at":{"format":"date-time","type":"string"},"email":{"description":"Format: email.","type":"string"},"n":{"description":"Greater than 0.","minimum":0,"type":"integer"}},"type":"object"}`, nil},
		{"root alternatives", trickySchemas["root oneOf"],
			`{"properties":{"a":{"type":"string"},"b":{"type":"string"}},"type":"object"}`, nil},
		{"no arguments", trickySchemas["no arguments"], `{"description":"Takes any properties.","properties":{},"type":"object"}`, nil},
		{"closed, no arguments", `{"type":"object","additionalProperties":false}`, `{"properties":{},"type":"object"}`, nil},
		{"required filtered", trickySchemas["patterns"],
			`{"properties":{"id":{"minLength":1,"pattern":"^[a-z]+$","type":"string"}},"required":["id"],"type":"object"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, text, err := portableSchema(jsontext.Value(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("portable\n%s\nwant\n%s", got, tc.want)
			}
			var paths []string
			for _, p := range text {
				paths = append(paths, strings.Join(p.steps, "/"))
			}
			slices.Sort(paths)
			if !slices.Equal(paths, tc.text) {
				t.Errorf("text paths %q, want %q", paths, tc.text)
			}
		})
	}
}

// TestPortableRoundTrip: what an agent sends by the portable schema (JSON text where it asks
// for it) is, once decoded, the value the exact schema accepts; and the portable schema
// itself (nullable read as a null type) accepts it: the subset widens, never narrows.
func TestPortableRoundTrip(t *testing.T) {
	t.Parallel()
	for name, instances := range map[string][]string{
		"ref":            {`{"from":{"x":1,"y":2}}`, `{"from":{"x":1,"y":2},"to":{"x":3,"y":4}}`},
		"recursive ref":  {`{"tree":{"name":"a","children":[{"name":"b","children":[{"name":"c"}]}]}}`},
		"nullable types": {`{"limit":null,"name":null,"either":3}`, `{"limit":5,"name":"x","either":"y"}`},
		"untyped enums":  {`{"mode":"fast","level":2,"maybe":null,"fixed":"v1"}`},
		"unique items":   {`{"tags":["a","b"]}`},
		"free-form":      {`{"metadata":{"k":"v"},"anything":[1,{"a":null}],"list":[1,"two",{"three":3}]}`, `{}`},
		"combinators":    {`{"target":{"id":"x"},"size":3,"not":5}`},
		"formats":        {`{"email":"a@b.c","at":"2026-01-02T03:04:05Z","n":4}`},
		"root oneOf":     {`{"a":"x"}`, `{"b":"y"}`},
		"patterns":       {`{"id":"abc","x-y":"z","ghost":1}`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw := jsontext.Value(trickySchemas[name])
			exact, err := schema.Compile(raw)
			if err != nil {
				t.Fatal(err)
			}
			portable, text, err := portableSchema(raw)
			if err != nil {
				t.Fatal(err)
			}
			widened := standardSchema(t, nullableAsType(t, portable)) // as providers read it: open objects
			for _, in := range instances {
				if v := exact.Validate(jsontext.Value(in)); len(v) > 0 {
					t.Fatalf("fixture %s is not valid: %v", in, v)
				}
				sent := textify(t, jsontext.Value(in), text)
				inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(sent)))
				if err != nil {
					t.Fatal(err)
				}
				if err := widened.Validate(inst); err != nil {
					t.Errorf("the portable schema refuses %s: %v", sent, err)
				}
				back, err := decodeText(sent, text)
				if err != nil {
					t.Fatalf("decode %s: %v", sent, err)
				}
				if !equalJSON(t, back, jsontext.Value(in)) {
					t.Errorf("sent %s, decoded %s, want %s", sent, back, in)
				}
				// The value itself, not as text, is taken too.
				if back, err := decodeText(jsontext.Value(in), text); err != nil || !equalJSON(t, back, jsontext.Value(in)) {
					t.Errorf("decoding the value itself: %s, %v", back, err)
				}
			}
		})
	}
}

// TestDecodeTextErrors: JSON text that does not parse, or repeats a name, is refused with
// where it was.
func TestDecodeTextErrors(t *testing.T) {
	t.Parallel()
	paths := []textPath{{steps: []string{"calls", itemsStep, "arguments"}}}
	for in, want := range map[string]string{
		`{"calls":[{"arguments":"{}"},{"arguments":"{nope"}]}`:        `/calls/1/arguments is JSON text, and "{nope" does not parse as JSON`,
		`{"calls":[{"arguments":"{\"a\":1,\"a\":2}"}]}`:               `/calls/0/arguments is JSON text: `,
		`{"calls":[{"arguments":"` + strings.Repeat("x", 60) + `"}]}`: `"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…"`,
	} {
		if _, err := decodeText(jsontext.Value(in), paths); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

// textify writes the values at paths as JSON text, as an agent following the portable
// schema does.
func textify(t *testing.T, v jsontext.Value, paths []textPath) jsontext.Value {
	t.Helper()
	var walk func(v jsontext.Value, p []string) jsontext.Value
	walk = func(v jsontext.Value, p []string) jsontext.Value {
		if len(p) == 0 {
			return mustMarshal(string(v))
		}
		switch {
		case p[0] == itemsStep && v.Kind() == '[':
			var list []jsontext.Value
			if err := wire.Unmarshal(v, &list); err != nil {
				t.Fatal(err)
			}
			for i := range list {
				list[i] = walk(list[i], p[1:])
			}
			return mustMarshal(list)
		case v.Kind() == '{':
			var m map[string]jsontext.Value
			if err := wire.Unmarshal(v, &m); err != nil {
				t.Fatal(err)
			}
			if member, ok := m[p[0]]; ok {
				m[p[0]] = walk(member, p[1:])
			}
			return mustMarshal(m)
		}
		return v
	}
	for _, p := range paths {
		v = walk(v, p.steps)
	}
	return v
}

// standardSchema compiles raw with a standard JSON Schema validator.
func standardSchema(t *testing.T, raw jsontext.Value) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("portable.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("portable.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// nullableAsType rewrites OpenAPI's nullable:true as a null type, for a JSON Schema
// validator.
func nullableAsType(t *testing.T, raw jsontext.Value) jsontext.Value {
	t.Helper()
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, sub := range x {
				x[k] = walk(sub)
			}
			if x["nullable"] == true { // null is allowed too, enum or not
				delete(x, "nullable")
				if typ, ok := x["type"].(string); ok {
					x["type"] = []any{typ, "null"}
				}
				if e, ok := x["enum"].([]any); ok {
					x["enum"] = append(e, nil)
				}
			}
			return x
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		}
		return v
	}
	var v any
	if err := wire.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return mustMarshal(walk(v))
}

func equalJSON(t *testing.T, a, b jsontext.Value) bool {
	t.Helper()
	a, b = slices.Clone(a), slices.Clone(b)
	if err := a.Canonicalize(); err != nil {
		t.Fatal(err)
	}
	if err := b.Canonicalize(); err != nil {
		t.Fatal(err)
	}
	return string(a) == string(b)
}

// FuzzPortableSchema: any schema an app publishes converts without a panic, within bounds,
// into a schema every provider accepts, and the JSON text it asks for decodes back.
func FuzzPortableSchema(f *testing.F) {
	for _, s := range trickySchemas {
		f.Add(s, `{}`)
	}
	f.Add(`{"type":"object","$defs":{"a":{"type":"object","properties":{"x":{"$ref":"#/$defs/b"},"y":{"$ref":"#/$defs/b"}}},`+
		`"b":{"type":"object","properties":{"x":{"$ref":"#/$defs/c"},"y":{"$ref":"#/$defs/c"}}},"c":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/a"}}}`, `{"a":{"x":{"x":"1"}}}`)
	f.Add(`{"type":"object","properties":{"a":{"type":"array","items":{}}}}`, `{"a":["[1]","x",3]}`)
	f.Fuzz(func(t *testing.T, raw, args string) {
		if _, err := schema.Compile(jsontext.Value(raw)); err != nil {
			return // an app cannot publish it
		}
		in, err := clientSchema(jsontext.Value(raw), true)
		if err != nil {
			return
		}
		out, text, err := portableSchema(in)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		for _, p := range providers {
			if v := p.check(out); len(v) > 0 {
				t.Fatalf("%s refuses the portable form of %s: %v\n%s", p.name, raw, v, out)
			}
		}
		if jsontext.Value(args).IsValid() {
			_, _ = decodeText(jsontext.Value(args), text) // never panics
		}
	})
}
