package connect

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/wire"
	"github.com/go-json-experiment/json"
)

const testAppID = "com.example.notes"

// testTimeout bounds waits for answers that do come; silence tests use quietTimeout.
const (
	testTimeout  = 10 * time.Second
	quietTimeout = 100 * time.Millisecond
)

func localConfig(t *testing.T, timeout time.Duration, ports ...int) *config {
	t.Helper()
	c, err := newConfig(Local{HostAddress: "127.0.0.1", DiscoveryPorts: ports, EnrollTimeout: timeout},
		Options{AppID: testAppID, DeviceName: "test-box", StateDir: t.TempDir()}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEnrollLocalSendsAllTenKeys(t *testing.T) {
	t.Parallel()
	h := newUDPHost(t, func(req *pairing.EnrollmentConnect) []reply {
		return []reply{{data: accept(req, 56501, "ws-token-1")}}
	})
	c := localConfig(t, testTimeout, h.port())
	ep, err := enroll(t.Context(), c.enrollment, discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ep.url.String(), "ws://127.0.0.1:56501/ws"; got != want {
		t.Errorf("endpoint = %s, want %s", got, want)
	}
	if ep.token != "ws-token-1" || ep.hostName != "Test Host" {
		t.Errorf("endpoint = %+v", ep)
	}

	raws := h.rawRequests()
	if len(raws) != 1 {
		t.Fatalf("host got %d datagrams, want 1", len(raws))
	}
	var m map[string]any
	if err := json.Unmarshal(raws[0], &m); err != nil {
		t.Fatal(err)
	}
	id, err := loadIdentity(c.StateDir, discard)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type": "ENROLLMENT_CONNECT", "ver": float64(2), "enrollmentMode": "local",
		"inviteId": "local:" + testAppID, "appId": testAppID, "deviceId": id.DeviceID,
		"deviceName": "test-box", "accessToken": id.LocalToken, "processSessionId": ProcessSessionID(),
	}
	if len(m) != 10 {
		t.Errorf("datagram has %d keys, want 10: %s", len(m), raws[0])
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if rid, _ := m["requestId"].(string); len(rid) < 16 {
		t.Errorf("requestId %q is too short", rid)
	}
}

func TestEnrollRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason    pairing.Reason
		temporary bool
		hint      string
	}{
		{pairing.ReasonEnrollmentModeUnsupported, false, "update the host"},
		{pairing.ReasonLocalEnrollmentUnavailable, false, "invite code"},
		{pairing.ReasonLocalEnrollmentInvalid, false, "Options.AppID"},
		{pairing.ReasonRegistrationRevoked, false, "delete "},
		{pairing.ReasonAccessTokenInvalid, false, "delete "},
		{pairing.ReasonEnrollmentRequired, false, "new invite"},
		{pairing.ReasonRegistrationExpired, false, "new invite"},
		{pairing.ReasonEnrollmentExpired, false, "new invite"},
		{pairing.ReasonEnrollmentConsumed, false, "new invite"},
		{pairing.ReasonWebSocketUnavailable, true, "retry"},
		{"SomethingNewer", true, "unknown reason"},
	}
	for _, tt := range tests {
		t.Run(string(tt.reason), func(t *testing.T) {
			h := newUDPHost(t, func(req *pairing.EnrollmentConnect) []reply {
				return []reply{{data: refuse(req, tt.reason)}}
			})
			c := localConfig(t, testTimeout, h.port())
			_, err := enroll(t.Context(), c.enrollment, discard)
			ee, ok := errors.AsType[*EnrollmentError](err)
			if !ok {
				t.Fatalf("err = %v, want *EnrollmentError", err)
			}
			if ee.Reason != tt.reason || ee.Temporary() != tt.temporary {
				t.Errorf("Reason %q Temporary %v, want %q %v", ee.Reason, ee.Temporary(), tt.reason, tt.temporary)
			}
			msg := err.Error()
			if !strings.Contains(msg, string(tt.reason)) || !strings.Contains(msg, tt.hint) {
				t.Errorf("error %q lacks the reason or the hint %q", msg, tt.hint)
			}
			if strings.Contains(msg, "delete ") && !strings.Contains(msg, c.StateDir) {
				t.Errorf("error %q does not name the state directory", msg)
			}
			if strings.Contains(msg, c.enrollment.request.AccessToken) {
				t.Error("error leaks the access token")
			}
		})
	}
}

func TestEnrollIgnoresBadAndForeignReplies(t *testing.T) {
	t.Parallel()
	// A second socket on another loopback address stands in for an attacker on the path.
	foreign, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	defer foreign.Close()
	h := newUDPHost(t, func(req *pairing.EnrollmentConnect) []reply {
		other := *req
		other.RequestID = "someone-else"
		wrongVer := strings.Replace(string(refuse(req, pairing.ReasonEnrollmentRequired)), `"ver":2`, `"ver":1`, 1)
		wrongType := strings.Replace(string(refuse(req, pairing.ReasonEnrollmentRequired)), `ENROLLMENT_RESULT`, `ENROLLMENT_CONNECT`, 1)
		dup := strings.Replace(string(refuse(req, pairing.ReasonEnrollmentRequired)), `{`, `{"accepted":true,`, 1)
		return []reply{
			{data: []byte("not json")},
			{data: []byte(`[1,2,3]`)},
			{data: []byte(wrongVer)},
			{data: []byte(wrongType)},
			{data: []byte(dup)},
			{data: make([]byte, 9000)},
			{data: refuse(&other, pairing.ReasonEnrollmentRequired)},
			{data: refuse(req, pairing.ReasonEnrollmentRequired), from: foreign},
			{data: accept(req, 56502, "good")},
		}
	})
	c := localConfig(t, testTimeout, h.port())
	ep, err := enroll(t.Context(), c.enrollment, discard)
	if err != nil {
		t.Fatalf("enroll: %v (a bad or foreign reply was taken)", err)
	}
	if ep.token != "good" {
		t.Errorf("token = %q, want the valid reply's", ep.token)
	}
}

func TestEnrollTriesCandidatesInOrder(t *testing.T) {
	t.Parallel()
	silent := newUDPHost(t, nil)
	h := newUDPHost(t, func(req *pairing.EnrollmentConnect) []reply {
		return []reply{{data: accept(req, 56503, "t")}}
	})
	c := localConfig(t, quietTimeout, silent.port(), h.port())
	if _, err := enroll(t.Context(), c.enrollment, discard); err != nil {
		t.Fatal(err)
	}
	s, a := silent.requests(), h.requests()
	if len(s) != 1 || len(a) != 1 {
		t.Fatalf("datagrams: silent %d, answering %d; want 1 each", len(s), len(a))
	}
	if s[0].RequestID == a[0].RequestID {
		t.Error("requestId reused across datagrams")
	}
	if s[0].ProcessSessionID != a[0].ProcessSessionID || s[0].DeviceID != a[0].DeviceID {
		t.Error("identity differs between candidates")
	}
}

func TestEnrollRefusalStopsAtFirstHost(t *testing.T) {
	t.Parallel()
	first := newUDPHost(t, func(req *pairing.EnrollmentConnect) []reply {
		return []reply{{data: refuse(req, pairing.ReasonRegistrationRevoked)}}
	})
	second := newUDPHost(t, func(req *pairing.EnrollmentConnect) []reply {
		return []reply{{data: accept(req, 1, "t")}}
	})
	c := localConfig(t, testTimeout, first.port(), second.port())
	if _, err := enroll(t.Context(), c.enrollment, discard); err == nil {
		t.Fatal("enroll succeeded after a refusal")
	}
	if n := len(second.requests()); n != 0 {
		t.Errorf("second candidate got %d datagrams after a refusal", n)
	}
}

func TestEnrollNoHost(t *testing.T) {
	t.Parallel()
	a, b := newUDPHost(t, nil), newUDPHost(t, nil)
	c := localConfig(t, quietTimeout, a.port(), b.port())
	_, err := enroll(t.Context(), c.enrollment, discard)
	if !errors.Is(err, ErrNoHost) {
		t.Fatalf("err = %v, want ErrNoHost", err)
	}
	for _, h := range []*udpHost{a, b} {
		if !strings.Contains(err.Error(), c.enrollment.candidates[0].host) {
			t.Errorf("error %q does not list the candidates", err)
		}
		if len(h.requests()) != 1 {
			t.Errorf("candidate got %d datagrams, want exactly 1 (no retransmit)", len(h.requests()))
		}
	}
}

func TestEnrollCancel(t *testing.T) {
	t.Parallel()
	got := make(chan struct{}, 1)
	h := newUDPHost(t, func(*pairing.EnrollmentConnect) []reply {
		got <- struct{}{}
		return nil
	})
	c := localConfig(t, time.Hour, h.port())
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-got
		cancel()
	}()
	if _, err := enroll(ctx, c.enrollment, discard); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestEnrollAcceptedWithUnusablePath(t *testing.T) {
	t.Parallel()
	h := newUDPHost(t, func(req *pairing.EnrollmentConnect) []reply {
		r := pairing.EnrollmentResult{RequestID: req.RequestID, Accepted: true, Reason: pairing.ReasonOK,
			HostID: "h", HostName: "h", Message: "m", WebSocketPort: 56500, WebSocketPath: "/ws?x=1", WebSocketToken: "t"}
		b, _ := r.Marshal()
		return []reply{{data: b}}
	})
	c := localConfig(t, testTimeout, h.port())
	_, err := enroll(t.Context(), c.enrollment, discard)
	ee, ok := errors.AsType[*EnrollmentError](err)
	if !ok || ee.Reason != "WebSocketHandoffUnavailable" || !ee.Temporary() {
		t.Fatalf("err = %v, want a temporary WebSocketHandoffUnavailable", err)
	}
}

func TestWebSocketURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr, path, want string
	}{
		{"127.0.0.1", "/ws", "ws://127.0.0.1:56500/ws"},
		{"127.0.0.1", "ws", "ws://127.0.0.1:56500/ws"},
		{"::1", "/ws", "ws://[::1]:56500/ws"},
		{"fe80::1%eth0", "/ws", "ws://[fe80::1%25eth0]:56500/ws"},
	}
	for _, tt := range tests {
		t.Run(tt.addr+" "+tt.path, func(t *testing.T) {
			t.Parallel()
			u, err := webSocketURL(mustAddr(t, tt.addr), 56500, tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if u.String() != tt.want {
				t.Errorf("webSocketURL(%s, %s) = %s, want %s", tt.addr, tt.path, u, tt.want)
			}
		})
	}
	for _, bad := range []string{"/ws#x", "/w s", "/ws?token=x"} {
		t.Run("refused "+bad, func(t *testing.T) {
			t.Parallel()
			if _, err := webSocketURL(mustAddr(t, "127.0.0.1"), 56500, bad); err == nil {
				t.Errorf("path %q accepted", bad)
			}
		})
	}
}

