package host

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// Control requests exactly as the official SDKs send them (docs/protocol/session.md#control-actions).
const (
	sdkOpen       = `{"type":"CONTROL_REQ","id":"client.0123456789abcdef0123456789abcdef","replyTo":null,"action":"session.open","payload":{"clientName":"Pixel 8","configId":"local:com.example.app","appId":"com.example.app","openedAtUtc":"2026-07-30T01:00:00.0000000+00:00"},"success":true,"message":null}`
	sdkProfile    = `{"type":"CONTROL_REQ","id":"client.1","replyTo":null,"action":"device.profile","payload":{"type":"DeviceAppProfile","schema":"ansight.device-app-profile.v1","sentAt":1785373200000,"reasonCode":1,"profileSeq":1,"sdk":{"name":"Ansight.Core","packageId":"Ansight.Core","version":"1.4.0","language":"csharp"},"device":{"model":"Pixel 8","osName":"Android","osVersion":"15","apiLevel":35},"app":{"appId":"com.example.app","versionCode":42},"sessionJpegCaptureControlVersion":1},"success":true,"message":null}`
	sdkState      = `{"type":"CONTROL_REQ","id":"client.2","replyTo":null,"action":"app.state","payload":{"state":"Foreground","changedAtUtc":"2026-07-30T01:00:01Z"},"success":true,"message":null}`
	sdkProperties = `{"type":"CONTROL_REQ","id":"client.3","action":"session.properties","payload":{"schema":"ansight.session-properties.v1","customProperties":{"build":{"flavor":"debug"}},"updatedAtUtc":"2026-07-30T01:00:02Z","platform":"android","sessionId":"android.00112233445566778899aabbccddeeff","capabilities":["tool.exec"]},"success":true}`
	sdkLog        = `{"type":"CONTROL_REQ","id":"client.4","action":"client.log","payload":{"data":"hello"},"success":true}`
	sdkComplete   = `{"type":"CONTROL_REQ","id":"client.5","replyTo":null,"action":"session.complete","payload":{"reason":"client log stream complete"},"success":true,"message":null}`
)

// TestControlInterop checks every byte the official SDKs rely on in the host's replies:
// all seven keys, id null, replyTo = request id, action echoed, success explicit.
func TestControlInterop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	conn := h.connect(t, newApp("com.example.app"))
	for _, tc := range []struct{ req, want string }{
		{sdkOpen, `{"type":"CONTROL_RESP","id":null,"replyTo":"client.0123456789abcdef0123456789abcdef","action":"session.open","payload":null,"success":true,"message":"Session open accepted for Pixel 8."}`},
		{sdkProfile, `{"type":"CONTROL_RESP","id":null,"replyTo":"client.1","action":"device.profile","payload":{"sessionJpegCapture":{"mode":"app","fallbackMode":"app","intervalMilliseconds":2000,"quality":60}},"success":true,"message":"Device profile received."}`},
		{sdkState, `{"type":"CONTROL_RESP","id":null,"replyTo":"client.2","action":"app.state","payload":null,"success":true,"message":"App state received."}`},
		{sdkProperties, `{"type":"CONTROL_RESP","id":null,"replyTo":"client.3","action":"session.properties","payload":null,"success":true,"message":"Session properties received."}`},
		{sdkLog, `{"type":"CONTROL_RESP","id":null,"replyTo":"client.4","action":"client.log","payload":null,"success":true,"message":"Client log received."}`},
		{`{"type":"CONTROL_REQ","id":"client.6","action":"crash.handoff","payload":{"reportId":"r"}}`, `{"type":"CONTROL_RESP","id":null,"replyTo":"client.6","action":"crash.handoff","payload":null,"success":false,"message":"A crash handoff requires a current session and an ansight.crash.v1 report."}`},
		{`{"type":"CONTROL_REQ","id":"client.7","action":"screen.record","payload":{}}`, `{"type":"CONTROL_RESP","id":null,"replyTo":"client.7","action":"screen.record","payload":null,"success":false,"message":"Unsupported control action 'screen.record'."}`},
	} {
		t.Run(reqName(tc.req), func(t *testing.T) {
			if got := control(t, conn, tc.req); got != tc.want {
				t.Errorf("reply to %.60s\n got %s\nwant %s", tc.req, got, tc.want)
			}
		})
	}
	sess := h.sessionFor(t, "com.example.app")
	in := sess.Info()
	if !in.Opened || in.ClientName != "Pixel 8" || in.AppState != "foreground" || in.Platform != "Android" ||
		in.Profile == nil || in.Profile.SDK.Version != "1.4.0" || string(in.Properties) != `{"build":{"flavor":"debug"}}` ||
		in.MaxToolPolicy != wire.PolicyWrite || !strings.HasPrefix(in.ID, "com-example-app-") {
		t.Fatalf("info %+v", in)
	}
	if got := control(t, conn, sdkComplete); got != `{"type":"CONTROL_RESP","id":null,"replyTo":"client.5","action":"session.complete","payload":null,"success":true,"message":"Session complete acknowledged."}` {
		t.Fatalf("complete: %s", got)
	}
	_, _, err := conn.Read(context.Background())
	if closeCode(err) != transport.StatusNormalClosure {
		t.Fatalf("after session.complete: %v, want close 1000", err)
	}
	waitFor(t, "disconnected", func() bool { return sess.State() == StateDisconnected })
}

