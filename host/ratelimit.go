package host

import (
	"net/netip"
	"time"
)

// maxLimiterEntries bounds the per-source table, so that a flood from spoofed addresses
// cannot grow it without limit.
const maxLimiterEntries = 4096

// rateLimiter is a token bucket per source address: burst datagrams at once, then one per
// interval. It is used by the single enrollment goroutine only.
type rateLimiter struct {
	burst    float64
	interval time.Duration
	buckets  map[netip.Addr]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newRateLimiter(burst int, interval time.Duration) *rateLimiter {
	return &rateLimiter{burst: float64(burst), interval: interval, buckets: make(map[netip.Addr]*bucket)}
}

// allow reports whether a datagram from a may be handled now, and takes a token if so.
func (l *rateLimiter) allow(a netip.Addr, now time.Time) bool {
	a = a.Unmap()
	b := l.buckets[a]
	if b == nil {
		if len(l.buckets) >= maxLimiterEntries {
			l.evictFull(now)
			if len(l.buckets) >= maxLimiterEntries {
				return false // fail closed under a flood of distinct sources
			}
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[a] = b
	}
	b.refill(l, now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (b *bucket) refill(l *rateLimiter, now time.Time) {
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(l.burst, b.tokens+float64(elapsed)/float64(l.interval))
		b.last = now
	}
}

// evictFull drops buckets that have refilled completely: forgetting them changes nothing.
func (l *rateLimiter) evictFull(now time.Time) {
	for a, b := range l.buckets {
		b.refill(l, now)
		if b.tokens >= l.burst {
			delete(l.buckets, a)
		}
	}
}
