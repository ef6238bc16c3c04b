package hostile

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
)

// Enrollment and upgrade attacks: malformed and oversized datagrams, floods, stolen or
// replayed credentials, session hijacking.

// validConnect is a well-formed ENROLLMENT_CONNECT with placeholders for mutation.
const validConnect = `{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"hostile","enrollmentMode":"local","inviteId":"local:dev.ansight.udp","appId":"dev.ansight.udp","deviceId":"dev-1","deviceName":"d","accessToken":"TOKEN","processSessionId":"go.1"}`

// datagramCases must be refused: dropped unanswered (malformed datagrams get no answer:
// docs/protocol/session.md#enrollment),
// or, when only a duplicate name or an over-long string is wrong in an otherwise readable
// request (issue 12.6), answered with refused and no grant.
var datagramCases = []struct {
	name, datagram string
	refused        pairing.Reason // "": dropped
}{
	{"DatagramNotJSON", `ENROLL ME`, ""},
	{"DatagramEmpty", ``, ""},
	{"DatagramDuplicateKey", strings.Replace(validConnect, `"appId":"dev.ansight.udp"`, `"appId":"dev.ansight.udp","appId":"com.bank.app"`, 1), pairing.ReasonLocalEnrollmentInvalid},
	{"DatagramCaseVariantKey", strings.Replace(validConnect, `"appId":"dev.ansight.udp"`, `"appId":"dev.ansight.udp","AppId":"com.bank.app"`, 1), pairing.ReasonLocalEnrollmentInvalid},
	{"DatagramDuplicateRequestID", strings.Replace(validConnect, `"requestId":"hostile"`, `"requestId":"hostile","requestId":"other"`, 1), ""},
	{"DatagramOversizedToken", strings.Replace(validConnect, `"TOKEN"`, `"`+strings.Repeat("T", 513)+`"`, 1), pairing.ReasonLocalEnrollmentInvalid},
	{"DatagramVersionString", strings.Replace(validConnect, `"ver":2`, `"ver":"2"`, 1), ""},
	{"DatagramVersionOutOfRange", strings.Replace(validConnect, `"ver":2`, `"ver":1e400`, 1), ""},
	{"DatagramWrongType", strings.Replace(validConnect, `"ENROLLMENT_CONNECT"`, `"ENROLLMENT_RESULT"`, 1), ""},
	{"DatagramMissingDeviceName", strings.Replace(validConnect, `"deviceName":"d",`, ``, 1), ""},
	{"DatagramTokenNumber", strings.Replace(validConnect, `"accessToken":"TOKEN"`, `"accessToken":12345`, 1), ""},
	{"DatagramDeepNesting", strings.Replace(validConnect, `"deviceName":"d"`, `"deviceName":"d","extra":`+nested(5000, "0"), 1), ""},
	{"DatagramOversized", strings.Replace(validConnect, `"deviceName":"d"`, `"deviceName":"`+strings.Repeat("D", 60000)+`"`, 1), ""},
}

// TestHostileDatagrams sends each malformed datagram followed by a valid enrollment from
// the same socket: the host refuses the first and answers the valid one (it handles
// datagrams in order).
func TestHostileDatagrams(t *testing.T) {
	h := newTestHost(t, nil)
	u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
	id := newIdentity("dev.ansight.udp")
	for _, tc := range datagramCases {
		t.Run(tc.name, func(t *testing.T) {
			u.send(t, []byte(tc.datagram))
			if tc.refused != "" {
				res, err := pairing.ParseEnrollmentResult(u.reply())
				if err != nil || res.Accepted || res.Reason != tc.refused || res.RequestID != "hostile" {
					t.Fatalf("reply %+v (%v), want refused with %s", res, err, tc.refused)
				}
			}
			res := u.enroll(t, id.enrollment()) // fails if the next reply is not to this request
			if !res.Accepted {
				t.Fatalf("the valid enrollment after it was refused: %s", res.Reason)
			}
		})
	}
}

