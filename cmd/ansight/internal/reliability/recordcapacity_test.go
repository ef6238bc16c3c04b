package reliability

import (
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/cmd/ansight/internal/usage"
)

// TestSearchLargest checks the capacity search against machines of known capacity: it
// finds the largest count held to within 5 %, never claims a count that was not held,
// stays within 1..limit and takes few steps.
func TestSearchLargest(t *testing.T) {
	const start, limit = 50, MaxRecordSessions
	for _, capacity := range []int{0, 1, 2, 37, 49, 50, 51, 99, 100, 101, 737, 1999, 2000, 4999, limit, 2 * limit} {
		var tried []int
		got := searchLargest(start, limit, func(n int) bool {
			tried = append(tried, n)
			if n < 1 || n > limit {
				t.Fatalf("capacity %d: tried %d sessions", capacity, n)
			}
			return n <= capacity
		})
		want := min(capacity, limit)
		if got > want || want-got > max(1, got/20) {
			t.Errorf("capacity %d: found %d (tried %v)", capacity, got, tried)
		}
		if len(tried) > 20 {
			t.Errorf("capacity %d: %d steps: %v", capacity, len(tried), tried)
		}
		if got > 0 && !contains(tried, got) {
			t.Errorf("capacity %d: %d was never measured (tried %v)", capacity, got, tried)
		}
	}
}

// TestSearchLargestNotMonotone: a measured step can fail below one that held (another
// process took the cores); the search still only claims a count it measured as held.
func TestSearchLargestNotMonotone(t *testing.T) {
	results := map[int]bool{50: true, 100: true, 200: false, 150: false, 125: true, 137: true, 143: false, 140: false}
	var tried []int
	got := searchLargest(50, 5000, func(n int) bool { tried = append(tried, n); return results[n] })
	if got != 137 || !results[got] {
		t.Fatalf("found %d, tried %v", got, tried)
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestHolds: a step holds only with nothing dropped or failed, the pace kept and the
// queue written soon after.
func TestHolds(t *testing.T) {
	ok := RecordLoadReport{Pace: 0.99, Flush: usage.Millis(5 * time.Millisecond)}
	if h, why := holds(&ok); !h {
		t.Fatalf("not held: %s", why)
	}
	for name, r := range map[string]RecordLoadReport{
		"dropped":   {Pace: 0.99, Dropped: 1},
		"failed":    {Pace: 0.99, Failed: 1},
		"send":      {Pace: 0.99, WriteErrors: 1},
		"pace":      {Pace: 0.9},
		"behind":    {Pace: 0.99, Flush: usage.Millis(1500 * time.Millisecond)},
		"app error": {Pace: 0.99, RunErrors: []string{"x"}},
	} {
		if h, _ := holds(&r); h {
			t.Errorf("%s: held", name)
		}
	}
	rep := RecordCapacityReport{Messages: 20, Frames: 2, Limit: 5000, Largest: 100,
		Steps: []CapacityStep{{Sessions: 100, Held: true, Report: &ok}, {Sessions: 200, Why: "1 telemetry messages dropped"}}}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"  100 sessions  held", "200 sessions  NOT held: 1 telemetry", "largest held: 100 sessions"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, b.String())
		}
	}
}
