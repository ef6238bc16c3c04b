package catalog

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// benchSet is a Set of 10,000 tools with three unavailable, built once.
var benchSet = sync.OnceValues(func() (*Set, map[string]wire.Runtime) { return bigSet(10000) })

// bigSet builds a Set of n tools over 50 categories and all policies, and a runtime state
// with three of them unavailable.
func bigSet(n int) (*Set, map[string]wire.Runtime) {
	policies := []wire.Policy{wire.PolicyRead, wire.PolicyWrite, wire.PolicyCritical}
	defs := make([]Definition, n)
	for i := range defs {
		defs[i] = Definition{
			ID:              fmt.Sprintf("area%02d.tool_%05d", i%50, i),
			Name:            fmt.Sprintf("Tool %d", i),
			Description:     "Performs a representative operation on the simulated application state.",
			Category:        fmt.Sprintf("area%02d", i%50),
			Policy:          policies[i%3],
			ArgumentsSchema: jsontext.Value(`{"type":"object","properties":{"reference":{"type":"object","properties":{"nodeId":{"type":"string","minLength":1},"snapshotId":{"type":"string"}},"required":["nodeId"]},"action":{"type":"string","enum":["tap","longPress","focus"]},"timeoutMs":{"type":"integer","minimum":0,"maximum":60000}},"required":["reference","action"]}`),
			ResultSchema:    jsontext.Value(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`),
			Keywords:        "bench sample",
		}
	}
	s, err := NewSet(defs, GuardFullAccess)
	if err != nil {
		panic(err)
	}
	down := map[string]wire.Runtime{
		"area01.tool_00001": {Code: "busy", Retryable: true},
		"area02.tool_00002": {Code: "busy"},
		"area03.tool_00003": {Code: "locked", Reason: "Unlock first."},
	}
	return s, down
}

func benchAnswer(b *testing.B, q wire.Query) {
	s, down := benchSet()
	if _, err := s.Answer(&q, down, testNow); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		p, _ := s.Answer(&q, down, testNow)
		n = len(p)
	}
	b.ReportMetric(float64(n), "bytes")
}

func BenchmarkAnswer10kIndex(b *testing.B) { benchAnswer(b, wire.Query{Detail: "index"}) }
func BenchmarkAnswer10kFull(b *testing.B)  { benchAnswer(b, wire.Query{}) }

func BenchmarkAnswer10kUnchanged(b *testing.B) {
	s, down := benchSet()
	benchAnswer(b, wire.Query{Detail: "index", IfRevision: s.Revision(), IfAvailabilityRevision: s.availabilityOf(down).revision})
}

func BenchmarkAnswer10kQuery(b *testing.B) {
	benchAnswer(b, wire.Query{Detail: "index", Query: "tool_0999", Policy: "read"})
}

// BenchmarkAnswer10kAvailabilityChanged measures the first query after a runtime change:
// the availability revision is recomputed over every visible tool.
func BenchmarkAnswer10kAvailabilityChanged(b *testing.B) {
	s, down := benchSet()
	other := map[string]wire.Runtime{"area04.tool_00004": {Code: "busy"}}
	q := wire.Query{IfRevision: s.Revision(), IfAvailabilityRevision: "x"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			s.Answer(&q, down, testNow)
		} else {
			s.Answer(&q, other, testNow)
		}
	}
}

// BenchmarkAnswerPayload10kMiss asks for one of 50 categories (200 tools) in turn, which
// the answer cache (8 answers) never holds: every answer is assembled anew in a pooled
// buffer and compressed.
func BenchmarkAnswerPayload10kMiss(b *testing.B) {
	s, down := benchSet()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q := wire.Query{Query: fmt.Sprintf("area%02d", i%50)}
		if _, err := s.AnswerPayload(&q, down, testNow); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewSet10k(b *testing.B) {
	s, _ := benchSet()
	defs := make([]Definition, 0, len(s.Tools()))
	for _, t := range s.Tools() {
		defs = append(defs, t.Def)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewSet(defs, GuardReadWrite); err != nil {
			b.Fatal(err)
		}
	}
}

// TestUnchangedIsCheap checks what the SDK relies on, by allocations rather than time (no
// timing thresholds in unit tests): in an unchanged state, the unchanged answer copies the
// pre-encoded payload and nothing else, whatever the number of tools.
func TestUnchangedIsCheap(t *testing.T) {
	s, down := bigSet(1000)
	av := s.availabilityOf(down).revision
	q := wire.Query{Detail: "index", IfRevision: s.Revision(), IfAvailabilityRevision: av}
	allocs := testing.AllocsPerRun(20, func() { s.Answer(&q, down, testNow) })
	if allocs > 1 {
		t.Fatalf("unchanged answer allocates %v times, want ≤ 1", allocs)
	}
}

// BenchmarkAnswer10kUnchangedRatio reports how many times cheaper the unchanged 3-key
// answer is than a full index answer of the same Set, both measured in this run (the
// SDK's budget is a ratio of at least 50).
func BenchmarkAnswer10kUnchangedRatio(b *testing.B) {
	s, down := benchSet()
	index := wire.Query{Detail: "index"}
	unchanged := wire.Query{Detail: "index", IfRevision: s.Revision(), IfAvailabilityRevision: s.availabilityOf(down).revision}
	var full, short time.Duration
	for b.Loop() {
		start := time.Now()
		s.Answer(&index, down, testNow)
		mid := time.Now()
		for range 50 {
			s.Answer(&unchanged, down, testNow)
		}
		full += mid.Sub(start)
		short += time.Since(mid) / 50
	}
	b.ReportMetric(float64(full)/float64(short), "x-cheaper")
}
