package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"go.uber.org/goleak"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/examples/notes"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/control"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testLog is where the tests' hosts and clients log: set ANSIGHT_FLEET_TEST_LOG=1 to see it.
func testLog() *slog.Logger {
	if os.Getenv("ANSIGHT_FLEET_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// natsServer is a NATS server in this process, on a loopback port that survives restarts.
type natsServer struct {
	t    testing.TB
	opts *server.Options
	srv  *server.Server
}

// startNATS starts a NATS server with opts (a default one when nil).
func startNATS(t testing.TB, opts *server.Options) *natsServer {
	t.Helper()
	if opts == nil {
		opts = &server.Options{}
	}
	opts.Host, opts.Port = "127.0.0.1", -1
	opts.NoLog, opts.NoSigs = true, true
	n := &natsServer{t: t, opts: opts}
	n.start()
	n.opts.Port = n.srv.Addr().(*net.TCPAddr).Port
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) start() {
	n.t.Helper()
	s, err := server.NewServer(n.opts)
	if err != nil {
		n.t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		n.t.Fatal("the NATS server did not start")
	}
	n.srv = s
}

func (n *natsServer) stop() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
		n.srv = nil
	}
}

// restart stops the server and starts it again on the same port: every client is
// disconnected, then reconnects.
func (n *natsServer) restart() {
	n.stop()
	n.start()
}

func (n *natsServer) url() string { return "nats://127.0.0.1:" + strconv.Itoa(n.opts.Port) }

// testHost is a host (host.Server, control.Backend) that joined a fleet, with demo apps
// connected over real UDP enrollment and WebSocket sessions.
type testHost struct {
	t      testing.TB
	name   string
	dir    string
	cfg    Config
	srv    *host.Server
	local  *control.Backend
	member *Member
	port   int // the discovery port, kept across restarts
	apps   []*testApp
	opts   MemberOptions
	// burst is the enrollments the host takes from 127.0.0.1 at once (64 by default).
	burst int
	// rec, when set, records the host's sessions (its control API serves the recordings).
	rec *recording.Recorder
}

// testApp is a demo app connected to a host, reconnecting until stopped.
type testApp struct {
	appID string
	stop  context.CancelFunc
	done  chan struct{}
}

// fastMember makes liveness quick in tests: nothing in the tests waits on these intervals
// except for the expiry of a dead host.
func fastMember(cfg Config, name string) MemberOptions {
	return MemberOptions{Config: cfg, Host: name, Version: "test", Heartbeat: 300 * time.Millisecond, Alive: 200 * time.Millisecond}
}

func startTestHost(t testing.TB, cfg Config, name string) *testHost {
	t.Helper()
	return startTestHostBurst(t, cfg, name, 0)
}

// startTestHostBurst is startTestHost for a host that many apps enroll with at once.
func startTestHostBurst(t testing.TB, cfg Config, name string, burst int) *testHost {
	t.Helper()
	h := &testHost{t: t, name: name, dir: t.TempDir(), cfg: cfg, opts: fastMember(cfg, name), burst: burst}
	h.start()
	t.Cleanup(h.close)
	return h
}

// startRecordingHost is startTestHost for a host that records its sessions (in its own
// directory), for the tests of what a fleet reads of another host's recordings.
func startRecordingHost(t testing.TB, cfg Config, name string) *testHost {
	t.Helper()
	h := &testHost{t: t, name: name, dir: t.TempDir(), cfg: cfg, opts: fastMember(cfg, name)}
	rec, err := recording.Open(recording.Options{Dir: filepath.Join(h.dir, "recordings")})
	if err != nil {
		t.Fatal(err)
	}
	h.rec = rec
	h.start()
	t.Cleanup(func() { h.close(); rec.Close() })
	return h
}