// TestDeviceProfileAnswersTheJpegCapture: the live-screen policy the host is given
// (ansight host run --jpeg-interval, --jpeg-quality) is what an app is told, not the
// defaults.
func TestDeviceProfileAnswersTheJpegCapture(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) {
		o.JpegCapture = session.JpegCapturePolicy{Mode: session.JpegCaptureApp, IntervalMilliseconds: 500, Quality: 85, MaxWidth: 480}
	})
	conn := h.connect(t, newApp("com.example.app"))
	const want = `{"type":"CONTROL_RESP","id":null,"replyTo":"client.1","action":"device.profile","payload":{"sessionJpegCapture":{"mode":"app","fallbackMode":"app","intervalMilliseconds":500,"quality":85,"maxWidth":480}},"success":true,"message":"Device profile received."}`
	if got := control(t, conn, sdkProfile); got != want {
		t.Errorf("reply to device.profile\n got %s\nwant %s", got, want)
	}
}

// TestNewRefusesJpegCaptureOutOfRange: a quality or an interval out of range is an error,
// not a silent fallback to the defaults.
func TestNewRefusesJpegCaptureOutOfRange(t *testing.T) {
	t.Parallel()
	for _, p := range []session.JpegCapturePolicy{{Quality: 500}, {Quality: -1}, {IntervalMilliseconds: -3000},
		{IntervalMilliseconds: MinJpegIntervalMilliseconds - 1}, {IntervalMilliseconds: MaxJpegIntervalMilliseconds + 1}} {
		_, err := New(Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", StateDir: t.TempDir(), JpegCapture: p})
		if err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("New with %+v = %v, want out of range", p, err)
		}
	}
	for _, p := range []session.JpegCapturePolicy{{}, {Quality: MinJpegQuality, IntervalMilliseconds: MinJpegIntervalMilliseconds},
		{Quality: MaxJpegQuality, IntervalMilliseconds: MaxJpegIntervalMilliseconds}} {
		s, err := New(Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", StateDir: t.TempDir(), JpegCapture: p})
		if err != nil {
			t.Errorf("New with %+v = %v", p, err)
			continue
		}
		s.Close()
	}
}

// TestControlBadPayloads: wrong payload types get success:false, never silence or a crash.
func TestControlBadPayloads(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	conn := h.connect(t, newApp("com.example.app"))
	for _, tc := range []struct{ req, message string }{
		{`{"type":"CONTROL_REQ","id":"a","action":"app.state","payload":[1]}`, "App state payload was invalid."},
		{`{"type":"CONTROL_REQ","id":"b","action":"app.state","payload":{"state":"asleep"}}`, "App state payload was invalid."},
		{`{"type":"CONTROL_REQ","id":"c","action":"app.state","payload":null}`, "App state payload was invalid."},
		{`{"type":"CONTROL_REQ","id":"d","action":"session.open","payload":{"clientName":7}}`, ""},
		{`{"type":"CONTROL_REQ","id":"e","action":"session.open","payload":{"customProperties":[1]}}`, "customProperties must be a JSON object."},
		{`{"type":"CONTROL_REQ","id":"f","action":"device.profile","payload":"x"}`, ""},
		{`{"type":"CONTROL_REQ","id":"g","action":"session.properties","payload":{"customProperties":"x"}}`, "customProperties must be a JSON object."},
		{`{"type":"CONTROL_REQ","id":"h","action":"client.log","payload":{"data":5}}`, "Client log payload was invalid."},
		{`{"type":"CONTROL_REQ","id":"i","action":7}`, ""},
		// Refused by the strict decoder, answered by the first id all the same.
		{`{"type":"CONTROL_REQ","id":"j","id":"k","action":"app.state","payload":{"state":"foreground"}}`, ""},
		{`{"type":"CONTROL_REQ","id":"l","action":"app.state","Action":"session.complete"}`, ""},
	} {
		t.Run(reqName(tc.req), func(t *testing.T) {
			got, err := session.ParseControl([]byte(control(t, conn, tc.req)))
			if err != nil {
				t.Fatal(err)
			}
			if got.Success || got.Type != session.TypeControlResponse || got.ReplyTo == "" || (tc.message != "" && got.Message != tc.message) {
				t.Errorf("%s: %+v", tc.req, got)
			}
		})
	}
}

// TestControlLenient is issue 12.6 for the control channel, with the exact messages: a
// client.log without a payload is logged and acknowledged (the official host logs
// "<empty>"), and the legacy CLIENT_DONE ends the session cleanly (1000), unanswered.
func TestControlLenient(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	conn := h.connect(t, newApp("com.example.app"))
	for _, req := range []string{
		`{"type":"CONTROL_REQ","id":"client.7","replyTo":null,"action":"client.log","payload":null,"success":true,"message":null}`,
		`{"type":"CONTROL_REQ","id":"client.7","action":"client.log"}`,
		`{"type":"CONTROL_REQ","id":"client.7","action":"client.log","payload":{"data":null}}`,
	} {
		if got, want := control(t, conn, req), `{"type":"CONTROL_RESP","id":null,"replyTo":"client.7","action":"client.log","payload":null,"success":true,"message":"Client log received."}`; got != want {
			t.Errorf("%s\n got %s\nwant %s", req, got, want)
		}
	}
	sess := h.sessionFor(t, "com.example.app")
	writeText(t, conn, `{"type":"CLIENT_DONE"}`)
	_, _, err := conn.Read(context.Background())
	var ce *transport.CloseError
	if !errors.As(err, &ce) || ce.Code != transport.StatusNormalClosure || ce.Reason != "WebSocket session complete." {
		t.Fatalf("after CLIENT_DONE: %v, want close 1000 \"WebSocket session complete.\"", err)
	}
	waitFor(t, "disconnected", func() bool { return sess.State() == StateDisconnected })

	// Only the type decides: a log line that mentions CLIENT_DONE ends nothing.
	conn = h.connect(t, newApp("com.example.other"))
	writeText(t, conn, `{"type":"CLIENT_LOG","data":"sending \"CLIENT_DONE\" next"}`)
	if got := control(t, conn, sdkLog); !strings.Contains(got, `"success":true`) {
		t.Fatalf("session ended by a log line: %s", got)
	}
}

// TestUnacknowledgedTraffic: telemetry, legacy events and ASJP frames get no reply; the
// next control request is answered first.
func TestUnacknowledgedTraffic(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	conn := h.connect(t, newApp("com.example.app"))
	for _, m := range []string{
		`{"type":"CLIENT_METRICS","metrics":[{"channel":1,"value":2,"capturedAtUtc":"2026-07-30T01:00:00Z"}]}`,
		`{"type":"CLIENT_LOG","data":"mentions CONTROL_REQ in passing"}`,
		`{"type":"DeviceAppProfile","schema":"ansight.device-app-profile.v1"}`,
		`{"type":"CONTROL_RESP","id":null,"replyTo":"x","action":"y","success":true}`,
		`not json at all`,
		`{"type":"tool.result","id":"r.response","replyTo":"nobody","capability":"tool.exec","payload":{}}`,
	} {
		writeText(t, conn, m)
	}
	asjp := append([]byte("ASJP"), make([]byte, 40)...)
	if err := conn.Write(context.Background(), transport.MessageBinary, asjp); err != nil {
		t.Fatal(err)
	}
	if got := control(t, conn, sdkLog); !strings.Contains(got, `"replyTo":"client.4"`) {
		t.Fatalf("first reply after telemetry: %s", got)
	}
}

// TestToolRouting: after session.open the session's tool client sends requests carrying
// the session id; a dropped connection fails them at once with a transport error.
func TestToolRouting(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	conn := h.connect(t, newApp("com.example.app"))
	control(t, conn, sdkOpen)
	sess := h.sessionFor(t, "com.example.app")
	errc := make(chan error, 1)
	go func() {
		_, err := sess.Tools().Query(context.Background(), wire.Query{Detail: wire.DetailIndex})
		errc <- err
	}()
	env, err := wire.DecodeEnvelope(readText(t, conn))
	if err != nil {
		t.Fatal(err)
	}
	if env.Type != wire.TypeQuery || env.SessionID != sess.ID() {
		t.Fatalf("request %+v", env)
	}
	conn.Close(transport.StatusGoingAway, "bye")
	err = <-errc
	var te *tools.TransportError
	if !errors.As(err, &te) || !errors.Is(err, tools.ErrSessionClosed) {
		t.Fatalf("pending query: %v, want a transport error", err)
	}
	waitFor(t, "disconnected", func() bool { return sess.State() == StateDisconnected })
}

// TestResumeAndReplace: the same process (appId, processSessionId, grant) keeps its session
// id; the newer connection replaces the older, whose pending request fails with
// ErrReplaced and which is closed.
func TestResumeAndReplace(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	events, stop := h.Subscribe(16)
	defer stop()
	a := newApp("com.example.app")
	first := h.connect(t, a)
	control(t, first, sdkOpen)
	sess := h.sessionFor(t, a.appID)
	errc := make(chan error, 1)
	go func() {
		_, err := sess.Tools().Query(context.Background(), wire.Query{})
		errc <- err
	}()
	readText(t, first) // the query is in flight

	second := h.connect(t, a)
	if err := <-errc; !errors.Is(err, ErrReplaced) {
		t.Fatalf("pending on the replaced connection: %v", err)
	}
	if _, _, err := first.Read(context.Background()); err == nil {
		t.Fatal("replaced connection still open")
	}
	control(t, second, sdkOpen)
	if got := h.sessionFor(t, a.appID); got != sess || len(h.Sessions()) != 1 {
		t.Fatalf("resumed as %s, want %s (%d sessions)", got.ID(), sess.ID(), len(h.Sessions()))
	}
	// A new process of the same installation is a new session.
	b := a
	b.psid = pairing.NewToken(16)
	h.connect(t, b)
	h.waitSession(t, "a second session", func(s *Session) bool { return s != sess })
	kinds := map[EventKind]int{}
	for kinds[EventConnected] < 3 || kinds[EventUpdated] < 2 {
		kinds[(<-events).Kind]++ // blocks until the events come; the test deadline bounds it
	}
}

// TestSessionHijackDifferentGrant: another client of the same app that presents the
// victim's processSessionId on its own grant gets a new session; the victim keeps its
// connection (the reference lets it take the session over).
func TestSessionHijackDifferentGrant(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	victim := newApp("com.example.app")
	vconn := h.connect(t, victim)
	control(t, vconn, sdkOpen)
	vsess := h.sessionFor(t, victim.appID)

	attacker := newApp("com.example.app")
	attacker.psid = victim.psid
	aconn := h.connect(t, attacker)
	control(t, aconn, sdkOpen)
	h.waitSession(t, "the attacker's session", func(s *Session) bool { return s != vsess })
	if vsess.State() != StateConnected {
		t.Fatal("victim lost its connection")
	}
	for _, s := range h.Sessions() {
		if s != vsess && s.ID() == vsess.ID() {
			t.Fatal("attacker got the victim's session id")
		}
	}
	if got := control(t, vconn, sdkLog); !strings.Contains(got, `"success":true`) {
		t.Fatalf("victim's connection: %s", got)
	}
}

func TestRevokeDisconnects(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	a := newApp("com.example.app")
	conn := h.connect(t, a)
	sess := h.sessionFor(t, a.appID)
	readErr := readAsync(conn) // the close handshake needs a reading peer
	if _, err := h.Revoke(h.grantOf(t, a.deviceID)); err != nil {
		t.Fatal(err)
	}
	if err := <-readErr; closeCode(err) != transport.StatusNormalClosure {
		t.Fatalf("after revocation: %v", err)
	}
	waitFor(t, "disconnected", func() bool { return sess.State() == StateDisconnected })
	if r := h.enroll(t, a.local()); r.Reason != pairing.ReasonRegistrationRevoked {
		t.Fatalf("after revoke: %s", r.Reason)
	}
	if _, err := h.Revoke("nothing"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}

// TestReaderPanicEndsOnlyItsConnection: a session's reader runs on a goroutine of its own
// (not net/http's, which recovered a handler's panic), so it recovers itself: a bug while
// reading one app's messages closes that connection with 1011 and detaches its session,
// and the host goes on serving the others.
func TestReaderPanicEndsOnlyItsConnection(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) {
		o.Tap = func(_ *Session, _ transport.MessageType, data []byte) bool {
			if string(data) == "panic, please" {
				panic("a reader bug")
			}
			return false
		}
	})
	bad, good := newApp("com.example.bad"), newApp("com.example.good")
	badConn, goodConn := h.connect(t, bad), h.connect(t, good)
	badSess := h.sessionFor(t, bad.appID)
	readErr := readAsync(badConn)
	writeText(t, badConn, "panic, please")
	if err := <-readErr; closeCode(err) != transport.StatusInternalError {
		t.Fatalf("after the reader's panic: %v, want close 1011", err)
	}
	waitFor(t, "the session detached", func() bool { return badSess.State() == StateDisconnected })
	if got := control(t, goodConn, sdkOpen); !strings.Contains(got, `"success":true`) {
		t.Fatalf("another session after the panic: %s", got)
	}
}

