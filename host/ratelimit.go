package host

import (
	"net/netip"
	"time"
)

// maxLimiterEntries bounds the per-source table, so that a flood from many addresses (a
// local process may send from all of 127.0.0.0/8) cannot grow it without limit.
const maxLimiterEntries = 4096

// rateLimiter is a token bucket per source address: burst datagrams at once, then one per
// interval. The table holds at most maxLimiterEntries sources; when it is full, the source
// seen least recently is forgotten, so a new source always gets its burst: a flood of
// distinct addresses never locks a newcomer out (it only loses its own sources' state,
// and what enrollment costs is bounded elsewhere: tokens, grants, sessions). It is used by
// the single enrollment goroutine only.
type rateLimiter struct {
	burst    float64
	interval time.Duration
	buckets  map[netip.Addr]*bucket
	// recent is a ring of the buckets ordered by last use: recent.next is the most
	// recently used, recent.prev the least.
	recent bucket
}

type bucket struct {
	addr       netip.Addr
	tokens     float64
	last       time.Time
	prev, next *bucket
}

func newRateLimiter(burst int, interval time.Duration) *rateLimiter {
	l := &rateLimiter{burst: float64(burst), interval: interval, buckets: make(map[netip.Addr]*bucket)}
	l.recent.prev, l.recent.next = &l.recent, &l.recent
	return l
}

// allow reports whether a datagram from a may be handled now, and takes a token if so.
func (l *rateLimiter) allow(a netip.Addr, now time.Time) bool {
	a = a.Unmap()
	b := l.buckets[a]
	if b == nil {
		if len(l.buckets) >= maxLimiterEntries {
			oldest := l.recent.prev
			oldest.unlink()
			delete(l.buckets, oldest.addr)
		}
		b = &bucket{addr: a, tokens: l.burst, last: now}
		l.buckets[a] = b
	} else {
		b.unlink()
	}
	b.insertAfter(&l.recent)
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(l.burst, b.tokens+float64(elapsed)/float64(l.interval))
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (b *bucket) unlink() {
	b.prev.next, b.next.prev = b.next, b.prev
}

func (b *bucket) insertAfter(at *bucket) {
	b.prev, b.next = at, at.next
	at.next.prev = b
	at.next = b
}