func (h *testHost) start() {
	h.t.Helper()
	opts := host.Options{
		DiscoveryAddr: "127.0.0.1:" + strconv.Itoa(h.port), ListenAddr: "127.0.0.1:0", StateDir: h.dir,
		Logger: testLog(), KeepAlive: transport.KeepAlive{Interval: -1},
		EnrollmentBurst: max(h.burst, 64), MaxSessions: 4096, MaxTokens: 8192, MaxRetained: 4096,
	}
	if h.burst > 64 {
		opts.EnrollmentInterval = time.Millisecond
	}
	opts.Tools.ArtifactDir = filepath.Join(h.dir, "artifacts")
	if h.rec != nil {
		opts.Recorder = h.rec
	}
	srv, err := host.New(opts)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.srv = srv
	h.port = int(srv.DiscoveryAddr().Port())
	h.local = control.New(srv, control.Options{Version: "test", StateDir: h.dir, Recorder: h.rec})
	m, err := Join(context.Background(), h.local, h.opts)
	if err != nil {
		srv.Close()
		h.t.Fatal(err)
	}
	h.member = m
}

// stopHost leaves the fleet and stops the host server (the apps keep trying to reconnect).
func (h *testHost) stopHost() {
	if h.member != nil {
		h.member.Close()
		h.member = nil
	}
	if h.srv != nil {
		h.srv.Close()
		h.srv = nil
	}
}

func (h *testHost) close() {
	for _, a := range h.apps {
		a.stop()
		<-a.done
	}
	h.apps = nil
	h.stopHost()
}

// connectApp starts a demo app (every tool, of every policy) and waits until its session
// is open on the host; it returns the host's session id.
func (h *testHost) connectApp(appID string) string {
	h.t.Helper()
	a := app.New(app.Options{Guard: catalog.GuardFullAccess, Logger: testLog()})
	if err := notes.New(notes.Options{}).Register(a); err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ta := &testApp{appID: appID, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(ta.done)
		connect.Run(ctx, a, connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{h.port}}, connect.Options{
			AppID: appID, AppName: "fleet test", AppVersion: "1.0", DeviceName: "device-" + h.name,
			StateDir:       filepath.Join(h.dir, "apps", appID),
			ReconnectDelay: 50 * time.Millisecond, MaxReconnectDelay: 200 * time.Millisecond, Logger: testLog(),
		})
	}()
	h.apps = append(h.apps, ta)
	return h.waitSession(appID)
}

// waitSession waits until a session of appID is open on the host and returns its id.
func (h *testHost) waitSession(appID string) string {
	h.t.Helper()
	var id string
	eventually(h.t, "a session of "+appID+" on "+h.name, func() bool {
		for _, s := range h.srv.Sessions() {
			if in := s.Info(); in.AppID == appID && in.State == host.StateConnected && in.Opened {
				id = in.ID
				return true
			}
		}
		return false
	})
	return id
}

// eventually polls cond until it holds, failing the test after a generous bound (it is
// a guard against hanging, never a timing assertion).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for !cond() { // however long a busy machine takes: go test's -timeout bounds a hang
		if t.Context().Err() != nil {
			t.Fatalf("the test ended waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// dialClient connects a fleet client with its artifacts under a temporary directory.
func dialClient(t testing.TB, cfg Config) *Client {
	t.Helper()
	c, err := Dial(context.Background(), ClientOptions{Config: cfg, ArtifactDir: t.TempDir(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitListing waits until the client lists want connected sessions.
func waitListing(t testing.TB, c *Client, want int) *hostapi.Sessions {
	t.Helper()
	var got *hostapi.Sessions
	eventually(t, fmt.Sprintf("%d connected sessions in the fleet", want), func() bool {
		s, err := c.Sessions(context.Background())
		if err != nil {
			return false
		}
		n := 0
		for _, v := range s.Sessions {
			if v.State == hostapi.StateConnected {
				n++
			}
		}
		got = s
		return n == want
	})
	return got
}

// testConfig is the configuration of an open test fleet.
func testConfig(n *natsServer) Config {
	return Config{URL: n.url(), Fleet: "lab", ReconnectWait: 50 * time.Millisecond, Logger: testLog()}
}

// startIdleHost starts a host server with no app, closed when the test ends.
func startIdleHost(t testing.TB) *host.Server {
	t.Helper()
	srv, err := host.New(host.Options{DiscoveryAddr: "127.0.0.1:0", ListenAddr: "127.0.0.1:0", StateDir: t.TempDir(),
		Logger: testLog(), KeepAlive: transport.KeepAlive{Interval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}
