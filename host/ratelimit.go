package host

import (
	"net/netip"
	"sync"
	"time"
)

// maxLimiterEntries bounds each table of the enrollment limiter, so that a flood from many
// sources (a local process may send from every port of all of 127.0.0.0/8) cannot grow it
// without limit.
const maxLimiterEntries = 4096

// addressShare is how many senders' budgets one address that is not loopback gets in all:
// a machine on the network running many simulators enrolls them at once, while a forged
// source address draws at most this many answers per interval towards its owner.
const addressShare = 16

// enrollLimiter decides which enrollment datagrams are answered. Each sender — an address
// and port, that is one socket: each app, each probe of the official SDKs — gets a burst
// of datagrams, then one per interval, so that apps on one machine, which all send from
// 127.0.0.1, never share a budget, and a socket that sends without pause is held to its
// own. A source address that is not loopback also shares addressShare senders' budgets
// among all its ports (loopback sources cannot be forged from the network, and a local
// process may use any of 127.0.0.0/8 anyway). Datagrams over the limit are dropped before
// anything else is done with them.
//
// It has a lock of its own, not the server's: the enrollment reader takes nothing else.
type enrollLimiter struct {
	mu        sync.Mutex
	senders   *rateLimiter[netip.AddrPort]
	addresses *rateLimiter[netip.Addr]
}

func newEnrollLimiter(burst int, interval time.Duration) *enrollLimiter {
	return &enrollLimiter{
		senders:   newRateLimiter[netip.AddrPort](float64(burst), interval),
		addresses: newRateLimiter[netip.Addr](float64(burst*addressShare), interval/addressShare),
	}
}

// allow reports whether a datagram from src may be handled now, and takes from its
// budgets if so.
func (l *enrollLimiter) allow(src netip.AddrPort, now time.Time) bool {
	src = netip.AddrPortFrom(src.Addr().Unmap(), src.Port())
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.senders.bucket(src, now)
	if s.tokens < 1 {
		return false
	}
	if !src.Addr().IsLoopback() {
		a := l.addresses.bucket(src.Addr(), now)
		if a.tokens < 1 {
			return false
		}
		a.tokens--
	}
	s.tokens--
	return true
}

// rateLimiter is a token bucket per key: burst tokens at once, then one per interval. The
// table holds at most maxLimiterEntries keys; when it is full, the key seen least recently
// is forgotten, so a new source always gets its burst: a flood of distinct sources never
// locks a newcomer out (it only loses its own sources' state, and what enrollment costs is
// bounded elsewhere: tokens, grants, sessions). It is not safe for concurrent use.
type rateLimiter[K comparable] struct {
	burst    float64
	interval time.Duration
	buckets  map[K]*bucket[K]
	// recent is a ring of the buckets ordered by last use: recent.next is the most
	// recently used, recent.prev the least.
	recent bucket[K]
}

type bucket[K comparable] struct {
	key        K
	tokens     float64
	last       time.Time
	prev, next *bucket[K]
}

func newRateLimiter[K comparable](burst float64, interval time.Duration) *rateLimiter[K] {
	l := &rateLimiter[K]{burst: burst, interval: max(interval, 1), buckets: make(map[K]*bucket[K])}
	l.recent.prev, l.recent.next = &l.recent, &l.recent
	return l
}

// bucket returns k's bucket, refilled up to now and marked as the most recently used; the
// caller takes a token when it allows.
func (l *rateLimiter[K]) bucket(k K, now time.Time) *bucket[K] {
	b := l.buckets[k]
	if b == nil {
		if len(l.buckets) >= maxLimiterEntries {
			oldest := l.recent.prev
			oldest.unlink()
			delete(l.buckets, oldest.key)
		}
		b = &bucket[K]{key: k, tokens: l.burst, last: now}
		l.buckets[k] = b
	} else {
		b.unlink()
	}
	b.insertAfter(&l.recent)
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(l.burst, b.tokens+float64(elapsed)/float64(l.interval))
		b.last = now
	}
	return b
}

// allow takes a token of k's bucket if it has one.
func (l *rateLimiter[K]) allow(k K, now time.Time) bool {
	b := l.bucket(k, now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (b *bucket[K]) unlink() {
	b.prev.next, b.next.prev = b.next, b.prev
}

func (b *bucket[K]) insertAfter(at *bucket[K]) {
	b.prev, b.next = at, at.next
	at.next.prev = b
	at.next = b
}
