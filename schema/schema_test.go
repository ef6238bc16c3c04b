package schema

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestClosedDefault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, restored, published string
	}{
		{"object without keyword is closed",
			`{"type":"object","properties":{"a":{"type":"string"}}}`,
			`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`,
			`{"type":"object","properties":{"a":{"type":"string"}}}`},
		{"explicit false is the default and is stripped",
			`{"type":"object","additionalProperties":false}`,
			`{"type":"object","additionalProperties":false}`,
			`{"type":"object"}`},
		{"explicit true and schemas are kept",
			`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"object"}}},"additionalProperties":true}`,
			`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"object","additionalProperties":false}}},"additionalProperties":true}`,
			`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"object"}}},"additionalProperties":true}`},
		{"properties alone make an object schema",
			`{"properties":{}}`, `{"properties":{},"additionalProperties":false}`, `{"properties":{}}`},
		{"nullable object",
			`{"type":["object","null"]}`, `{"type":["object","null"],"additionalProperties":false}`, `{"type":["object","null"]}`},
		{"non-object schemas untouched",
			`{"type":"string","additionalProperties":false}`, `{"type":"string","additionalProperties":false}`, `{"type":"string","additionalProperties":false}`},
		{"items, prefixItems and $defs",
			`{"type":"array","items":{"type":"object"},"prefixItems":[{"type":"object"}],"$defs":{"x":{"type":"object"}}}`,
			`{"type":"array","items":{"type":"object","additionalProperties":false},"prefixItems":[{"type":"object","additionalProperties":false}],"$defs":{"x":{"type":"object","additionalProperties":false}}}`,
			`{"type":"array","items":{"type":"object"},"prefixItems":[{"type":"object"}],"$defs":{"x":{"type":"object"}}}`},
		{"composition closes once with unevaluatedProperties",
			`{"allOf":[{"type":"object","properties":{"a":{"type":"object"}}},{"properties":{"b":{}}}]}`,
			`{"allOf":[{"type":"object","properties":{"a":{"type":"object","additionalProperties":false}}},{"properties":{"b":{}}}],"unevaluatedProperties":false}`,
			`{"allOf":[{"type":"object","properties":{"a":{"type":"object"}}},{"properties":{"b":{}}}]}`},
		{"composition of scalars is not closed",
			`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `{"anyOf":[{"type":"string"},{"type":"integer"}]}`},
		{"explicit additionalProperties:false at a composing level is kept",
			`{"type":"object","oneOf":[{"required":["a"]}],"additionalProperties":false}`,
			`{"type":"object","oneOf":[{"required":["a"]}],"additionalProperties":false}`,
			`{"type":"object","oneOf":[{"required":["a"]}],"additionalProperties":false}`},
		{"if/then composes",
			`{"type":"object","properties":{"a":{}},"if":{"required":["a"]},"then":{"properties":{"b":{}}}}`,
			`{"type":"object","properties":{"a":{}},"if":{"required":["a"]},"then":{"properties":{"b":{}}},"unevaluatedProperties":false}`,
			`{"type":"object","properties":{"a":{}},"if":{"required":["a"]},"then":{"properties":{"b":{}}}}`},
		{"not is left alone",
			`{"not":{"type":"object"}}`, `{"not":{"type":"object"}}`, `{"not":{"type":"object"}}`},
		{"boolean schema", `true`, `true`, `true`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := parseTree([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			restoreClosed(n)
			if got := string(n.appendJSON(nil)); got != tc.restored {
				t.Errorf("restored\n got %s\nwant %s", got, tc.restored)
			}
			if got := string(Published(jsontext.Value(tc.in))); got != tc.published {
				t.Errorf("published\n got %s\nwant %s", got, tc.published)
			}
			// Publishing is idempotent and loses nothing the default does not restore.
			p := Published(jsontext.Value(tc.published))
			if string(p) != tc.published {
				t.Errorf("publish not idempotent: %s", p)
			}
			if _, err := Compile(jsontext.Value(tc.in)); err != nil {
				t.Errorf("compile: %v", err)
			}
		})
	}
	if got := string(Published(jsontext.Value(`{"a":`))); got != `{"a":` {
		t.Errorf("invalid JSON changed: %s", got)
	}
}

func TestCompileSchemaErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, schema, want string }{
		{"invalid JSON", `{"type":`, "not valid JSON"},
		{"duplicate keys", `{"type":"object","type":"string"}`, "duplicate"},
		{"not an object", `"string"`, "object or a boolean"},
		{"trailing data", `{} {}`, "not valid JSON"},
		{"bad keyword value", `{"type":"object","minProperties":-1}`, "minProperties"},
		{"unknown type", `{"type":"thing"}`, "type"},
		{"bad pattern", `{"type":"string","pattern":"("}`, "pattern"},
		{"older draft", `{"$schema":"http://json-schema.org/draft-07/schema#"}`, "2020-12"},
		{"remote reference", `{"$ref":"https://example.com/s.json"}`, "not allowed"},
		{"file reference", `{"$ref":"file:///etc/passwd"}`, "not allowed"},
		{"relative reference", `{"$ref":"other.json"}`, "not allowed"},
		{"missing local reference", `{"$ref":"#/$defs/missing"}`, "missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(jsontext.Value(tc.schema))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// engines runs a check on both validators of a schema that the fast one supports.
func engines(t *testing.T, schema string) map[string]func(jsontext.Value) []Violation {
	t.Helper()
	s, err := Compile(jsontext.Value(schema))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]func(jsontext.Value) []Violation{"std": s.validateStd}
	if s.fast != nil {
		m["fast"] = fastOr(s)
	}
	return m
}

// fastOr is s's fast validator, falling back to the general one for the instances it
// leaves to it, as Validate does.
func fastOr(s *Schema) func(jsontext.Value) []Violation {
	return func(instance jsontext.Value) []Violation {
		if out, ok := s.fast.validate(instance); ok {
			return out
		}
		return s.validateStd(instance)
	}
}

func brief(vs []Violation) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Path+" "+v.Code)
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

func full(vs []Violation) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Path+" "+v.Code+" "+v.Message)
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

func TestValidate(t *testing.T) {
	t.Parallel()
	const action = `{"type":"object","properties":{
		"reference":{"type":"object","properties":{"nodeId":{"type":"string","minLength":1},"snapshotId":{"type":["string","null"]}},"required":["nodeId"]},
		"action":{"type":"string","enum":["tap","focus"]},
		"at":{"type":"string","format":"date-time"},
		"count":{"type":"integer","minimum":1,"maximum":10},
		"ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
		"tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]+$"},"maxItems":2},
		"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"minItems":2},
		"free":{"type":"object","additionalProperties":true},
		"odd name":{"const":"x"},
		"3":{"type":"boolean"}
	},"required":["action"]}`
	tests := []struct{ name, instance, want string }{
		{"valid", `{"action":"tap","reference":{"nodeId":"n1","snapshotId":null},"at":"2026-03-20T10:00:00Z","count":10,"ratio":0.5,"tags":["ab"],"pair":["a",2,true],"free":{"x":1},"odd name":"x","3":true}`, ""},
		{"integer written as 1.0", `{"action":"tap","count":1.0}`, ""},
		{"escaped names", `{"\u0061ction":"tap"}`, ""},
		{"required missing", `{}`, "$.action required_property_missing"},
		{"nested required", `{"action":"tap","reference":{}}`, "$.reference.nodeId required_property_missing"},
		{"additional property", `{"action":"tap","extra":1,"reference":{"nodeId":"a","more":true}}`,
			"$.extra additional_property_not_allowed; $.reference.more additional_property_not_allowed"},
		{"type mismatch", `{"action":"tap","count":"3"}`, "$.count type_mismatch"},
		{"fraction is not an integer", `{"action":"tap","count":1.5}`, "$.count type_mismatch"},
		{"null not allowed", `{"action":null}`, "$.action null_not_allowed"},
		{"root type", `[]`, "$ type_mismatch"},
		{"root null", `null`, "$ null_not_allowed"},
		{"enum", `{"action":"swipe"}`, "$.action enum_value_invalid"},
		{"const", `{"action":"tap","odd name":"y"}`, `$["odd name"] const_value_invalid`},
		{"format", `{"action":"tap","at":"yesterday"}`, "$.at format_invalid"},
		{"min length", `{"action":"tap","reference":{"nodeId":""}}`, "$.reference.nodeId min_length"},
		{"escaped names in the path", `{"action":"tap","r\u0065ference":{"node\u0049d":""}}`, "$.reference.nodeId min_length"},
		{"minimum and maximum", `{"action":"tap","count":0}`, "$.count minimum"},
		{"maximum", `{"action":"tap","count":11}`, "$.count maximum"},
		{"exclusive bounds", `{"action":"tap","ratio":1}`, "$.ratio exclusive_maximum"},
		{"exclusive minimum exact", `{"action":"tap","ratio":0.0}`, "$.ratio exclusive_minimum"},
		{"array item", `{"action":"tap","tags":["ok","NO"]}`, "$.tags[1] pattern_mismatch"},
		{"max items", `{"action":"tap","tags":["a","b","c"]}`, "$.tags max_items"},
		{"prefix items", `{"action":"tap","pair":[1,"x"]}`, "$.pair[0] type_mismatch; $.pair[1] type_mismatch"},
		{"min items", `{"action":"tap","pair":["a"]}`, "$.pair min_items"},
		{"digit member name", `{"action":"tap","3":1}`, `$["3"] type_mismatch`},
		{"several at once", `{"action":"x","count":"y","zzz":0}`, "$.action enum_value_invalid; $.count type_mismatch; $.zzz additional_property_not_allowed"},
		{"invalid JSON", `{"action":`, "$ invalid_json"},
		{"duplicate names", `{"action":"tap","action":"tap"}`, "$ invalid_json"},
		{"trailing data", `{"action":"tap"} 1`, "$ invalid_json"},
		{"empty", ``, "$ invalid_json"},
	}
	for name, validate := range engines(t, action) {
		for _, tc := range tests {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				vs := validate(jsontext.Value(tc.instance))
				if got := brief(vs); got != tc.want {
					t.Errorf("violations %q, want %q (%v)", got, tc.want, vs)
				}
				for _, v := range vs {
					if v.Message == "" {
						t.Errorf("violation without message: %+v", v)
					}
				}
			})
		}
	}
	eng := engines(t, action)
	if len(eng) != 2 {
		t.Fatal("the common keywords do not take the fast path")
	}
	// Both validators word their violations the same way.
	for _, tc := range tests {
		if tc.want == "" || strings.Contains(tc.want, "invalid_json") {
			continue
		}
		t.Run("same messages/"+tc.name, func(t *testing.T) {
			fast, std := full(eng["fast"](jsontext.Value(tc.instance))), full(eng["std"](jsontext.Value(tc.instance)))
			if fast != std {
				t.Errorf("messages differ\nfast %s\nstd  %s", fast, std)
			}
		})
	}
}

func TestValidateComposed(t *testing.T) {
	t.Parallel()
	s, err := Compile(jsontext.Value(`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"$ref":"#/$defs/pos"}}}],"$defs":{"pos":{"type":"integer","minimum":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.fast != nil {
		t.Fatal("composed schema took the fast path")
	}
	for _, tc := range []struct{ name, instance, want string }{
		{"valid", `{"a":"x","b":2}`, ""},
		{"referenced minimum", `{"a":"x","b":0}`, "$.b minimum"},
		{"closed across allOf", `{"a":"x","c":1}`, "$.c additional_property_not_allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := brief(s.Validate(jsontext.Value(tc.instance))); got != tc.want {
				t.Errorf("%s: %q, want %q", tc.instance, got, tc.want)
			}
		})
	}
	any, err := Compile(jsontext.Value(`{"anyOf":[{"type":"string"},{"type":"integer"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := brief(any.Validate(jsontext.Value(`true`))); got != "$ schema_mismatch" {
		t.Errorf("anyOf: %q", got)
	}
}

func TestValidateBoundsViolations(t *testing.T) {
	t.Parallel()
	s, err := Compile(jsontext.Value(`{"type":"array","items":{"type":"string"}}`))
	if err != nil {
		t.Fatal(err)
	}
	inst := "[" + strings.Repeat("1,", 100) + "1]"
	for name, v := range map[string]func(jsontext.Value) []Violation{"fast": fastOr(s), "std": s.validateStd} {
		t.Run(name, func(t *testing.T) {
			if n := len(v(jsontext.Value(inst))); n != MaxViolations {
				t.Errorf("%d violations, want %d", n, MaxViolations)
			}
		})
	}
}

func TestCompileSchemaCached(t *testing.T) {
	t.Parallel()
	raw := jsontext.Value(`{"type":"object","title":"cached"}`)
	a, err := Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Compile(slices.Clone(raw))
	if a != b {
		t.Fatal("same schema compiled twice")
	}
}

func TestDecimal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"1", "1.0", 0}, {"0", "-0.0", 0}, {"1e2", "100", 0}, {"0.1", "1e-1", 0},
		{"0.1", "0.10000000000000001", -1}, {"-1", "1", -1}, {"-2", "-1", -1}, {"10", "9.99", 1},
		{"123456789012345678901", "123456789012345678900", 1}, {"1E400", "1e399", 1}, {"0", "1e-400", -1},
	}
	for _, tc := range tests {
		t.Run("compare/"+tc.a+"~"+tc.b, func(t *testing.T) {
			if got := compareDecimal([]byte(tc.a), []byte(tc.b)); got != tc.want {
				t.Errorf("compare(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
			if got := compareDecimal([]byte(tc.b), []byte(tc.a)); got != -tc.want {
				t.Errorf("compare(%s, %s) = %d, want %d", tc.b, tc.a, got, -tc.want)
			}
		})
	}
	for lit, want := range map[string]bool{"1": true, "1.0": true, "1.5": false, "1e2": true, "1.25e1": false, "1.25e2": true, "0": true, "-0.0": true, "1e-1": false} {
		t.Run("isInteger/"+lit, func(t *testing.T) {
			d := parseDecimal([]byte(lit))
			if got := d.isInteger(); got != want {
				t.Errorf("isInteger(%s) = %v", lit, got)
			}
		})
	}
}

func ExampleSchema_Validate() {
	s, _ := Compile(jsontext.Value(`{"type":"object","properties":{"nodeId":{"type":"string"}},"required":["nodeId"]}`))
	for _, v := range s.Validate(jsontext.Value(`{"nodeid":"n1"}`)) {
		fmt.Println(v.Path, v.Code)
	}
	// Output:
	// $.nodeid additional_property_not_allowed
	// $.nodeId required_property_missing
}

// Numbers with absurd exponents stay cheap in both validators.
func TestValidateHugeNumbers(t *testing.T) {
	t.Parallel()
	for name, v := range engines(t, `{"type":"array","items":{"type":"integer","minimum":0,"maximum":10}}`) {
		t.Run(name, func(t *testing.T) {
			got := brief(v(jsontext.Value(`[1e1000000,-1e1000000,1e-1000000,5]`)))
			if want := "$[0] maximum; $[1] minimum; $[2] type_mismatch"; got != want {
				t.Errorf("%q, want %q", got, want)
			}
		})
	}
	if tameNumber("12e3") != "12e3" || tameNumber("-5e999") != "-1e400" || tameNumber("5e-999") != "1e-400" || tameNumber("0e99999") != "0e99999" {
		t.Error("tameNumber")
	}
}

// The fast validator accepts the nesting jsontext accepts (10000 levels) and refuses one
// more with a single invalid_json violation whose message stays short.
func TestValidateDeepInstance(t *testing.T) {
	t.Parallel()
	s, err := Compile(jsontext.Value(`{"type":"object","additionalProperties":{"items":{}}}`))
	if err != nil || s.fast == nil {
		t.Fatal("no fast path", err)
	}
	nest := func(n int) jsontext.Value {
		return jsontext.Value(`{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + "}")
	}
	if vs := s.Validate(nest(10000)); vs != nil {
		t.Fatalf("10000 levels: %v", vs)
	}
	vs := s.Validate(nest(10001))
	if len(vs) != 1 || vs[0].Path != "$" || vs[0].Code != CodeInvalidJSON ||
		!strings.HasPrefix(vs[0].Message, "value is not valid JSON: ") || len(vs[0].Message) > 400 {
		t.Fatalf("10001 levels: %v", vs)
	}
}

