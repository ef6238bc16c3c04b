package usage

import (
	"encoding/json"
	"testing"
	"time"
)

func TestMillisJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(struct {
		D Millis `json:"dMs"`
	}{Millis(1500 * time.Microsecond)})
	if err != nil || string(b) != `{"dMs":1.5}` {
		t.Fatalf("%s %v", b, err)
	}
	var back struct {
		D Millis `json:"dMs"`
	}
	if err := json.Unmarshal(b, &back); err != nil || back.D.D() != 1500*time.Microsecond {
		t.Fatalf("%v %v", back.D, err)
	}
}

// TestSpan: a span of work done by this process counts its CPU time, and the work of
// others is never negative.
func TestSpan(t *testing.T) {
	start := Now()
	deadline := time.Now().Add(30 * time.Millisecond)
	for n := 0; time.Now().Before(deadline); n++ {
		_ = n * n
	}
	sp := start.Since(0)
	if sp.Wall.D() < 30*time.Millisecond || sp.Process <= 0 || sp.CPUs < 1 {
		t.Fatalf("span %+v", sp)
	}
	if start.MachineKnown && sp.Others < 0 {
		t.Fatalf("others %v", sp.Others)
	}
	if got := sp.PerOp(2); got != float64(sp.Process)/float64(time.Microsecond)/2 {
		t.Fatalf("PerOp(2) = %v", got)
	}
	if sp.PerOp(0) != 0 || sp.Conditions() == "" {
		t.Fatal("PerOp(0) or Conditions")
	}
}
