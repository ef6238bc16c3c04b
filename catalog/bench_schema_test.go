package catalog

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

var benchSchema = jsontext.Value(`{"type":"object","properties":{"reference":{"type":"object","properties":{"nodeId":{"type":"string","minLength":1},"snapshotId":{"type":"string"}},"required":["nodeId"]},"action":{"type":"string","enum":["tap","longPress","focus"]},"timeoutMs":{"type":"integer","minimum":0,"maximum":60000}},"required":["reference","action"]}`)
var benchInstance = jsontext.Value(`{"reference":{"nodeId":"n-42","snapshotId":"s-7"},"action":"tap","timeoutMs":500}`)

func BenchmarkValidateSmall(b *testing.B) {
	s, err := CompileSchema(benchSchema)
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
	s, err := CompileSchema(benchSchema)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.validateStd(benchInstance)
	}
}
