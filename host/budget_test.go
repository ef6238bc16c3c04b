package host

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
)

// TestLimiterNewcomer: a full table forgets the source seen least recently, so a new
// source always gets its burst, and a source that keeps sending stays limited.
func TestLimiterNewcomer(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 30, 1, 0, 0, 0, time.UTC)
	l := newRateLimiter[netip.Addr](2, time.Second)
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
// session of the app holding the most, while that app holds two more than the newcomer's
// (shares converge); at equal shares, of the least recently used session, told why.
func TestSessionsFairShare(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.MaxSessions = 4 })
	var ends []<-chan error
	// The upgrade answers before the session is attached (and its connection time taken):
	// the clock moves on only once it is, so that the sessions are ordered as connected.
	for k := range 4 {
		h.clock.Advance(time.Second)
		ends = append(ends, readAsync(h.connect(t, newApp("com.example.greedy"))))
		waitFor(t, "the greedy session attached", func() bool { return h.connected("com.example.greedy") == k+1 })
	}
	for i := range 2 {
		h.clock.Advance(time.Second)
		readAsync(h.connect(t, newApp("com.example.newcomer")))
		select {
		case err := <-ends[i]:
			if closeCode(err) != transport.StatusNormalClosure || !strings.Contains(err.Error(), "more than its share") {
				t.Fatalf("the displaced session ended with %v", err)
			}
		case <-t.Context().Done():
			t.Fatalf("newcomer %d: the oldest greedy session was not displaced", i)
		}
		waitFor(t, "the displaced session detached", func() bool { return h.connected("com.example.greedy") == 3-i })
		waitFor(t, "the newcomer attached", func() bool { return h.connected("com.example.newcomer") == i+1 })
	}
	// Two each: equal shares. The least recently used session makes room: none was
	// called, so the one connected first (a greedy one).
	h.clock.Advance(time.Second)
	readAsync(h.connect(t, newApp("com.example.newcomer")))
	select {
	case err := <-ends[2]:
		if closeCode(err) != transport.StatusNormalClosure || !strings.Contains(err.Error(), "least recently used") {
			t.Fatalf("the displaced session ended with %v", err)
		}
	case <-t.Context().Done():
		t.Fatal("at equal shares, the least recently used session was not displaced")
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

// TestLimiterPerSender: the enrollment rate is per sender (address and port): apps on one
// machine, all on 127.0.0.1, each get their burst; a network address shares addressShare
// senders' budgets among its ports.
func TestLimiterPerSender(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 30, 1, 0, 0, 0, time.UTC)
	l := newEnrollLimiter(2, time.Second)
	answered := func(src netip.AddrPort, n int) int {
		ok := 0
		for range n {
			if l.allow(src, now) {
				ok++
			}
		}
		return ok
	}
	for port := range uint16(100) {
		if got := answered(netip.AddrPortFrom(loopback, 40000+port), 5); got != 2 {
			t.Fatalf("loopback port %d: %d of 5 allowed, want its burst of 2", port, got)
		}
	}
	mapped := netip.AddrPortFrom(netip.AddrFrom16(loopback.As16()), 40000) // ::ffff:127.0.0.1
	if got := answered(mapped, 1); got != 0 {
		t.Fatal("an IPv4-mapped source got a budget of its own")
	}
	remote := netip.MustParseAddr("192.0.2.7")
	total := 0
	for port := range uint16(100) {
		total += answered(netip.AddrPortFrom(remote, 40000+port), 5)
	}
	if total != 2*addressShare {
		t.Fatalf("a network address got %d answers over 100 ports, want %d", total, 2*addressShare)
	}
	now = now.Add(time.Second)
	total = 0
	for port := range uint16(100) {
		total += answered(netip.AddrPortFrom(remote, 40000+port), 1)
	}
	if total != addressShare {
		t.Fatalf("a second later the network address got %d more, want %d", total, addressShare)
	}
}

