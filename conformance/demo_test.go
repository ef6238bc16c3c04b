package conformance_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/ansight-go/ansight/conformance"
	"github.com/ansight-go/ansight/examples/notes/notestest"
)

// TestDemoPasses runs the whole suite against the demo app over a Pipe: every check
// passes, and only the checks the demo cannot provoke are skipped.
func TestDemoPasses(t *testing.T) {
	target := serveApp(t, newDemoApp(t))
	rep := conformance.Run(context.Background(), target, conformance.Options{AllowWrite: true, Scenario: notestest.ConformanceScenario()})
	var out bytes.Buffer
	rep.WriteText(&out)
	t.Log("\n" + out.String())
	if !rep.OK() {
		t.Fatalf("the demo app fails the suite:\n%s", out.String())
	}
	for _, r := range rep.Results {
		if r.Status == conformance.StatusSkip && r.Name != "call.guard_denied" {
			t.Errorf("%s skipped: %s", r.Name, r.Reason)
		}
	}
}
