package host

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

func TestLocalEnrollment(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	a := newApp("com.example.app")
	res := h.enroll(t, a.local())
	if !res.Accepted || res.Reason != pairing.ReasonOK || res.WebSocketPort != int(h.WebSocketAddr().Port()) ||
		res.WebSocketPath != "/ws" || len(res.WebSocketToken) != 32 || res.HostID != h.HostID() || res.HostName != "test-host" {
		t.Fatalf("result %+v", res)
	}
	grants := h.Grants()
	if len(grants) != 1 || grants[0].Mode != GrantLocal || grants[0].MaxToolPolicy != wire.PolicyWrite ||
		grants[0].ExpiresAt.Sub(grants[0].CreatedAt) != 90*24*time.Hour || !strings.HasPrefix(grants[0].ConfigID, "local:") {
		t.Fatalf("grants %+v", grants)
	}
	// Same installation again: same grant, new token.
	res2 := h.enroll(t, a.local())
	if !res2.Accepted || res2.WebSocketToken == res.WebSocketToken || len(h.Grants()) != 1 {
		t.Fatalf("second enrollment %+v", res2)
	}
}

func TestInviteEnrollment(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	inv, code, err := h.IssueInvite(InviteOptions{AppID: "com.example.app"})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := pairing.ParseInvite(code)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Invite.Check("com.example.app", h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if doc.Invite.Host.DiscoveryPort != int(h.DiscoveryAddr().Port()) || doc.Invite.Enrollment.MaxToolPolicy != wire.PolicyRead ||
		doc.Invite.ExpiresAt.Sub(doc.Invite.IssuedAt) != 24*time.Hour || doc.Invite.Enrollment.GrantExpiresAt.Sub(doc.Invite.IssuedAt) != 30*24*time.Hour {
		t.Fatalf("invite %+v", doc.Invite)
	}
	if inv.Document == nil || h.ListInvites()[0].Document != nil {
		t.Fatal("the document (with its secret) must come from IssueInvite only")
	}
	a := newApp("com.example.app")
	secret := doc.Invite.Enrollment.AccessToken
	res := h.enroll(t, a.invite(inv.ID, secret))
	if !res.Accepted {
		t.Fatalf("rejected: %s", res.Reason)
	}
	g := h.Grants()
	if len(g) != 1 || g[0].Mode != GrantInvite || g[0].ConfigID != inv.ID || g[0].MaxToolPolicy != wire.PolicyRead {
		t.Fatalf("grants %+v", g)
	}
	// The enrolled device keeps reconnecting with the same secret, even after the invite
	// expired; another device cannot use the consumed invite.
	if res := h.enroll(t, newApp("com.example.app").invite(inv.ID, secret)); res.Reason != pairing.ReasonEnrollmentConsumed {
		t.Fatalf("second device: %s", res.Reason)
	}
	h.clock.Advance(25 * time.Hour)
	if res := h.enroll(t, a.invite(inv.ID, secret)); !res.Accepted {
		t.Fatalf("reconnect rejected: %s", res.Reason)
	}
}

func TestAnyAppInviteLifetime(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	inv, _, err := h.IssueInvite(InviteOptions{AppID: pairing.AnyApp, MaxToolPolicy: wire.PolicyWrite})
	if err != nil {
		t.Fatal(err)
	}
	if inv.ExpiresAt.Sub(inv.IssuedAt) != 10*time.Minute || inv.AppName != "Any Ansight app" || inv.MaxToolPolicy != wire.PolicyWrite {
		t.Fatalf("%+v", inv)
	}
	if _, _, err := h.IssueInvite(InviteOptions{AppID: "x", MaxToolPolicy: "admin"}); err == nil {
		t.Fatal("bad policy accepted")
	}
	if _, _, err := h.IssueInvite(InviteOptions{}); err == nil {
		t.Fatal("missing app id accepted")
	}
}

// TestReasonCodes drives the enrollment decision for every reason the reference emits.
func TestReasonCodes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.MaxTokens = 1000 })
	remote := netip.MustParseAddr("192.0.2.7")
	issue := func(appID string) (string, string) {
		inv, code, err := h.IssueInvite(InviteOptions{AppID: appID})
		if err != nil {
			t.Fatal(err)
		}
		doc, _ := pairing.ParseInvite(code)
		return inv.ID, doc.Invite.Enrollment.AccessToken
	}
	run := func(req *pairing.EnrollmentConnect, src netip.Addr) pairing.Reason {
		return h.enroll1(req, src)
	}

	a := newApp("com.example.app")
	revoked := newApp("com.example.app")
	run(revoked.local(), loopback)
	h.Revoke(h.grantOf(t, revoked.deviceID))
	expiredInvite, expiredSecret := issue("com.example.app")
	usedInvite, usedSecret := issue("com.example.app")
	run(newApp("com.example.app").invite(usedInvite, usedSecret), remote)
	regExpired := newApp("com.example.app")
	shortInv, err := func() (Invite, error) {
		inv, code, err := h.IssueInvite(InviteOptions{AppID: "com.example.app", Duration: time.Hour})
		doc, _ := pairing.ParseInvite(code)
		regExpired.token = doc.Invite.Enrollment.AccessToken
		return inv, err
	}()
	if err != nil {
		t.Fatal(err)
	}
	if r := run(regExpired.invite(shortInv.ID, regExpired.token), remote); r != pairing.ReasonOK {
		t.Fatal(r)
	}
	wrongApp, wrongAppSecret := issue("com.other.app")
	goodInvite, goodSecret := issue("com.example.app")

	h.clock.Advance(2 * time.Hour) // regExpired's one-hour grant is over; invites last 24 h
	mode := a.local()
	mode.EnrollmentMode = "qr"
	blankApp := a.local()
	blankApp.AppID = " "
	starApp := a.local()
	starApp.AppID = "*"
	blankToken := a.local()
	blankToken.AccessToken = ""
	starInvite := a.invite(goodInvite, goodSecret)
	starInvite.AppID = "*"

	cases := []struct {
		name string
		req  *pairing.EnrollmentConnect
		src  netip.Addr
		want pairing.Reason
	}{
		{"local ok", a.local(), loopback, pairing.ReasonOK},
		{"local ipv4-mapped loopback", a.local(), netip.MustParseAddr("::ffff:127.0.0.1"), pairing.ReasonOK},
		{"local ipv6 loopback", a.local(), netip.MustParseAddr("::1"), pairing.ReasonOK},
		{"mode unsupported", mode, loopback, pairing.ReasonEnrollmentModeUnsupported},
		{"local from the network", a.local(), remote, pairing.ReasonLocalEnrollmentUnavailable},
		{"local blank app", blankApp, loopback, pairing.ReasonLocalEnrollmentInvalid},
		{"local any app", starApp, loopback, pairing.ReasonLocalEnrollmentInvalid},
		{"local blank token", blankToken, loopback, pairing.ReasonLocalEnrollmentInvalid},
		{"local revoked", revoked.local(), loopback, pairing.ReasonRegistrationRevoked},
		{"local other token", app{a.appID, a.deviceID, pairing.NewToken(32), a.psid}.local(), loopback, pairing.ReasonAccessTokenInvalid},
		{"invite unknown", a.invite("nope", goodSecret), remote, pairing.ReasonEnrollmentRequired},
		{"invite other app", a.invite(wrongApp, wrongAppSecret), remote, pairing.ReasonEnrollmentRequired},
		{"invite any-app id", starInvite, remote, pairing.ReasonEnrollmentRequired},
		{"invite blank", a.invite("", ""), remote, pairing.ReasonEnrollmentRequired},
		{"invite consumed", a.invite(usedInvite, usedSecret), remote, pairing.ReasonEnrollmentConsumed},
		{"invite wrong secret", a.invite(goodInvite, pairing.NewToken(32)), remote, pairing.ReasonAccessTokenInvalid},
		{"invite registration expired", regExpired.invite(shortInv.ID, regExpired.token), remote, pairing.ReasonRegistrationExpired},
		{"invite ok", a.invite(goodInvite, goodSecret), remote, pairing.ReasonOK},
		{"invite reconnect wrong token", a.invite(goodInvite, pairing.NewToken(32)), remote, pairing.ReasonAccessTokenInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(tc.req, tc.src); got != tc.want {
				t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
			}
		})
	}
	h.clock.Advance(23 * time.Hour)
	if got := run(a.invite(expiredInvite, expiredSecret), remote); got != pairing.ReasonEnrollmentExpired {
		t.Errorf("invite expired: %s", got)
	}
}

