package app

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// BenchmarkRegisterFirstQuery registers 1,000 tools in a new App and answers its first
// tool.query (definitions), reporting the CPU (getrusage) of each part and of both: the
// first answer of a catalog is cheaper when the tools' catalog parts are made as they are
// registered, and this holds that the registration does not pay it back (the total). It
// uses only what the package had at 24060c7, so the same file measures that build
// (docs/performance.md, round 4, sixth pass, target 2).
func BenchmarkRegisterFirstQuery(b *testing.B) {
	args := jsontext.Value(`{"type":"object","properties":{"reference":{"type":"string"},"count":{"type":"integer"}},"required":["reference"]}`)
	result := jsontext.Value(`{"type":"object","additionalProperties":true}`)
	noop := func(ctx context.Context, c *Call) (any, error) { return nil, nil }
	msg := []byte(`{"type":"tool.query","id":"q","payload":{"detail":"definitions"}}`)
	ctx := context.Background()
	var register, query time.Duration
	b.ReportAllocs()
	for i := range b.N {
		a := New(Options{})
		start := processCPU()
		for t := range 1000 {
			d := def("bench.tool_"+itoa(t), "Tool "+itoa(t), "cat"+itoa(t%20), wire.PolicyRead)
			d.Description = "Tool " + itoa(t) + " of run " + itoa(i) // its own definition revision
			d.ArgumentsSchema, d.ResultSchema = args, result
			if err := a.Register(Tool{Definition: d, Handler: noop}); err != nil {
				b.Fatal(err)
			}
		}
		registered := processCPU()
		if _, err := a.Handle(ctx, msg, discard{}); err != nil {
			b.Fatal(err)
		}
		end := processCPU()
		register += registered - start
		query += end - registered
	}
	n := float64(b.N)
	b.ReportMetric(float64(register.Microseconds())/n, "register-cpu-µs/op")
	b.ReportMetric(float64(query.Microseconds())/n, "query-cpu-µs/op")
	b.ReportMetric(float64((register+query).Microseconds())/n, "cpu-µs/op")
}

// processCPU is this process's CPU time (user and system, getrusage).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