// TestManyAppsAtOnce is issue 17.4 over real UDP: 100 apps on this machine send
// ENROLLMENT_CONNECT at the same moment, each from its own socket, while one more socket
// sends 300 datagrams of one installation: every app is answered and accepted, the flooder
// only its burst (the harness's clock stands still, so nothing refills).
func TestManyAppsAtOnce(t *testing.T) {
	h := newHarness(t, nil)
	const apps = 100
	type sent struct {
		conn *net.UDPConn
		id   string
	}
	var all []sent
	var datagrams [][]byte
	for i := range apps {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		req := newApp(fmt.Sprintf("com.example.app%03d", i)).local()
		b, _ := req.Marshal()
		all, datagrams = append(all, sent{c, req.RequestID}), append(datagrams, b)
	}
	flooder, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer flooder.Close()
	greedy := newApp("com.example.greedy")
	to := h.DiscoveryAddr()
	for i, a := range all {
		if _, err := a.conn.WriteToUDPAddrPort(datagrams[i], to); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			b, _ := greedy.local().Marshal()
			flooder.WriteToUDPAddrPort(b, to)
		}
	}
	for i, a := range all {
		a.conn.SetReadDeadline(time.Time{})
		buf := make([]byte, 4096)
		n, err := a.conn.Read(buf)
		if err != nil {
			t.Fatalf("app %d got no answer: %v", i, err)
		}
		res, err := pairing.ParseEnrollmentResult(buf[:n])
		if err != nil || res.RequestID != a.id || !res.Accepted {
			t.Fatalf("app %d: %+v (%v)", i, res, err)
		}
	}
	flooded := 0
	buf := make([]byte, 4096)
	for {
		flooder.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		if _, err := flooder.Read(buf); err != nil {
			break
		}
		flooded++
	}
	if flooded != DefaultEnrollmentBurst {
		t.Errorf("the flooder got %d answers, want its burst of %d", flooded, DefaultEnrollmentBurst)
	}
	st := h.EnrollmentStats()
	if st.Received != apps+3*apps || st.RateLimited != 3*apps-DefaultEnrollmentBurst || st.Answered != apps+DefaultEnrollmentBurst {
		t.Errorf("stats %+v", st)
	}
	if st.ReceiveBuffer == 0 || st.ReceiveBufferAsked != DefaultEnrollmentReadBuffer {
		t.Errorf("receive buffer %+v", st)
	}
}

// occupancyByScan counts what admitLocked's counters stand for by a scan of the registry:
// connected sessions and admitted upgrades, in all and per grant.
func (h *harness) occupancyByScan() occupancy {
	h.mu.Lock()
	defer h.mu.Unlock()
	o := occupancy{ofGrant: map[string]int{}}
	for _, sess := range h.sessions {
		if sess.current() != nil {
			o.add(sess.grantID, 1)
		}
	}
	for u := range h.upgrading {
		o.add(u.grantID, 1)
	}
	return o
}

func (h *harness) occupancy() occupancy {
	h.mu.Lock()
	defer h.mu.Unlock()
	return occupancy{total: h.occupied.total, ofGrant: maps.Clone(h.occupied.ofGrant)}
}

// TestOccupancyMatchesRegistry: the session budget's counters follow connections,
// disconnections and a connection replaced by a newer one of the same process.
func TestOccupancyMatchesRegistry(t *testing.T) {
	h := newHarness(t, nil)
	same := func(what string) {
		t.Helper()
		waitFor(t, what, func() bool {
			got, want := h.occupancy(), h.occupancyByScan()
			return got.total == want.total && maps.Equal(got.ofGrant, want.ofGrant)
		})
	}
	a, b := newApp("com.example.a"), newApp("com.example.b")
	connA := h.connect(t, a)
	endA := readAsync(connA)
	readAsync(h.connect(t, b))
	// An upgrade is answered before its session attaches: a's second connection must come
	// after its first attached, or it could attach first and be the one replaced.
	waitFor(t, "a and b attached", func() bool { return h.connected(a.appID) == 1 && h.connected(b.appID) == 1 })
	same("two sessions")
	if got := h.occupancy(); got.total != 2 {
		t.Fatalf("counted %+v with two sessions", got)
	}
	readAsync(h.connect(t, a)) // the same process again: replaces a's connection
	select {
	case <-endA:
	case <-t.Context().Done():
		t.Fatal("a's first connection was not replaced")
	}
	same("a's connection replaced")
	if got := h.occupancy(); got.total != 2 {
		t.Fatalf("counted %+v after a replaced its connection", got)
	}
	c := newApp("com.example.c")
	connC := h.connect(t, c)
	same("three sessions")
	connC.Close(transport.StatusNormalClosure, "")
	waitFor(t, "c disconnected", func() bool { return h.occupancy().total == 2 })
	same("c disconnected")
}