// enroll1 runs the enrollment decision for a source address of the test's choosing: a
// test cannot send UDP from a non-loopback address.
func (h *harness) enroll1(req *pairing.EnrollmentConnect, src netip.Addr) pairing.Reason {
	return enrollDirect(h.Server, req, src).Reason
}

// enrollDirect answers req as if it came from src (port 40000), without UDP and without
// the rate limit; an answer that does not parse comes back as a Reason saying so.
func enrollDirect(s *Server, req *pairing.EnrollmentConnect, src netip.Addr) *pairing.EnrollmentResult {
	b, err := req.Marshal()
	if err != nil {
		return &pairing.EnrollmentResult{Reason: pairing.Reason("encode: " + err.Error())}
	}
	reply := s.answerBatch([]queuedDatagram{{src: netip.AddrPortFrom(src, 40000), data: b}})[0]
	res, err := pairing.ParseEnrollmentResult(reply)
	if err != nil {
		return &pairing.EnrollmentResult{Reason: pairing.Reason("no result: " + err.Error())}
	}
	return res
}

// TestTokenBudget: the newest enrollment always gets a token. A grant's fifth unused
// token drops its first; a full table drops the oldest token of all.
func TestTokenBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.MaxTokens = 6 })
	a := newApp("com.example.app")
	var urls []string
	for range maxTokensPerGrant + 1 {
		r := h.enroll(t, a.local())
		if !r.Accepted {
			t.Fatal(r.Reason)
		}
		urls = append(urls, h.wsURL(r))
	}
	if got := upgradeStatus(t, urls[0], transport.DialOptions{}); got != http.StatusUnauthorized {
		t.Fatalf("a grant's fifth token left its first working (status %d)", got)
	}
	others := []string{h.wsURL(h.enroll(t, newApp("com.example.b").local())), h.wsURL(h.enroll(t, newApp("com.example.c").local()))}
	// Six tokens: a's four and the two others. One more drops a's oldest (urls[1]).
	last := h.wsURL(h.enroll(t, newApp("com.example.d").local()))
	if got := upgradeStatus(t, urls[1], transport.DialOptions{}); got != http.StatusUnauthorized {
		t.Fatalf("a full table kept its oldest token (status %d)", got)
	}
	for _, u := range append(append(urls[2:], others...), last) {
		if got := upgradeStatus(t, u, transport.DialOptions{}); got != http.StatusSwitchingProtocols {
			t.Fatalf("a newer token was dropped (status %d)", got)
		}
	}
}

