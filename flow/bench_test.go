package flow

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// instantTarget answers every call at once with the same result: what is left of a step's
// time is the runner's own.
type instantTarget struct {
	fakeApp
	call *hostapi.Call
}

func (t *instantTarget) Call(context.Context, hostapi.CallRequest) (*hostapi.Call, error) {
	return t.call, nil
}

func (t *instantTarget) contextBound() {}

// BenchmarkRunnerStep is the runner's own cost per step, a call and one expectation,
// against a target that answers at once (go test -bench RunnerStep -benchmem ./flow).
func BenchmarkRunnerStep(b *testing.B) {
	for _, tc := range []struct{ name, step string }{
		{"call", "  - call: notes.get\n    arguments: {id: n1}\n"},
		{"call+expect", "  - call: notes.get\n    arguments: {id: n1}\n    expect: [{path: /id, equals: n1}]\n"},
		{"call+save", "  - call: notes.get\n    arguments: {id: n1}\n    save: note\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			const steps = 100
			f, err := Parse("b.yaml", []byte("schema: ansight.flow/v1\nsteps:\n"+strings.Repeat(tc.step, steps)))
			if err != nil {
				b.Fatal(err)
			}
			result := jsontext.Value(`{"id":"n1","title":"Groceries","body":"milk","createdAtUtc":"2026-12-01T22:28:06.634362131Z","updatedAtUtc":"2026-12-01T22:28:06.634362131Z"}`)
			t := &instantTarget{call: &hostapi.Call{Success: true, Result: &wire.Result{ToolID: "notes.get", Success: true, Result: result}}}
			b.ReportAllocs()
			for b.Loop() {
				if r := Run(context.Background(), f, t, Options{}); r.Status != StatusPassed {
					b.Fatal(r.Failure)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
		})
	}
}