func TestInviteModeEnrollment(t *testing.T) {
	t.Parallel()
	h := newUDPHost(t, func(req *pairing.EnrollmentConnect) []reply {
		return []reply{{data: accept(req, 56504, "t")}}
	})
	now := time.Now()
	doc := testInvite(now, pairing.AnyApp, h.port())
	code, err := doc.Code()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, text, hostAddress string
	}{
		{"code", code, ""},
		{"document", mustJSON(t, doc), ""},
		{"bare invite", mustJSON(t, doc.Invite), "127.0.0.1"}, // no discovery hint: needs an address
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newConfig(Invite{Code: tc.text, HostAddress: tc.hostAddress, EnrollTimeout: testTimeout},
				Options{AppID: testAppID, StateDir: t.TempDir()}, now)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := enroll(t.Context(), c.enrollment, discard); err != nil {
				t.Fatal(err)
			}
		})
	}
	reqs := h.requests()
	if len(reqs) != 3 {
		t.Fatalf("host got %d requests, want 3", len(reqs))
	}
	for _, r := range reqs {
		if r.Mode() != pairing.ModeInvite || r.InviteID != doc.Invite.InviteID || r.AppID != testAppID ||
			r.AccessToken != doc.Invite.Enrollment.AccessToken {
			t.Errorf("invite request = %+v", r)
		}
	}
}

func testInvite(now time.Time, appID string, port int) *pairing.InviteDocument {
	return &pairing.InviteDocument{
		Schema: pairing.InviteDocumentSchema,
		Invite: pairing.Invite{
			Schema: pairing.InviteSchema, InviteID: "0123456789abcdef0123456789abcdef", AppID: appID,
			AppName: "Any Ansight app", IssuedAt: now, ExpiresAt: now.Add(10 * time.Minute), MinProtocolVersion: 2,
			AllowedTransports: []string{"ws"}, Host: pairing.InviteHost{HostID: "h", HostName: "Test Host", DiscoveryPort: port},
			Enrollment: pairing.InviteEnrollment{
				AccessToken: pairing.NewToken(32), ExpiresAt: now.Add(10 * time.Minute),
				GrantExpiresAt: now.Add(90 * 24 * time.Hour), MaxUses: 1, MaxToolPolicy: wire.PolicyRead,
			},
		},
		Discovery: &pairing.DiscoveryHint{
			Schema: pairing.DiscoveryHintSchema, Source: "cli-code", HostAddresses: []string{" 127.0.0.1", "", "127.0.0.1"},
			DiscoveryPort: port, HostName: "Test Host", CapturedAt: now,
		},
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