func (h *harness) grantOf(t *testing.T, deviceID string) string {
	for _, g := range h.Grants() {
		if g.DeviceID == deviceID {
			return g.ID
		}
	}
	t.Fatalf("no grant for %s", deviceID)
	return ""
}

// TestEnrollmentAnsweredNotIgnored is issue 12.6 and 19.7 over real UDP with the official
// SDKs' datagrams: what the official host answers (or should) gets an ENROLLMENT_RESULT
// with a reason instead of silence, which the SDK cannot tell from a host that is not
// there; a long device name is cut, not a reason to drop the request.
func TestEnrollmentAnsweredNotIgnored(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	const dotnet = `{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"q1w2e3r4t5y6u7i8o9p0aa","enrollmentMode":"local","inviteId":"local:com.example.app","appId":"com.example.app","deviceId":"Zm9vYmFyYmF6cXV4cXV1eA","deviceName":"Dev Laptop","accessToken":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","processSessionId":"0f1e2d3c4b5a69788796a5b4c3d2e1f0"}`
	for _, tc := range []struct {
		name, datagram string
		want           pairing.Reason
	}{
		{"NullMode", strings.Replace(dotnet, `"local"`, `null`, 1), pairing.ReasonEnrollmentModeUnsupported},
		{"DuplicateAppID", strings.Replace(dotnet, `"appId":"com.example.app"`, `"appId":"com.example.app","appId":"com.bank.app"`, 1), pairing.ReasonLocalEnrollmentInvalid},
		{"LongToken", strings.Replace(dotnet, `"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"`, `"`+strings.Repeat("A", 700)+`"`, 1), pairing.ReasonLocalEnrollmentInvalid},
		{"LongInviteMode", strings.Replace(strings.Replace(dotnet, `"local"`, `"invite"`, 1), `"local:com.example.app"`, `"`+strings.Repeat("i", 600)+`"`, 1), pairing.ReasonEnrollmentRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := pairing.ParseEnrollmentResult(h.udpExchange(t, []byte(tc.datagram)))
			if err != nil {
				t.Fatal(err)
			}
			if res.Accepted || res.Reason != tc.want || res.RequestID != "q1w2e3r4t5y6u7i8o9p0aa" || res.ReasonMessage == "" {
				t.Fatalf("got %+v, want %s", res, tc.want)
			}
		})
	}
	if n := len(h.store.data.Grants); n != 0 {
		t.Fatalf("%d grants made by refused requests", n)
	}

	// 19.7: a device name over the 512-byte field cap is display text, cut to 120
	// characters, and the request goes through.
	long := strings.Repeat("Émulateur Pixel ", 50) // 800 characters
	res, err := pairing.ParseEnrollmentResult(h.udpExchange(t, []byte(strings.Replace(dotnet, `"Dev Laptop"`, `"`+long+`"`, 1))))
	if err != nil || !res.Accepted {
		t.Fatalf("long deviceName: %+v %v", res, err)
	}
	conn := h.dial(t, res)
	writeText(t, conn, sdkOpen)
	name := h.sessionFor(t, "com.example.app").Info().DeviceName
	if want := strings.TrimSpace(string([]rune(long)[:pairing.MaxDeviceNameLength])); name != want {
		t.Fatalf("device name %q, want %q", name, want)
	}
}
