package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
)

// upgradeStatus dials with opts and returns the HTTP status of a refused upgrade (101 when
// accepted).
func upgradeStatus(t *testing.T, url string, opts transport.DialOptions) int {
	t.Helper()
	conn, err := transport.Dial(context.Background(), url, opts)
	if err == nil {
		conn.Close(transport.StatusNormalClosure, "")
		return http.StatusSwitchingProtocols
	}
	var he *transport.HandshakeError
	if !errors.As(err, &he) {
		t.Fatalf("dial: %v", err)
	}
	return he.StatusCode
}

func (h *harness) base() string { return fmt.Sprintf("ws://127.0.0.1:%d", h.WebSocketAddr().Port()) }

func TestUpgradeNoToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	if got := upgradeStatus(t, h.base()+"/ws", transport.DialOptions{}); got != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", got)
	}
}

func TestUpgradeWrongToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.enroll(t, newApp("com.example.app").local())
	if got := upgradeStatus(t, h.base()+"/ws?token="+pairing.NewToken(24), transport.DialOptions{}); got != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", got)
	}
}

func TestUpgradeWrongPath(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	res := h.enroll(t, newApp("com.example.app").local())
	if got := upgradeStatus(t, h.base()+"/socket?token="+res.WebSocketToken, transport.DialOptions{}); got != http.StatusNotFound {
		t.Fatalf("status %d, want 404", got)
	}
	// A wrong path does not burn the token.
	if got := upgradeStatus(t, h.wsURL(res), transport.DialOptions{}); got != http.StatusSwitchingProtocols {
		t.Fatalf("status %d, want 101", got)
	}
}

func TestUpgradeReusedToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	res := h.enroll(t, newApp("com.example.app").local())
	if got := upgradeStatus(t, h.wsURL(res), transport.DialOptions{}); got != http.StatusSwitchingProtocols {
		t.Fatalf("first use: %d", got)
	}
	if got := upgradeStatus(t, h.wsURL(res), transport.DialOptions{}); got != http.StatusUnauthorized {
		t.Fatalf("second use: %d, want 401", got)
	}
}

func TestUpgradeExpiredToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	res := h.enroll(t, newApp("com.example.app").local())
	h.clock.Advance(DefaultTokenTTL + time.Second)
	if got := upgradeStatus(t, h.wsURL(res), transport.DialOptions{}); got != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", got)
	}
}

func TestUpgradeBearerToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	res := h.enroll(t, newApp("com.example.app").local())
	hdr := http.Header{"Authorization": {"Bearer " + res.WebSocketToken}}
	if got := upgradeStatus(t, h.base()+"/ws", transport.DialOptions{Header: hdr}); got != http.StatusSwitchingProtocols {
		t.Fatalf("status %d, want 101", got)
	}
}

func TestUpgradeBrowserOrigin(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	res := h.enroll(t, newApp("com.example.app").local())
	hdr := http.Header{"Origin": {"http://evil.example"}}
	if got := upgradeStatus(t, h.wsURL(res), transport.DialOptions{Header: hdr}); got != http.StatusForbidden {
		t.Fatalf("status %d, want 403", got)
	}
}

func TestUpgradeForeignHost(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	res := h.enroll(t, newApp("com.example.app").local())
	status := rawRequest(t, h, "GET /ws?token="+res.WebSocketToken+" HTTP/1.1\r\nHost: rebind.evil.example\r\n"+
		"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	if status != http.StatusForbidden {
		t.Fatalf("status %d, want 403", status)
	}
	for _, host := range []string{"localhost:1", "127.0.0.1", "[::1]:80", "LOCALHOST"} {
		t.Run("loopback "+host, func(t *testing.T) {
			t.Parallel()
			if !loopbackHost(host) {
				t.Errorf("loopbackHost(%q) = false", host)
			}
		})
	}
	for _, host := range []string{"example.com", "10.0.0.1:80", "localhost.evil.example", ""} {
		t.Run("foreign "+host, func(t *testing.T) {
			t.Parallel()
			if loopbackHost(host) {
				t.Errorf("loopbackHost(%q) = true", host)
			}
		})
	}
}

