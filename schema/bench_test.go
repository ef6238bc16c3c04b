package schema

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

var benchSchema = jsontext.Value(`{"type":"object","properties":{"reference":{"type":"object","properties":{"nodeId":{"type":"string","minLength":1},"snapshotId":{"type":"string"}},"required":["nodeId"]},"action":{"type":"string","enum":["tap","longPress","focus"]},"timeoutMs":{"type":"integer","minimum":0,"maximum":60000}},"required":["reference","action"]}`)
var benchInstance = jsontext.Value(`{"reference":{"nodeId":"n-42","snapshotId":"s-7"},"action":"tap","timeoutMs":500}`)

func BenchmarkValidateSmall(b *testing.B) {
	s, err := Compile(benchSchema)
	if err != nil {
		b.Fatal(err)
	}
	if vs := s.Validate(benchInstance); vs != nil {
		b.Fatal(vs)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Validate(benchInstance)
	}
}

func BenchmarkValidateSmallStd(b *testing.B) {
	s, err := Compile(benchSchema)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.validateStd(benchInstance)
	}
}

// treeSchema is a recursive node schema like ui.get_visual_tree's: $ref sends it to the
// general validator, which checks a value within its budget of steps.
var treeSchema = jsontext.Value(`{"type":"object","properties":{"root":{"$ref":"#/$defs/n"}},"required":["root"],"$defs":{"n":{"type":"object",` +
	`"properties":{"id":{"type":"string"},"role":{"type":"string"},"text":{"type":"string"},"bounds":{"$ref":"#/$defs/b"},"children":{"type":"array","items":{"$ref":"#/$defs/n"}}},"required":["id","role"]},` +
	`"b":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"width":{"type":"number"},"height":{"type":"number"}}}}}`)

// treeInstance is a tree of 3 levels of 8 children (585 nodes).
func treeInstance() jsontext.Value {
	var b strings.Builder
	var node func(id string, depth int)
	node = func(id string, depth int) {
		fmt.Fprintf(&b, `{"id":%q,"role":"group","text":"Node %s","bounds":{"x":1,"y":2,"width":30,"height":40}`, id, id)
		if depth < 3 {
			b.WriteString(`,"children":[`)
			for i := range 8 {
				if i > 0 {
					b.WriteByte(',')
				}
				node(fmt.Sprintf("%s.%d", id, i), depth+1)
			}
			b.WriteByte(']')
		}
		b.WriteByte('}')
	}
	b.WriteString(`{"root":`)
	node("root", 0)
	b.WriteByte('}')
	return jsontext.Value(b.String())
}

// BenchmarkValidateTreeStd validates a 585-node tree against a recursive schema: the
// general validator's path, budget walk included.
func BenchmarkValidateTreeStd(b *testing.B) {
	s, err := Compile(treeSchema)
	if err != nil {
		b.Fatal(err)
	}
	inst := treeInstance()
	if vs := s.Validate(inst); vs != nil {
		b.Fatal(vs)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Validate(inst)
	}
}

// BenchmarkBudgetWalk is the budget walk alone, on the value of BenchmarkValidateTreeStd
// (decoded once): what the validation budget adds to the general validator's path.
func BenchmarkBudgetWalk(b *testing.B) {
	s, err := Compile(treeSchema)
	if err != nil {
		b.Fatal(err)
	}
	v, values, err := decodeAny(treeInstance())
	if err != nil {
		b.Fatal(err)
	}
	budget := validationBudgetBase + validationBudgetPerValue*values
	b.ReportAllocs()
	for b.Loop() {
		if !s.graph.fits(v, budget) {
			b.Fatal("over budget")
		}
	}
}
