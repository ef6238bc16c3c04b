package host

import (
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/transport"
)

// TestLimiterNewcomer: a full table forgets the source seen least recently, so a new
// source always gets its burst, and a source that keeps sending stays limited.
func TestLimiterNewcomer(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 30, 1, 0, 0, 0, time.UTC)
	l := newRateLimiter(2, time.Second)
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{127, 1, byte(i >> 8), byte(i)}) }
	for i := range maxLimiterEntries {
		l.allow(addr(i), now)
		l.allow(addr(i), now) // burst spent
	}
	busy := addr(maxLimiterEntries - 1)
	if l.allow(busy, now) {
		t.Fatal("a source over its burst was allowed")
	}
	newcomer := netip.MustParseAddr("127.2.0.1")
	if !l.allow(newcomer, now) {
		t.Fatal("a newcomer was refused by a full table")
	}
	if len(l.buckets) != maxLimiterEntries {
		t.Fatalf("the table holds %d sources", len(l.buckets))
	}
	if l.allow(busy, now) {
		t.Fatal("a recently seen source lost its state")
	}
	if _, kept := l.buckets[addr(0)]; kept {
		t.Fatal("the source seen least recently was kept")
	}
}

// TestSessionsPerGrant: one installation holds at most maxSessionsPerGrant sessions.
func TestSessionsPerGrant(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	a := newApp("com.example.app")
	for i := range maxSessionsPerGrant {
		a.psid = fmt.Sprintf("process-%d", i)
		conn := h.connect(t, a)
		readAsync(conn)
	}
	a.psid = "one-too-many"
	if got := upgradeStatus(t, h.wsURL(h.enroll(t, a.local())), transport.DialOptions{}); got != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", got)
	}
	if got := upgradeStatus(t, h.wsURL(h.enroll(t, newApp("com.example.other").local())), transport.DialOptions{}); got != http.StatusSwitchingProtocols {
		t.Fatalf("another app: status %d, want 101", got)
	}
}

// TestSessionsFairShare: when the table is full, a newcomer takes the place of the oldest
// session of the app holding the most, while that app holds two more than the newcomer's:
// shares converge, and then the table refuses.
func TestSessionsFairShare(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.MaxSessions = 4 })
	var ends []<-chan error
	for range 4 {
		h.clock.Advance(time.Second)
		ends = append(ends, readAsync(h.connect(t, newApp("com.example.greedy"))))
	}
	for i := range 2 {
		h.clock.Advance(time.Second)
		readAsync(h.connect(t, newApp("com.example.newcomer")))
		select {
		case err := <-ends[i]:
			if closeCode(err) != transport.StatusNormalClosure {
				t.Fatalf("the displaced session ended with %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("newcomer %d: the oldest greedy session was not displaced", i)
		}
		waitFor(t, "the displaced session detached", func() bool { return h.connected("com.example.greedy") == 3-i })
	}
	// Two each: equal shares, the table refuses.
	if got := upgradeStatus(t, h.wsURL(h.enroll(t, newApp("com.example.newcomer").local())), transport.DialOptions{}); got != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503 at equal shares", got)
	}
}

func (h *harness) connected(appID string) int {
	n := 0
	for _, s := range h.Sessions() {
		if s.AppID() == appID && s.State() == StateConnected {
			n++
		}
	}
	return n
}

// TestGrantBudgetPrunes: beyond MaxLocalGrants, the oldest never-used grant goes first, a
// used one only when no unused one is left, and the grant just made never.
func TestGrantBudgetPrunes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := newHarness(t, func(o *Options) { o.MaxLocalGrants = 3; o.StateDir = dir })
	used := newApp("com.example.used")
	readAsync(h.connect(t, used))
	h.sessionFor(t, used.appID)
	var unused []app
	for i := range 4 {
		h.clock.Advance(time.Second)
		a := newApp(fmt.Sprintf("com.example.unused%d", i))
		if r := h.enroll(t, a.local()); !r.Accepted {
			t.Fatal(r.Reason)
		}
		unused = append(unused, a)
	}
	has := func(a app) bool {
		for _, g := range h.Grants() {
			if g.DeviceID == a.deviceID {
				return true
			}
		}
		return false
	}
	if len(h.Grants()) != 3 || !has(used) || has(unused[0]) || has(unused[1]) || !has(unused[3]) {
		t.Fatalf("grants after the budget: %+v", h.Grants())
	}
	// The local grants are written within a second without Close.
	waitFor(t, "the pairing store written", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, storeFileName))
		return strings.Contains(string(b), unused[3].deviceID) && strings.Contains(string(b), `"lastUsedAt"`)
	})
}