// TestUpgradeEmulatorHost is issue 12.1. An app on the Android emulator (Genymotion)
// enrolls over UDP to 10.0.2.2 (10.0.3.2), which the emulator's NAT delivers to 127.0.0.1,
// then dials ws://10.0.2.2:<port>/ws?token=… : the host sees a loopback peer and
// "Host: 10.0.2.2:<port>". It gets a session; real foreign Hosts, and any Origin, are
// still refused.
func TestUpgradeEmulatorHost(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	port := h.WebSocketAddr().Port()
	// The emulator's NAT: whatever the URL says, the TCP connection goes to the host's
	// loopback listener.
	nat := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", h.WebSocketAddr().String())
	}}}
	defer nat.CloseIdleConnections()
	for _, alias := range []string{"10.0.2.2", "10.0.3.2"} {
		t.Run(alias, func(t *testing.T) {
			a := newApp("com.example.emulated." + strings.ReplaceAll(alias, ".", ""))
			res := h.enroll(t, a.local())
			url := fmt.Sprintf("ws://%s:%d/ws?token=%s", alias, port, res.WebSocketToken)
			// Browsers always send Origin: refused, and the token is not used up.
			if got := upgradeStatus(t, url, transport.DialOptions{HTTPClient: nat, Header: http.Header{"Origin": {"http://" + alias}}}); got != http.StatusForbidden {
				t.Fatalf("with Origin: %d, want 403", got)
			}
			conn, err := transport.Dial(context.Background(), url, transport.DialOptions{HTTPClient: nat})
			if err != nil {
				t.Fatalf("upgrade with Host %s:%d: %v", alias, port, err)
			}
			defer conn.Close(transport.StatusNormalClosure, "")
			if got := control(t, conn, sdkOpen); !strings.Contains(got, `"success":true`) {
				t.Fatalf("session.open: %s", got)
			}
			if s := h.sessionFor(t, a.appID); s.Info().RemoteAddr != "127.0.0.1" {
				t.Fatalf("remote %q", s.Info().RemoteAddr)
			}
		})
	}
	// The rule: the aliases stand for this machine only when the peer is loopback (an
	// emulator's NAT); other private addresses are foreign.
	lo, lan := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("192.168.1.20")
	for _, tc := range []struct {
		host string
		peer netip.Addr
		want bool
	}{
		{"10.0.2.2:56500", lo, true}, {"10.0.3.2", lo, true}, {"127.0.0.1:56500", lo, true},
		{"[::ffff:127.0.0.1]:1", lan, true}, {"localhost", lan, true},
		{"10.0.2.2:56500", lan, false}, {"10.0.3.2:56500", netip.MustParseAddr("::ffff:10.0.2.15"), false},
		{"10.0.2.3:56500", lo, false}, {"10.0.2.22", lo, false}, {"rebind.evil.example", lo, false},
		{"10.0.2.2.evil.example", lo, false}, {"", lo, false},
	} {
		t.Run(tc.host+" from "+tc.peer.String(), func(t *testing.T) {
			t.Parallel()
			if got := localHost(tc.host, tc.peer); got != tc.want {
				t.Errorf("localHost(%q, %s) = %v, want %v", tc.host, tc.peer, got, tc.want)
			}
		})
	}
}

// rawRequest sends a hand-written HTTP request and returns the response status.
func rawRequest(t *testing.T, h *harness, req string) int {
	t.Helper()
	c, err := net.Dial("tcp", h.WebSocketAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// No deadline: the host answers however long a busy machine takes.
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestOversizedHeader(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.MaxHeaderBytes = 1024 })
	status := rawRequest(t, h, "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: "+strings.Repeat("a", 8192)+"\r\n\r\n")
	if status != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("status %d, want 431", status)
	}
}

func TestSlowHandshake(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.HandshakeTimeout = 50 * time.Millisecond })
	c, err := net.Dial("tcp", h.WebSocketAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\n")) // never finishes its headers
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 512)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue // a 408 may come first
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the server kept a slow handshake open")
		}
		return // closed by the server
	}
}

func TestOversizedMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.MaxMessageBytes = 1024 })
	conn := h.connect(t, newApp("com.example.app"))
	sess := h.sessionFor(t, "com.example.app")
	readErr := readAsync(conn)
	if err := conn.Write(context.Background(), transport.MessageText, []byte(`{"type":"CLIENT_LOG","data":"`+strings.Repeat("x", 4096)+`"}`)); err != nil {
		t.Fatal(err)
	}
	if err := <-readErr; closeCode(err) != transport.StatusMessageTooBig {
		t.Fatalf("got %v, want close 1009", err)
	}
	waitFor(t, "disconnected", func() bool { return sess.State() == StateDisconnected })
}

// TestMaxSessions: a full table takes a newcomer in place of a session nobody calls (see
// budget.go), which is told why; it never holds more than MaxSessions. The 503 of a table
// whose sessions all have a call running is test/hostile's TestSessionSquatters/AllBusy.
func TestMaxSessions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.MaxSessions = 1 })
	ended := readAsync(h.connect(t, newApp("com.example.one")))
	h.sessionFor(t, "com.example.one")
	readAsync(h.connect(t, newApp("com.example.two")))
	h.sessionFor(t, "com.example.two")
	if err := <-ended; closeCode(err) != transport.StatusNormalClosure || !strings.Contains(err.Error(), "least recently used") {
		t.Fatalf("the displaced session ended with %v", err)
	}
	waitFor(t, "one session connected", func() bool { return h.connected("com.example.one")+h.connected("com.example.two") == 1 })
}

// TestMaxSessionsConcurrent: upgrades racing for the last places cannot all pass the
// check: each admitted one holds its place from the check until its session is attached
// (a place being taken is never displaced), and two upgrades never displace the same
// session (each displaced one counted once: before, the table could end with 7 of 2), so
// the table ends with MaxSessions sessions.
func TestMaxSessionsConcurrent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.MaxSessions = 2 })
	var urls []string
	for i := range 8 {
		urls = append(urls, h.wsURL(h.enroll(t, newApp(fmt.Sprintf("com.example.app%d", i)).local())))
	}
	var (
		mu      sync.Mutex
		conns   []transport.Conn
		refused int
		wg      sync.WaitGroup
	)
	for _, u := range urls {
		wg.Go(func() {
			c, err := transport.Dial(context.Background(), u, transport.DialOptions{})
			mu.Lock()
			defer mu.Unlock()
			if he, ok := errors.AsType[*transport.HandshakeError](err); ok && he.StatusCode == http.StatusServiceUnavailable {
				refused++
			} else if err != nil {
				t.Error(err)
			} else {
				conns = append(conns, c)
				readAsync(c) // a displaced connection's close completes
			}
		})
	}
	wg.Wait()
	defer func() {
		for _, c := range conns {
			c.Close(transport.StatusNormalClosure, "")
		}
	}()
	if len(conns) < 2 || len(conns)+refused != len(urls) {
		t.Fatalf("%d upgrades accepted, %d refused, of %d", len(conns), refused, len(urls))
	}
	// Displaced connections close as their newcomers attach; then two are left.
	waitFor(t, "two sessions connected", func() bool {
		n := 0
		for _, s := range h.Sessions() {
			if s.State() == StateConnected {
				n++
			}
		}
		h.mu.Lock()
		total := h.occupied.total
		h.mu.Unlock()
		return n == 2 && total == 2
	})
}

func TestLocalModeFromNonLoopback(t *testing.T) {
	t.Parallel()
	st, _ := openStore("")
	req := newApp("com.example.app").local()
	for _, src := range []string{"192.168.1.10", "10.0.2.15", "::ffff:192.168.1.10", "fe80::1", "2001:db8::1"} {
		t.Run(src, func(t *testing.T) {
			if got := authorize(st, req, netip.MustParseAddr(src), time.Now()); got.reason != pairing.ReasonLocalEnrollmentUnavailable || got.grant != nil {
				t.Errorf("local from %s: %s", src, got.reason)
			}
		})
	}
	if len(st.data.Grants) != 0 {
		t.Fatal("a grant was created")
	}
}

