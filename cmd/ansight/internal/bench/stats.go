package bench

import (
	"slices"
	"time"
)

// latencies are the durations of individual operations.
type latencies []time.Duration

// percentile returns the nearest-rank p-th percentile (0 < p ≤ 100), 0 without samples.
func (l latencies) percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	rank := int(p/100*float64(len(s)) + 0.999999)
	return s[min(max(rank, 1), len(s))-1]
}

// median returns the middle value of xs (the lower middle for an even count), 0 when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// perSecond turns n operations in d into a rate.
func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// megabytesPerSecond is n bytes in d, in MB/s (10^6 bytes).
func megabytesPerSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / 1e6 / d.Seconds()
}

// ratioRange returns the lowest and the highest of the rounds' ratios a[i]/b[i] (rounds of
// an alternation, so that each ratio's two sides shared the machine's load), nil without
// rounds.
func ratioRange(a, b []float64) *[2]float64 {
	var out *[2]float64
	for i := range min(len(a), len(b)) {
		if b[i] == 0 {
			continue
		}
		q := a[i] / b[i]
		if out == nil {
			out = &[2]float64{q, q}
		}
		out[0], out[1] = min(out[0], q), max(out[1], q)
	}
	return out
}

// spread returns the lowest and the highest of xs (ratios of single rounds), nil when
// empty.
func spread(xs []float64) *[2]float64 {
	if len(xs) == 0 {
		return nil
	}
	return &[2]float64{slices.Min(xs), slices.Max(xs)}
}

// quartiles returns the lower and the upper quartile of xs (nearest rank), 0 when empty.
func quartiles(xs []float64) (q1, q3 float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/4], s[(3*(len(s)-1)+3)/4]
}

// mean returns the average of xs, 0 when empty.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