// TestEnrollmentFlood floods the host from one loopback address (127.0.0.2) with valid
// requests: the host answers at most its burst and drops the rest, while an app enrolling
// from another address and an established session are not affected.
func TestEnrollmentFlood(t *testing.T) {
	h := newTestHost(t, func(o *host.Options) { o.EnrollmentBurst, o.EnrollmentInterval = 0, 0 }) // the defaults
	established := connectEvil(t, h, "dev.ansight.established")
	flood := newUDPClient(t, "127.0.0.2", h.DiscoveryAddr())
	attacker := newIdentity("dev.ansight.flood")
	const n = 300
	start := time.Now()
	for range n {
		b, _ := attacker.enrollment().Marshal()
		flood.send(t, b)
	}
	answered := 0
	for flood.receive(500*time.Millisecond) != nil {
		answered++
	}
	// A burst, plus what the one-per-interval refill admits while the flood is sent and
	// read: derived from how long that took, so that a busy machine (slower to read, more
	// refills) does not fail the test, and a missing limit (300 answers) still does.
	refills := int(time.Since(start) / host.DefaultEnrollmentInterval)
	if limit := host.DefaultEnrollmentBurst + 1 + refills; answered > limit {
		t.Errorf("%d of %d flooding datagrams answered, want at most %d", answered, n, limit)
	}
	if answered == 0 {
		t.Error("no flooding datagram was answered: the limit is not per source")
	}
	legit := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
	if res := legit.enroll(t, newIdentity("dev.ansight.legit").enrollment()); !res.Accepted {
		t.Fatalf("enrollment from another address refused during the flood: %s", res.Reason)
	}
	established.alive(t)
}

// TestStolenLocalIdentity: another process presents an app's id and device id with its
// own token; the host refuses it (the first token is bound to the grant).
func TestStolenLocalIdentity(t *testing.T) {
	h := newTestHost(t, nil)
	victim := connectEvil(t, h, "dev.ansight.victim")
	thief := victim.id
	thief.token = pairing.NewToken(32)
	u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
	if res := u.enroll(t, thief.enrollment()); res.Accepted || res.Reason != pairing.ReasonAccessTokenInvalid {
		t.Fatalf("a second token for the same grant: accepted=%v reason %s, want AccessTokenInvalid", res.Accepted, res.Reason)
	}
	victim.alive(t)
}