func TestAppHint(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"com.example.app": "com-example-app", "Com..Example__App!": "com-example-app", "***": "app", "": "app",
		strings.Repeat("a", 60): strings.Repeat("a", 48),
	} {
		if got := appHint(in); got != want {
			t.Errorf("appHint(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestServerCloseFailsPending(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	conn := h.connect(t, newApp("com.example.app"))
	control(t, conn, sdkOpen)
	sess := h.sessionFor(t, "com.example.app")
	errc := make(chan error, 1)
	go func() {
		_, err := sess.Tools().Query(context.Background(), wire.Query{})
		errc <- err
	}()
	readText(t, conn)
	readErr := readAsync(conn)
	h.Close()
	if err := <-errc; !errors.Is(err, tools.ErrSessionClosed) {
		t.Fatalf("pending after Close: %v", err)
	}
	if err := <-readErr; closeCode(err) != transport.StatusGoingAway {
		t.Fatalf("after Close: %v, want 1001", err)
	}
}

// readAsync reads conn until it fails and delivers the error.
func readAsync(conn transport.Conn) <-chan error {
	ch := make(chan error, 1)
	go func() {
		for {
			if _, _, err := conn.Read(context.Background()); err != nil {
				ch <- err
				return
			}
		}
	}()
	return ch
}

// TestRevokeInvite: revoking a used invite revokes the grants made with it, ends their
// sessions and says so.
func TestRevokeInvite(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	inv, code, err := h.IssueInvite(InviteOptions{AppID: "com.example.app"})
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := pairing.ParseInvite(code)
	a := newApp("com.example.app")
	conn := h.dial(t, h.enroll(t, a.invite(inv.ID, doc.Invite.Enrollment.AccessToken)))
	readErr := readAsync(conn)
	sess := h.sessionFor(t, a.appID)
	rev, err := h.Revoke(inv.ID)
	if err != nil || rev.Kind != RevokedInvite || len(rev.GrantIDs) != 1 || rev.Sessions != 1 {
		t.Fatalf("%+v %v", rev, err)
	}
	if err := <-readErr; closeCode(err) != transport.StatusNormalClosure {
		t.Fatalf("after revocation: %v", err)
	}
	waitFor(t, "disconnected", func() bool { return sess.State() == StateDisconnected })
	if g := h.Grants(); len(g) != 1 || g[0].RevokedAt.IsZero() {
		t.Fatalf("grants after revoking the invite: %+v", g)
	}
	if r := h.enroll(t, a.invite(inv.ID, doc.Invite.Enrollment.AccessToken)); r.Reason != pairing.ReasonRegistrationExpired {
		t.Fatalf("after revoke: %s", r.Reason)
	}
}

// TestRevokedInviteListed: a revoked invite that was never used stays listed, as revoked,
// its secret's hash wiped, and enrolls nobody; an invite can name the addresses its
// discovery hint gives apps.
func TestRevokedInviteListed(t *testing.T) {
	h := newHarness(t, nil)
	inv, code, err := h.IssueInvite(InviteOptions{AppID: "com.example.app", HostAddresses: []string{"192.0.2.7"}})
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := pairing.ParseInvite(code)
	if got := doc.Discovery.HostAddresses; len(got) != 1 || got[0] != "192.0.2.7" {
		t.Errorf("discovery hint addresses %v", got)
	}
	if rev, err := h.Revoke(inv.ID); err != nil || rev.Kind != RevokedInvite || len(rev.GrantIDs) != 0 {
		t.Fatalf("%+v %v", rev, err)
	}
	list := h.ListInvites()
	if len(list) != 1 || list[0].ID != inv.ID || list[0].RevokedAt.IsZero() {
		t.Fatalf("invites after revoking: %+v", list)
	}
	h.mu.Lock()
	hash := h.store.invite(inv.ID).SecretHash
	h.mu.Unlock()
	if hash != "" {
		t.Error("the revoked invite keeps its secret's hash")
	}
	if r := h.enroll(t, newApp("com.example.app").invite(inv.ID, doc.Invite.Enrollment.AccessToken)); r.Accepted || r.Reason != pairing.ReasonEnrollmentRequired {
		t.Fatalf("a revoked invite enrolled: %s", r.Reason)
	}
}

// TestRevokePrunedInvite: an invite pruned from the store can still be revoked by its id:
// the grants made with it are.
func TestRevokePrunedInvite(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	inv, code, err := h.IssueInvite(InviteOptions{AppID: "com.example.app"})
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := pairing.ParseInvite(code)
	if r := h.enroll(t, newApp("com.example.app").invite(inv.ID, doc.Invite.Enrollment.AccessToken)); !r.Accepted {
		t.Fatal(r.Reason)
	}
	h.mu.Lock()
	h.store.removeInvite(inv.ID) // as prune does a week after the invite expired
	h.mu.Unlock()
	if rev, err := h.Revoke(inv.ID); err != nil || rev.Kind != RevokedInvite || len(rev.GrantIDs) != 1 {
		t.Fatalf("%+v %v", rev, err)
	}
	if g := h.Grants(); len(g) != 1 || g[0].RevokedAt.IsZero() {
		t.Fatalf("grants: %+v", g)
	}
}

// TestWaitSession: WaitSession returns a session that already matches at once, waits for
// one that matches later (here: once the app opens it), and gives up with ctx's cause or
// when the server closes.
func TestWaitSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	a := newApp("com.example.wait")
	conn := h.connect(t, a)
	connected := h.sessionFor(t, a.appID)
	ctx := t.Context()
	if got, err := h.WaitSession(ctx, func(s *Session) bool { return s.AppID() == a.appID }); err != nil || got != connected {
		t.Fatalf("an existing session: %v, %v", got, err)
	}

	opened := make(chan *Session, 1)
	go func() {
		s, err := h.WaitSession(ctx, (*Session).Opened)
		if err != nil {
			t.Errorf("waiting for the open: %v", err)
		}
		opened <- s
	}()
	control(t, conn, sdkOpen)
	if s := <-opened; s != connected || !s.Opened() {
		t.Fatalf("opened %v, want %v", s, connected)
	}

	short, cancelShort := context.WithCancelCause(t.Context())
	cancelShort(errors.New("gave up"))
	if _, err := h.WaitSession(short, func(*Session) bool { return false }); err == nil || err.Error() != "gave up" {
		t.Fatalf("cancelled wait: %v", err)
	}
	closed := make(chan error, 1)
	go func() {
		_, err := h.WaitSession(ctx, func(*Session) bool { return false })
		closed <- err
	}()
	conn.Close(transport.StatusNormalClosure, "")
	h.Close()
	if err := <-closed; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("wait across Close: %v", err)
	}
}