func TestInviteExpired(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	inv, code, _ := h.IssueInvite(InviteOptions{AppID: "com.example.app", Duration: time.Hour})
	doc, _ := pairing.ParseInvite(code)
	h.clock.Advance(time.Hour + time.Second)
	res := h.enroll(t, newApp("com.example.app").invite(inv.ID, doc.Invite.Enrollment.AccessToken))
	if res.Accepted || res.Reason != pairing.ReasonEnrollmentExpired {
		t.Fatalf("%+v", res)
	}
}

// TestInviteDurationBounded: a pairing longer than pairing.MaxGrantLifetime is refused, not
// cut to it (the control API reported success with 90 days for a request of 100).
func TestInviteDurationBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	if _, _, err := h.IssueInvite(InviteOptions{AppID: "com.example.app", Duration: 100 * 24 * time.Hour}); err == nil || !strings.Contains(err.Error(), "at most 90 days") {
		t.Fatalf("100 days: %v", err)
	}
	inv, _, err := h.IssueInvite(InviteOptions{AppID: "com.example.app", Duration: pairing.MaxGrantLifetime})
	if err != nil || !inv.GrantExpiresAt.Equal(inv.IssuedAt.Add(pairing.MaxGrantLifetime)) {
		t.Fatalf("90 days: %+v, %v", inv, err)
	}
}

func TestInviteConsumed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	inv, code, _ := h.IssueInvite(InviteOptions{AppID: pairing.AnyApp})
	doc, _ := pairing.ParseInvite(code)
	secret := doc.Invite.Enrollment.AccessToken
	if res := h.enroll(t, newApp("com.example.one").invite(inv.ID, secret)); !res.Accepted {
		t.Fatal(res.Reason)
	}
	res := h.enroll(t, newApp("com.example.two").invite(inv.ID, secret))
	if res.Accepted || res.Reason != pairing.ReasonEnrollmentConsumed {
		t.Fatalf("%+v", res)
	}
	if got := h.ListInvites(); len(got) != 1 || got[0].Uses != 1 {
		t.Fatalf("invites %+v", got)
	}
}

func TestEnrollmentFlood(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.EnrollmentBurst = 3; o.EnrollmentInterval = time.Second })
	src := netip.MustParseAddrPort("127.0.0.1:50000")
	other := netip.MustParseAddrPort("127.0.0.2:50000")
	dg, _ := newApp("com.example.app").local().Marshal()
	answered := 0
	for range 20 {
		if h.handleDatagram(dg, src) != nil {
			answered++
		}
	}
	if answered != 3 {
		t.Fatalf("%d of 20 answered, want the burst of 3", answered)
	}
	if h.handleDatagram(dg, other) == nil {
		t.Fatal("another source was limited too")
	}
	h.clock.Advance(time.Second)
	if h.handleDatagram(dg, src) == nil || h.handleDatagram(dg, src) != nil {
		t.Fatal("want exactly one more after one interval")
	}
}

func TestMalformedDatagramsDropped(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.EnrollmentBurst = 1000 })
	src := netip.MustParseAddrPort("127.0.0.1:50000")
	for _, dg := range []string{
		``, `{}`, `[]`, `null`, `{"type":"ENROLLMENT_CONNECT","ver":1}`,
		`{"type":"ENROLLMENT_CONNECT","ver":"2","requestId":"r","inviteId":"","appId":"a","deviceId":"d","deviceName":"n","accessToken":"t"}`,
		`{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"r","inviteId":"","appId":"a","deviceId":"d","accessToken":"t"}`,
		`{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"","inviteId":"","appId":"a","deviceId":"d","deviceName":"n","accessToken":"t"}`,
		`{"type":"CONNECT_REQ","ver":2}`,
	} {
		if r := h.handleDatagram([]byte(dg), src); r != nil {
			t.Errorf("%s answered with %s", dg, r)
		}
	}
	// Over real UDP: the malformed datagram gets nothing, so the first reply read is the
	// valid request's (datagrams are handled in order).
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(h.DiscoveryAddr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(`{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"bad"}`))
	good := newApp("com.example.app").local()
	b, _ := good.Marshal()
	c.Write(b)
	c.SetReadDeadline(time.Time{})
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := pairing.ParseEnrollmentResult(buf[:n]); err != nil || res.RequestID != good.RequestID {
		t.Fatalf("first reply %s (%v)", buf[:n], err)
	}
}

