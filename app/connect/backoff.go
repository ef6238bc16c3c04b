package connect

import (
	"math/rand/v2"
	"time"
)

// backoff computes reconnect delays: exponential from min, capped at max, with "equal
// jitter" (half the step fixed, half random) so that many apps restarted by one host restart
// do not come back in lockstep, while a single app still waits at least half the step.
type backoff struct {
	min, max time.Duration
	rand     func(n int64) int64 // uniform in [0, n); replaced in tests
	failures int
}

func newBackoff(min, max time.Duration) *backoff {
	return &backoff{min: min, max: max, rand: rand.Int64N}
}

// next returns the delay before the next attempt and counts one more failure.
func (b *backoff) next() time.Duration {
	step := b.min
	for i := 0; i < b.failures && step < b.max; i++ {
		step *= 2
	}
	step = min(step, b.max)
	if b.failures < 64 {
		b.failures++
	}
	half := step / 2
	if half <= 0 {
		return step
	}
	return step - half + time.Duration(b.rand(int64(half)+1))
}

// reset starts over from the shortest delay, after a session that was established.
func (b *backoff) reset() { b.failures = 0 }
