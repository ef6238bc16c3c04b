package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/internal/jsonscan"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a settable clock for expiry and rate-limit tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type harness struct {
	*Server
	clock *fakeClock
}

var loopback = netip.MustParseAddr("127.0.0.1")

// newHarness starts a server on loopback ephemeral ports with a fake clock and a fresh
// state directory. mutate adjusts the options first.
func newHarness(t *testing.T, mutate func(*Options)) *harness {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 7, 30, 1, 0, 0, 0, time.UTC)}
	opts := Options{
		DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", StateDir: t.TempDir(),
		HostName: "test-host", Clock: clock.Now, KeepAlive: transport.KeepAlive{Interval: -1},
	}
	opts.Tools.ArtifactDir = filepath.Join(opts.StateDir, "artifacts")
	if mutate != nil {
		mutate(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &harness{Server: s, clock: clock}
}

// app is one simulated installation: a device id, a token, a process session id.
type app struct {
	appID, deviceID, token, psid string
}

func newApp(appID string) app {
	return app{appID: appID, deviceID: "dev-" + pairing.NewToken(6), token: pairing.NewToken(32), psid: pairing.NewToken(16)}
}

func (a app) local() *pairing.EnrollmentConnect {
	return &pairing.EnrollmentConnect{RequestID: pairing.NewToken(16), EnrollmentMode: pairing.ModeLocal,
		InviteID: pairing.LocalInviteID(a.appID), AppID: a.appID, DeviceID: a.deviceID, DeviceName: "Test Device",
		AccessToken: a.token, ProcessSessionID: a.psid}
}

func (a app) invite(inviteID, secret string) *pairing.EnrollmentConnect {
	r := a.local()
	r.EnrollmentMode, r.InviteID, r.AccessToken = pairing.ModeInvite, inviteID, secret
	return r
}

// udpExchange sends one datagram to the server's discovery socket and returns the reply.
func (h *harness) udpExchange(t *testing.T, datagram []byte) []byte {
	t.Helper()
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(h.DiscoveryAddr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(datagram); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10) // no read deadline: the reply comes however busy the machine
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("no enrollment reply: %v", err)
	}
	return buf[:n]
}

// enroll sends req over real UDP and parses the result.
func (h *harness) enroll(t *testing.T, req *pairing.EnrollmentConnect) *pairing.EnrollmentResult {
	t.Helper()
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	res, err := pairing.ParseEnrollmentResult(h.udpExchange(t, b))
	if err != nil {
		t.Fatal(err)
	}
	if res.RequestID != req.RequestID {
		t.Fatalf("reply to %q, want %q", res.RequestID, req.RequestID)
	}
	return res
}

func (h *harness) wsURL(res *pairing.EnrollmentResult) string {
	return fmt.Sprintf("ws://127.0.0.1:%d%s?token=%s", res.WebSocketPort, res.WebSocketPath, res.WebSocketToken)
}

// dial opens the app side of a session for an accepted result.
func (h *harness) dial(t *testing.T, res *pairing.EnrollmentResult) transport.Conn {
	t.Helper()
	if !res.Accepted {
		t.Fatalf("enrollment rejected: %s", res.Reason)
	}
	conn, err := transport.Dial(context.Background(), h.wsURL(res), transport.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(transport.StatusNormalClosure, "") })
	return conn
}

// connect enrolls a in local mode and dials.
func (h *harness) connect(t *testing.T, a app) transport.Conn {
	t.Helper()
	return h.dial(t, h.enroll(t, a.local()))
}

func readText(t *testing.T, c transport.Conn) []byte {
	t.Helper()
	typ, b, err := c.Read(t.Context()) // however long a busy machine takes
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if typ != transport.MessageText {
		t.Fatalf("read %v message", typ)
	}
	return b
}

func writeText(t *testing.T, c transport.Conn, s string) {
	t.Helper()
	if err := c.Write(context.Background(), transport.MessageText, []byte(s)); err != nil {
		t.Fatal(err)
	}
}

// control sends a raw control request and returns the raw response.
func control(t *testing.T, c transport.Conn, req string) string {
	t.Helper()
	writeText(t, c, req)
	return string(readText(t, c))
}

// waitFor polls cond until it holds; only a generous deadline, never a threshold.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() { // however long a busy machine takes: go test's -timeout bounds a hang
		if t.Context().Err() != nil {
			t.Fatalf("the test ended waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sessionFor waits until the server lists a connected session for appID.
func (h *Server) sessionFor(t *testing.T, appID string) *Session {
	t.Helper()
	return h.waitSession(t, "a session of "+appID, func(s *Session) bool { return s.AppID() == appID && s.State() == StateConnected })
}

// waitSession waits for a session that match accepts (Server.WaitSession), for as long as
// the test runs.
func (h *Server) waitSession(t *testing.T, what string, match func(*Session) bool) *Session {
	t.Helper()
	s, err := h.WaitSession(t.Context(), match)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	return s
}

func closeCode(err error) transport.StatusCode {
	var ce *transport.CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return -1
}

// reqName names a subtest after the action and id of the control request req.
func reqName(req string) string {
	var v [2]string
	jsonscan.TopStrings([]byte(req), []string{"action", "id"}, v[:], nil)
	return v[0] + " " + v[1]
}