// TestEnrollmentResultBytes checks the exact reply the SDKs parse: all 13 keys in order,
// required ones non-null, nulls where the reference writes nulls.
func TestEnrollmentResultBytes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	req := `{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"r1","enrollmentMode":"local","inviteId":"local:com.example.app","appId":"com.example.app","deviceId":"d1","deviceName":"Dev","accessToken":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"}`
	got := string(h.udpExchange(t, []byte(req)))
	res, _ := pairing.ParseEnrollmentResult([]byte(got))
	want := fmt.Sprintf(`{"type":"ENROLLMENT_RESULT","ver":2,"requestId":"r1","accepted":true,"reason":"Ok","reasonMessage":"Device registered.","hostId":"%s","hostName":"test-host","hostWifiName":null,"message":"Connection accepted. WebSocket issued on port %d.","webSocketPort":%d,"webSocketPath":"/ws","webSocketToken":"%s"}`,
		h.HostID(), h.WebSocketAddr().Port(), h.WebSocketAddr().Port(), res.WebSocketToken)
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	req = strings.Replace(req, `"local"`, `"remote"`, 1)
	got = string(h.udpExchange(t, []byte(req)))
	want = fmt.Sprintf(`{"type":"ENROLLMENT_RESULT","ver":2,"requestId":"r1","accepted":false,"reason":"EnrollmentModeUnsupported","reasonMessage":"The enrollment mode is not supported by this host.","hostId":"%s","hostName":"test-host","hostWifiName":null,"message":"The enrollment mode is not supported by this host.","webSocketPort":null,"webSocketPath":null,"webSocketToken":null}`, h.HostID())
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestPairingStoreFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	h := newHarness(t, func(o *Options) { o.StateDir = dir })
	a := newApp("com.example.app")
	h.enroll(t, a.local())
	hostID := h.HostID()
	h.Close() // a new local grant is written within a second, or at Close
	fi, err := os.Stat(filepath.Join(dir, storeFileName))
	if err != nil {
		t.Fatal(err)
	}
	di, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes %v %v", fi.Mode().Perm(), di.Mode().Perm())
	}
	b, _ := os.ReadFile(filepath.Join(dir, storeFileName))
	if strings.Contains(string(b), a.token) || !strings.Contains(string(b), pairing.HashToken(a.token)) {
		t.Fatal("the store must hold the token's hash, never the token")
	}
	// A new server on the same directory knows the grant and the host id.
	h2 := newHarness(t, func(o *Options) { o.StateDir = dir })
	if h2.HostID() != hostID || len(h2.Grants()) != 1 {
		t.Fatalf("reloaded: %s %+v", h2.HostID(), h2.Grants())
	}
	if r := h2.enroll(t, app{a.appID, a.deviceID, pairing.NewToken(32), a.psid}.local()); r.Reason != pairing.ReasonAccessTokenInvalid {
		t.Fatalf("other token after reload: %s", r.Reason)
	}
	os.WriteFile(filepath.Join(dir, storeFileName), []byte(`{"schema":`), 0o600)
	if _, err := New(Options{StateDir: dir}); err == nil {
		t.Fatal("corrupt store accepted")
	}
}

func TestNonLoopbackNeedsLAN(t *testing.T) {
	t.Parallel()
	if _, err := New(Options{ListenAddr: "0.0.0.0:0"}); err == nil {
		t.Fatal("non-loopback listener without LAN")
	}
	if _, err := New(Options{ListenAddr: "0.0.0.0:0", DiscoveryAddr: "0.0.0.0:0", LAN: true}); err != nil {
		t.Fatal(err)
	}
}