// TestValidateEmptyObjectShortcut: {} is answered from what was decided at compile time,
// and that decision is the validator's own.
func TestValidateEmptyObjectShortcut(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]int{
		`{"type":"object"}`: 0,
		`{"type":"object","properties":{"a":{"type":"string"}}}`: 0,
		`{"type":"object","required":["a"]}`:                     1,
		`{"type":"object","minProperties":1}`:                    1,
		`{"type":"array"}`:                                       1,
		`{"type":"object","allOf":[{"required":["b"]}]}`:         1,
	} {
		s, err := Compile(jsontext.Value(raw))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Validate(jsontext.Value(`{}`)); len(got) != want || len(s.validate(jsontext.Value(`{}`))) != want {
			t.Errorf("%s: %d violations for {}, want %d", raw, len(got), want)
		}
	}
}

// uniqueItems over scalars is the fast validator's, with the general one's verdicts and
// messages; arrays it cannot compare go to the general validator.
func TestValidateUniqueItems(t *testing.T) {
	t.Parallel()
	s, err := Compile(jsontext.Value(`{"type":"object","properties":{"include":{"type":"array","items":{"enum":["visualTree","screenshot"]},"uniqueItems":true,"maxItems":2},"any":{"uniqueItems":true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.fast == nil {
		t.Fatal("uniqueItems did not take the fast path")
	}
	for _, tc := range []struct {
		instance string
		fast     bool // the fast validator answers
		want     string
	}{
		{`{"include":["visualTree"]}`, true, ""},
		{`{"include":["visualTree","screenshot"]}`, true, ""},
		{`{"include":["screenshot","screenshot"]}`, true, "$.include unique_items"},
		{`{"include":["screenshot","scr\u0065enshot"]}`, true, "$.include unique_items"},
		{`{"include":["screenshot","x","screenshot"]}`, true, "$.include max_items; $.include unique_items; $.include[1] enum_value_invalid"},
		{`{"any":[1,"1",true,false,null]}`, true, ""},
		{`{"any":[1,2,3,1.0]}`, true, "$.any unique_items"},
		{`{"any":[0,-0]}`, true, "$.any unique_items"},
		{`{"any":[1e2,"a",100]}`, true, "$.any unique_items"},
		{`{"any":[null,true,null]}`, true, "$.any unique_items"},
		{`{"any":["a\u00e9","aé"]}`, true, "$.any unique_items"},
		{`{"any":["\u00e9","\u00e8"]}`, true, ""},
		{`{"any":[1e500,1e600]}`, false, "$.any unique_items"}, // both tamed to 1e400 by the general validator
		{`{"any":[{"a":1},{"a":1}]}`, false, "$.any unique_items"},
		{`{"any":[[1],[2]]}`, false, ""},
		{`{"any":[` + strings.Repeat(`"a",`, maxUniqueItems) + `"b"]}`, false, "$.any unique_items"},
		{`{"any":[` + strings.Repeat(`0,`, maxUniqueItems-1) + `"b"]}`, true, "$.any unique_items"},
	} {
		t.Run(tc.instance, func(t *testing.T) {
			got, ok := s.fast.validate(jsontext.Value(tc.instance))
			if ok != tc.fast {
				t.Fatalf("fast validator answered %v, want %v", ok, tc.fast)
			}
			std := s.validateStd(jsontext.Value(tc.instance))
			if ok && full(got) != full(std) {
				t.Errorf("fast %s\nstd  %s", full(got), full(std))
			}
			if b := brief(s.Validate(jsontext.Value(tc.instance))); b != tc.want {
				t.Errorf("%q, want %q", b, tc.want)
			}
		})
	}
}

// A valid instance with uniqueItems arrays is validated without allocating (not parallel:
// AllocsPerRun).
func TestValidateUniqueItemsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	s, err := Compile(jsontext.Value(`{"type":"object","properties":{"include":{"type":"array","items":{"enum":["visualTree","screenshot"]},"uniqueItems":true},"any":{"uniqueItems":true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	valid := jsontext.Value(`{"include":["visualTree","screenshot"],"any":[1,"a",true,"\u00e9","\u00e8"]}`)
	s.Validate(valid)
	if n := testing.AllocsPerRun(100, func() { s.Validate(valid) }); n != 0 {
		t.Errorf("%v allocations validating %s, want 0", n, valid)
	}
}
