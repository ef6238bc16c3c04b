package connect

import (
	"testing"
	"time"
)

func TestBackoffBoundsAndCap(t *testing.T) {
	t.Parallel()
	for _, jitter := range []struct {
		name string
		rand func(int64) int64
		frac func(step time.Duration) time.Duration // the expected delay for a step
	}{
		{"least", func(int64) int64 { return 0 }, func(s time.Duration) time.Duration { return s - s/2 }},
		{"most", func(n int64) int64 { return n - 1 }, func(s time.Duration) time.Duration { return s }},
	} {
		t.Run(jitter.name, func(t *testing.T) {
			b := newBackoff(time.Second, 30*time.Second)
			b.rand = jitter.rand
			steps := []time.Duration{1, 2, 4, 8, 16, 30, 30, 30}
			for i, s := range steps {
				if got, want := b.next(), jitter.frac(s*time.Second); got != want {
					t.Errorf("delay %d = %v, want %v", i, got, want)
				}
			}
			b.reset()
			if got, want := b.next(), jitter.frac(time.Second); got != want {
				t.Errorf("after reset = %v, want %v", got, want)
			}
		})
	}
}

func TestBackoffManyFailuresDoNotOverflow(t *testing.T) {
	t.Parallel()
	b := newBackoff(time.Second, time.Minute)
	for range 1000 {
		if d := b.next(); d <= 0 || d > time.Minute {
			t.Fatalf("delay %v out of (0, 1m]", d)
		}
	}
}
