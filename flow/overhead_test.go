package flow

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
)

// TestRunnerOverhead measures what the runner adds to each step: the same calls
// (notes.get against the demo app behind a real host in this process, over its WebSocket
// session) made directly through hostapi, and as the steps of a flow, each with an
// expectation, in alternating rounds of one run; wall time and CPU time (getrusage: this
// process holds the host, the app and the runner) per call, with the machine's load. It
// also times a 100-step flow. A measurement, not a test: it runs only when asked,
//
//	ANSIGHT_FLOW_OVERHEAD=1 go test -run TestRunnerOverhead -v ./flow
//
// (ANSIGHT_FLOW_OVERHEAD=N sets the calls per round, 500 by default). The ratios are the
// medians of each round's flow/direct ratio: neighbouring rounds share the machine's load.
func TestRunnerOverhead(t *testing.T) {
	calls, _ := strconv.Atoi(os.Getenv("ANSIGHT_FLOW_OVERHEAD"))
	if os.Getenv("ANSIGHT_FLOW_OVERHEAD") == "" {
		t.Skip("a measurement: set ANSIGHT_FLOW_OVERHEAD=1 to run it")
	}
	if calls < 10 {
		calls = 500
	}
	h := startDemoHost(t)
	ctx := context.Background()
	req := hostapi.CallRequest{ToolID: "notes.get", Arguments: jsontext.Value(`{"id":"n1"}`)}
	step := "  - call: notes.get\n    arguments: {id: n1}\n    expect: [{path: /id, equals: n1}]\n"
	flowOf := func(n int) *Flow {
		return parse(t, "schema: ansight.flow/v1\nsteps:\n"+strings.Repeat(step, n))
	}
	big := flowOf(calls)
	direct := func() {
		for range calls {
			c, err := h.backend.Call(ctx, h.session, req, nil)
			if err != nil || !c.Success {
				t.Fatalf("%v %+v", err, c)
			}
		}
	}
	viaFlow := func() {
		if r := Run(ctx, big, h.target(), Options{}); r.Status != StatusPassed {
			t.Fatalf("%+v", r.Failure)
		}
	}
	direct() // warm up both paths
	viaFlow()
	load0 := loadavg()
	const rounds = 21
	var dWall, dCPU, fWall, fCPU, rWall, rCPU []float64
	for range rounds {
		dw, dc := measure(direct)
		fw, fc := measure(viaFlow)
		dWall, dCPU = append(dWall, dw/float64(calls)), append(dCPU, dc/float64(calls))
		fWall, fCPU = append(fWall, fw/float64(calls)), append(fCPU, fc/float64(calls))
		rWall, rCPU = append(rWall, fw/dw), append(rCPU, fc/dc)
	}
	hundred := flowOf(100)
	var hw []float64
	for range rounds {
		w, _ := measure(func() { Run(ctx, hundred, h.target(), Options{}) })
		hw = append(hw, w)
	}
	load1 := loadavg()
	md, mf, cd, cf := median(dWall), median(fWall), median(dCPU), median(fCPU)
	t.Logf("%d calls per round, %d rounds each, medians; load average %s before, %s after", calls, rounds, load0, load1)
	t.Logf("direct hostapi.Call: %.1f µs wall, %.1f µs CPU per call", md, cd)
	t.Logf("flow step (call + expect): %.1f µs wall, %.1f µs CPU per step", mf, cf)
	t.Logf("ratio flow/direct (median of the rounds' ratios): wall %.3f×, CPU %.3f×", median(rWall), median(rCPU))
	t.Logf("a 100-step flow: %.2f ms wall (median of %d)", median(hw)/1000, rounds)
}

// measure returns fn's wall and CPU (user + system) time in µs.
func measure(fn func()) (wall, cpu float64) {
	c0 := cpuTime()
	start := time.Now()
	fn()
	return float64(time.Since(start).Microseconds()), float64((cpuTime() - c0).Microseconds())
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return fmt.Sprintf("%s/%s/%s", f[0], f[1], f[2])
}
