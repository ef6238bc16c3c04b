package schema

import (
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzValidate feeds arbitrary instances (network input: a call's arguments) to schemas
// that take the fast path — benchSchema, and uniqueSchema for uniqueItems — and checks
// that both validators agree on them (for uniqueItems, on its violations too).
func FuzzValidate(f *testing.F) {
	for _, seed := range []string{
		string(benchInstance), `{}`, `null`, `{"reference":{"nodeId":""},"action":"x","timeoutMs":-1,"extra":[]}`,
		`{"reference":{"nodeId":"\u00e9"},"action":"tap","timeoutMs":1e3}`, `{"a":1,"a":2}`, `[1,2`, `"\ud800"`,
		`{"include":["screenshot","scr\u0065enshot"]}`, `{"any":[1,1.0,"1",null,true]}`, `{"any":[-0,0e5,[0],{}]}`,
	} {
		f.Add([]byte(seed))
	}
	s, err := Compile(benchSchema)
	if err != nil {
		f.Fatal(err)
	}
	u, err := Compile(uniqueSchema)
	if err != nil || u.fast == nil {
		f.Fatal("uniqueSchema: no fast path", err)
	}
	f.Fuzz(func(t *testing.T, instance []byte) {
		fast := fastOr(s)(instance)
		std := s.validateStd(instance)
		if (fast == nil) != (std == nil) {
			t.Fatalf("instance %q: fast %v, std %v", instance, fast, std)
		}
		if len(fast) > MaxViolations || len(std) > MaxViolations {
			t.Fatal("too many violations")
		}
		// An instance the fast path finds valid is valid JSON.
		if fast == nil && !jsontext.Value(instance).IsValid() {
			t.Fatalf("invalid JSON %q accepted", instance)
		}
		if got, ok := u.fast.validate(instance); ok {
			if std := u.validateStd(instance); (got == nil) != (std == nil) || uniqueOf(got) != uniqueOf(std) {
				t.Fatalf("uniqueItems, instance %q: fast %v, std %v", instance, got, std)
			}
		}
	})
}

// uniqueOf is the unique_items violations of vs, as text.
func uniqueOf(vs []Violation) string {
	var out []string
	for _, v := range vs {
		if v.Code == CodeUniqueItems {
			out = append(out, v.Path+" "+v.Message)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// uniqueSchema has uniqueItems arrays, typed and not.
var uniqueSchema = jsontext.Value(`{"type":"object","properties":{"include":{"type":"array","items":{"enum":["visualTree","screenshot"]},"uniqueItems":true,"maxItems":2},"any":{"uniqueItems":true,"items":{"uniqueItems":true}}}}`)

// FuzzCompile compiles arbitrary schemas (a host compiles the schemas an app
// publishes) and validates a few instances with whatever compiles.
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		string(benchSchema), `true`, `{"$ref":"#/$defs/a","$defs":{"a":{"type":"object"}}}`,
		`{"allOf":[{"properties":{"a":{}}}]}`, `{"$ref":"file:///etc/passwd"}`, `{"type":"string","pattern":"^(a+)+$"}`,
		`{"prefixItems":[{"const":1}],"items":false}`, `{"enum":[1,"a",null,{"x":1}]}`,
		alternatives(12), recursiveAlternatives, `{"$ref":"#a","$defs":{"x":{"$anchor":"a","$ref":"#"}}}`,
	} {
		f.Add([]byte(seed))
	}
	instances := []jsontext.Value{jsontext.Value(`{}`), jsontext.Value(`{"a":[1,"x",null]}`), jsontext.Value(`"aaaa"`), jsontext.Value(`[1]`)}
	f.Fuzz(func(t *testing.T, schema []byte) {
		s, err := compileSchema(schema)
		if err != nil {
			return
		}
		if err := CheckBounds(schema); err != nil {
			t.Fatalf("schema %s compiled beyond the bounds: %v", schema, err)
		}
		for _, inst := range instances {
			got := s.Validate(inst)
			if s.fast != nil {
				if std := s.validateStd(inst); (got == nil) != (std == nil) {
					t.Fatalf("schema %s instance %s: fast %v, std %v", schema, inst, got, std)
				}
			}
		}
		Published(schema)
	})
}
