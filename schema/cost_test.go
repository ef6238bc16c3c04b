package schema

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// alternatives is anyOf nested levels deep through $defs, each level offering the next
// twice: 2^levels branches for a value that matches none.
func alternatives(levels int) string {
	var defs []string
	for i := range levels {
		defs = append(defs, fmt.Sprintf(`"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, levels))
	return `{"type":"object","properties":{"v":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`
}

func TestSchemaBounds(t *testing.T) {
	t.Parallel()
	deepObject := strings.Repeat(`{"properties":{"a":`, 40) + `{}` + strings.Repeat(`}}`, 40)
	manyValues := `{"enum":[` + strings.TrimSuffix(strings.Repeat(`1,`, MaxValues), ",") + `]}`
	for _, tc := range []struct {
		name, schema, err string
	}{
		{"Alternatives10", alternatives(10), ""},
		{"Alternatives20", alternatives(20), "expands to more than"},
		{"Deep", deepObject, "nested more than"},
		{"ManyValues", manyValues, "more than 10000 JSON values"},
		{"RecursiveTree", `{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/n"}}}}}}`, ""},
		{"Anchor", `{"properties":{"a":{"$ref":"#leaf"}},"$defs":{"l":{"$anchor":"leaf","type":"string"}}}`, ""},
		// Unresolvable references count as themselves here; the compiler refuses them.
		{"External", `{"properties":{"a":{"$ref":"https://example.com/s.json"}}}`, ""},
		{"Dangling", `{"properties":{"a":{"$ref":"#/$defs/none"}}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckBounds([]byte(tc.schema))
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("CheckBounds: %v, want %q", err, tc.err)
			}
			if _, err := Compile(jsontext.Value(tc.schema)); tc.err != "" && err == nil {
				t.Fatal("Compile accepted a schema beyond the bounds")
			}
		})
	}
	// Anchors and pointers resolve inside a subschema's own $id.
	nested := `{"properties":{"a":{"$ref":"#/$defs/sub"}},"$defs":{"sub":{"$id":"https://schemas.ansight.invalid/sub.json","properties":{"b":{"$ref":"#/$defs/leaf"}},"$defs":{"leaf":{"type":"string"}}}}}`
	if _, err := Compile(jsontext.Value(nested)); err != nil {
		t.Fatalf("a subschema with its own $id: %v", err)
	}
}

// recursiveAlternatives has two alternatives that both descend into the value.
const recursiveAlternatives = `{"type":"object","properties":{"v":{"$ref":"#/$defs/n"}},"$defs":{"n":{"anyOf":[` +
	`{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}},` +
	`{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"required":["b"]}]}}}`

func nestedValue(depth int) string {
	return `{"v":` + strings.Repeat(`{"a":`, depth) + `5` + strings.Repeat(`}`, depth) + `}`
}

// TestValidationBudget: work that grows with the value's depth exponentially is refused
// with CodeValidationBudget; linear work, even on a large value, is not.
func TestValidationBudget(t *testing.T) {
	t.Parallel()
	s, err := Compile(jsontext.Value(recursiveAlternatives))
	if err != nil {
		t.Fatal(err)
	}
	if vs := s.Validate(jsontext.Value(nestedValue(4))); len(vs) == 0 || vs[0].Code == CodeValidationBudget {
		t.Fatalf("a shallow value: %v, want ordinary violations", vs)
	}
	if vs := s.Validate(jsontext.Value(nestedValue(20))); len(vs) != 1 || vs[0].Code != CodeValidationBudget || vs[0].Path != "$" {
		t.Fatalf("a value 20 deep: %v, want the budget refusal", vs)
	}

	tree, err := Compile(jsontext.Value(`{"type":"object","properties":{"root":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"object",` +
		`"properties":{"id":{"type":"string"},"role":{"type":"string"},"bounds":{"$ref":"#/$defs/b"},"children":{"type":"array","items":{"$ref":"#/$defs/n"}}},"required":["id"]},` +
		`"b":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"w":{"type":"number"},"h":{"type":"number"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	node := func(i int) string {
		return fmt.Sprintf(`{"id":"n%d","role":"button","bounds":{"x":1,"y":2,"w":3,"h":4}}`, i)
	}
	b.WriteString(`{"root":{"id":"root","children":[`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(node(i))
	}
	b.WriteString(`]}}`)
	if vs := tree.Validate(jsontext.Value(b.String())); vs != nil {
		t.Fatalf("a 5000-node tree: %v", vs)
	}
}

// TestValidationLoop: a reference cycle that never descends into the value ends the walk
// instead of recursing without end.
func TestValidationLoop(t *testing.T) {
	t.Parallel()
	s, err := Compile(jsontext.Value(`{"$ref":"#a","$defs":{"x":{"$anchor":"a","$ref":"#"}}}`))
	if err != nil {
		t.Skipf("the compiler refuses the loop itself: %v", err)
	}
	if vs := s.Validate(jsontext.Value(`{"k":1}`)); len(vs) == 0 {
		t.Fatal("a looping schema accepted a value")
	}
}