// TestSessionHijack: an attacker with its own grant for the same app presents the victim's
// processSessionId (visible on the network); it gets a session of its own and the
// victim's session stays connected and working (reference weakness 6, closed).
func TestSessionHijack(t *testing.T) {
	h := newTestHost(t, nil)
	victim := connectEvil(t, h, "dev.ansight.victim")
	attacker := newIdentity(victim.id.appID)
	attacker.psid = victim.id.psid
	u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
	res := u.enroll(t, attacker.enrollment())
	if !res.Accepted {
		t.Fatalf("the attacker's own local grant was refused: %s", res.Reason)
	}
	conn, err := transport.Dial(context.Background(), h.wsURL(res), transport.DialOptions{Header: http.Header{"Authorization": {"Bearer " + res.WebSocketToken}}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(transport.StatusNormalClosure, "")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if _, err := h.WaitSession(ctx, func(s *host.Session) bool { return s != victim.sess }); err != nil {
		t.Fatalf("the attacker's connection made no session: %v", err)
	}
	if victim.sess.State() != host.StateConnected {
		t.Fatal("the victim's session was taken over")
	}
	for _, s := range h.Sessions() {
		if s != victim.sess && s.ID() == victim.sess.ID() {
			t.Fatal("the attacker got the victim's session id")
		}
	}
	victim.alive(t)
}

// TestUpgradeAttacks: a replayed WebSocket token, a browser page (Origin) and a missing
// token are refused before any session exists.
func TestUpgradeAttacks(t *testing.T) {
	h := newTestHost(t, nil)
	u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
	res := u.enroll(t, newIdentity("dev.ansight.upgrade").enrollment())
	bearer := http.Header{"Authorization": {"Bearer " + res.WebSocketToken}}

	withOrigin := bearer.Clone()
	withOrigin.Set("Origin", "https://evil.example")
	wantStatus(t, "browser Origin", h.wsURL(res), withOrigin, http.StatusForbidden)
	wantStatus(t, "no token", h.wsURL(res), nil, http.StatusUnauthorized)
	conn, err := transport.Dial(context.Background(), h.wsURL(res), transport.DialOptions{Header: bearer})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(transport.StatusNormalClosure, "")
	wantStatus(t, "replayed token", h.wsURL(res), bearer, http.StatusUnauthorized)
}

func wantStatus(t *testing.T, what, url string, hdr http.Header, status int) {
	t.Helper()
	conn, err := transport.Dial(context.Background(), url, transport.DialOptions{Header: hdr})
	if err == nil {
		conn.Close(transport.StatusNormalClosure, "")
		t.Fatalf("%s: upgrade accepted, want %d", what, status)
	}
	he, ok := errors.AsType[*transport.HandshakeError](err)
	if !ok || he.StatusCode != status {
		t.Fatalf("%s: %v, want status %d", what, err, status)
	}
}

// TestPlainRequestKeepsToken: plain HTTP requests to /ws carrying a valid token (a POST, a
// GET without the upgrade headers) are refused without using the token up: only a real
// upgrade may consume it, so a local process that sees a token cannot burn it with a
// request the host will not upgrade anyway.
func TestPlainRequestKeepsToken(t *testing.T) {
	h := newTestHost(t, nil)
	u := newUDPClient(t, "127.0.0.1", h.DiscoveryAddr())
	res := u.enroll(t, newIdentity("dev.ansight.plainpost").enrollment())
	if !res.Accepted {
		t.Fatalf("enrollment refused: %s", res.Reason)
	}
	url := "http" + strings.TrimPrefix(h.wsURL(res), "ws")
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		req, _ := http.NewRequest(method, url, strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+res.WebSocketToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode == http.StatusUnauthorized {
			t.Errorf("plain %s /ws: status %d, want a refusal of the request (not of the token)", method, resp.StatusCode)
		}
	}
	conn, err := transport.Dial(context.Background(), h.wsURL(res), transport.DialOptions{
		Header: http.Header{"Authorization": {"Bearer " + res.WebSocketToken}}})
	if err != nil {
		t.Fatalf("the token no longer upgrades after plain requests: %v", err)
	}
	conn.Close(transport.StatusNormalClosure, "")
}

// TestLongDeviceName: an enrollment whose deviceName is over 512 bytes (450 characters,
// some of two and three bytes) is accepted with the name cut to pairing.MaxDeviceNameLength
// characters, as the official host does, where the datagram used to be dropped whole
// (issue 19.7): a display field is truncated, never a reason to refuse the app.
func TestLongDeviceName(t *testing.T) {
	h := newTestHost(t, nil)
	id := newIdentity("dev.ansight.longname")
	req := id.enrollment()
	req.DeviceName = string([]rune(strings.Repeat("Ada’s phone é ", 40))[:450]) // 546 bytes
	if len(req.DeviceName) <= 512 {
		t.Fatalf("the name is only %d bytes", len(req.DeviceName))
	}
	e := connectAs(t, h, id, req)
	want := pairing.NormalizeDeviceName(req.DeviceName)
	if n := len([]rune(want)); n != pairing.MaxDeviceNameLength || !strings.HasPrefix(req.DeviceName, want) {
		t.Fatalf("the expected name has %d characters: %q", n, want)
	}
	if got := e.sess.Info().DeviceName; got != want {
		t.Fatalf("the session's device name is %q, want the first %d characters %q", got, pairing.MaxDeviceNameLength, want)
	}
	for _, g := range h.Grants() {
		if g.DeviceID == id.deviceID && g.DeviceName != want {
			t.Fatalf("the grant's device name is %q, want %q", g.DeviceName, want)
		}
	}
	e.alive(t)
}
