package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/app/telemetry"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/examples/notes"
	"github.com/ansight-go/ansight/fleet"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/player"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// hostConfig is how a command starts a host in its own process.
type hostConfig struct {
	// stateDir holds the pairing store, the control socket and artifacts.
	stateDir string
	// discovery and listen are the UDP enrollment and WebSocket addresses; ports, when
	// set, the range the WebSocket port is taken from.
	discovery, listen string
	ports             host.PortRange
	lan               bool
	// serveControl makes the host reachable by other commands through the control socket.
	serveControl bool
	logger       *slog.Logger
	version      string
	// tap, when set, sees every inbound session message first (host.Options.Tap).
	tap func(*host.Session, transport.MessageType, []byte) bool
	// player is the loopback address of the web player ("" for none).
	player string
	// bindFlags name the command's flags that choose the addresses above, for the message
	// when one is taken (bind.go).
	bindFlags bindFlags
	// record keeps session recordings in <stateDir>/recordings, within recordBytes
	// (recording.DefaultMaxBytes when 0).
	record      bool
	recordBytes int64
	// jpeg is the live-screen policy answered to device.profile.
	jpeg session.JpegCapturePolicy
	// maxSessions bounds connected sessions (host.DefaultMaxSessions when 0).
	maxSessions int
	// fleet, when set, joins the host to that device lab under the name fleetHost; its
	// player then shows every host of the fleet.
	fleet     *fleet.Config
	fleetHost string
}

// runningHost is a started host with its control backend.
type runningHost struct {
	srv     *host.Server
	local   *hostapi.Local
	socket  string
	httpSrv *http.Server
	// stopControl ends the control API's requests (its server's base context).
	stopControl context.CancelFunc
	done        chan struct{} // closed when a client asks the host to stop
	// player is the web console, when started, at playerAddr; playerURL opens it (with
	// its token, kept in the state directory: see player.go).
	player     *player.Player
	playerSrv  *http.Server
	playerAddr string
	playerURL  string
	stateDir   string
	// unpoint removes the pointer to this host's state directory (see locate.go).
	unpoint func()
	// rec keeps the session recordings, when recording.
	rec *recording.Recorder
	// member is the host's membership of a fleet; fleetView the fleet as its player sees it.
	member    *fleet.Member
	fleetView *fleet.Client
}

// startHost starts a host server and, when asked, its control API.
func startHost(ctx context.Context, cfg hostConfig) (*runningHost, error) {
	rh := &runningHost{done: make(chan struct{})}
	var stopOnce sync.Once
	var pl atomic.Pointer[player.Player] // set once the player runs; the hooks fire before
	opts := host.Options{
		DiscoveryAddr:  cfg.discovery,
		ListenAddr:     cfg.listen,
		WebSocketPorts: cfg.ports,
		LAN:            cfg.lan,
		StateDir:       cfg.stateDir,
		Logger:         cfg.logger,
		Tap:            cfg.tap,
		JpegCapture:    cfg.jpeg,
		MaxSessions:    cfg.maxSessions,
	}
	if cfg.record {
		rec, err := recording.Open(recording.Options{Dir: filepath.Join(cfg.stateDir, "recordings"), MaxBytes: cfg.recordBytes, Logger: cfg.logger})
		if err != nil {
			return nil, err
		}
		rh.rec, opts.Recorder = rec, rec
	}
	opts.Tools.ArtifactDir = filepath.Join(cfg.stateDir, "artifacts")
	opts.Tools.OnTraffic = func(ev wire.TrafficEvent) {
		if p := pl.Load(); p != nil {
			p.OnTraffic(ev)
		}
	}
	opts.OnFrame = func(id string, f wire.ASJPFrame) {
		if p := pl.Load(); p != nil {
			p.OnFrame(id, f)
		}
	}
	// The player binds first: a taken player address fails the start before the host
	// logs that it serves.
	var playerLn net.Listener
	if cfg.player != "" {
		l, err := listenPlayer(cfg)
		if err != nil {
			if rh.rec != nil {
				rh.rec.Close()
			}
			return nil, err
		}
		playerLn = l
	}
	srv, err := host.New(opts)
	if err == nil {
		if err = srv.Start(ctx); err != nil {
			err = hostStartErr(fmt.Errorf("start host: %w", err), cfg)
		}
	}
	if err != nil {
		if playerLn != nil {
			playerLn.Close()
		}
		if rh.rec != nil {
			rh.rec.Close()
		}
		return nil, err
	}
	rh.srv = srv
	rh.local = hostapi.NewLocal(srv, hostapi.LocalOptions{
		Version:  versionString(cfg.version),
		StateDir: cfg.stateDir,
		Shutdown: func() { stopOnce.Do(func() { close(rh.done) }) },
		Recorder: rh.rec,
	})
	if cfg.tap == nil {
		go prefetchCatalogs(srv)
	}
	if cfg.fleet != nil {
		if err := rh.joinFleet(ctx, cfg, opts.Tools.ArtifactDir); err != nil {
			if playerLn != nil {
				playerLn.Close()
			}
			rh.close()
			return nil, err
		}
	}
	if playerLn != nil {
		if err := rh.servePlayer(cfg, playerLn, opts.Tools.ArtifactDir); err != nil {
			rh.close()
			return nil, err
		}
		pl.Store(rh.player)
	}
	if cfg.serveControl {
		if err := rh.serveControl(cfg.stateDir); err != nil {
			rh.close()
			return nil, err
		}
	}
	return rh, nil
}

// prefetchCatalogs fetches the tool index of every session once it opens, as the official
// host does: listings then show each session's tool count and revision at once, and the
// first command that needs the catalog finds it cached. It ends when the server closes.
func prefetchCatalogs(srv *host.Server) {
	events, unsubscribe := srv.Subscribe(64)
	defer unsubscribe()
	for ev := range events {
		if ev.Kind != host.EventUpdated || !ev.Session.Opened() {
			continue
		}
		if c := ev.Session.Tools(); c != nil && c.Cached() == nil {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), tools.DefaultTimeout)
				defer cancel()
				c.Index(ctx) // a failure leaves the cache empty; commands fetch it themselves
			}()
		}
	}
}

// joinFleet makes the host a member of cfg.fleet and, for its player, a client of the
// whole fleet that serves this host's own sessions in process.
func (rh *runningHost) joinFleet(ctx context.Context, cfg hostConfig, artifactDir string) error {
	m, err := fleet.Join(ctx, rh.srv, rh.local, fleet.MemberOptions{Config: *cfg.fleet, Host: cfg.fleetHost, Version: versionString(cfg.version)})
	if err != nil {
		return err
	}
	rh.member = m
	if cfg.player == "" {
		return nil
	}
	c, err := fleet.Dial(ctx, fleet.ClientOptions{Config: *cfg.fleet, ArtifactDir: filepath.Join(artifactDir, "fleet"), Version: versionString(cfg.version),
		Home: &fleet.Home{Name: cfg.fleetHost, Backend: rh.local, Events: rh.srv.Subscribe}})
	if err != nil {
		return err
	}
	rh.fleetView = c
	return nil
}

// serveControl makes the host reachable by the other commands through the control socket
// in stateDir.
func (rh *runningHost) serveControl(stateDir string) error {
	rh.socket = filepath.Join(stateDir, hostapi.SocketName)
	l, err := hostapi.Listen(rh.socket)
	if err != nil {
		return err
	}
	// Requests that stream until the client leaves (session logs --follow) end when the
	// host closes, rather than holding its shutdown up.
	ctx, cancel := context.WithCancel(context.Background())
	rh.stopControl = cancel
	rh.httpSrv = &http.Server{Handler: hostapi.NewHandler(rh.local), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go rh.httpSrv.Serve(l)
	rh.unpoint = pointToHost(stateDir)
	return nil
}

// listenPlayer binds the web player's address, cfg.player. When that is the default
// address and it is taken (another host runs), any free loopback port will do.
func listenPlayer(cfg hostConfig) (net.Listener, error) {
	l, err := player.Listen(cfg.player)
	if err != nil && cfg.player == player.DefaultAddr {
		l, err = player.Listen("127.0.0.1:0")
	}
	return l, addrInUse(err, listenerPlayer, cfg.player, cfg.bindFlags, false)
}

// servePlayer serves the web player on l, which it closes on failure.
func (rh *runningHost) servePlayer(cfg hostConfig, l net.Listener, artifactDir string) error {
	token, err := playerToken(cfg.stateDir, false)
	if err != nil {
		l.Close()
		return err
	}
	var backend hostapi.Backend = rh.local
	var events player.Events = rh.srv
	if rh.fleetView != nil {
		backend, events = rh.fleetView, rh.fleetView
	}
	p, err := player.New(backend, events, player.Options{Token: token, ArtifactDir: artifactDir, Version: versionString(cfg.version), Logger: cfg.logger})
	if err != nil {
		l.Close()
		return err
	}
	rh.player, rh.playerAddr, rh.stateDir = p, l.Addr().String(), cfg.stateDir
	rh.playerURL = p.URL(rh.playerAddr)
	rh.playerSrv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go rh.playerSrv.Serve(l)
	rh.local.SetPlayer(rh)
	return nil
}

// close stops the player and the control API, then the host.
func (rh *runningHost) close() {
	if rh.playerSrv != nil {
		rh.player.Close() // ends the live streams, which Shutdown would wait for
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		rh.playerSrv.Shutdown(ctx)
		cancel()
	}
	if rh.httpSrv != nil {
		rh.stopControl()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		rh.httpSrv.Shutdown(ctx)
		cancel()
		os.Remove(rh.socket)
		rh.unpoint()
	}
	if rh.fleetView != nil {
		rh.fleetView.Close()
	}
	if rh.member != nil {
		rh.member.Close() // leaves the fleet before the sessions end
	}
	rh.srv.Close()
	if rh.rec != nil {
		rh.rec.Close() // after the host: everything it recorded is written
	}
}

// startDemoApp runs the demo app in this process, connected to the host's discovery
// port in local mode. It returns a function that stops the app (sending session.complete).
func startDemoApp(ctx context.Context, rh *runningHost, stateDir string, logger *slog.Logger, onState func(connect.StateChange), withTelemetry bool) (func(), error) {
	// With telemetry the demo sends what an official SDK streams: its logs, runtime metrics,
	// its syncs' HTTP requests (to a sync server of its own on loopback) and, as the host
	// asks, its simulated screen, so that the player has a live screen and the recording
	// logs, metrics and network requests. The conformance run leaves it out: its host
	// speaks the tool protocol alone.
	model := notes.New(notes.Options{})
	var tel *telemetry.Telemetry
	stopSync := func() {}
	if withTelemetry {
		tel = telemetry.New(telemetry.Options{Frames: ui.FrameSource(model)})
		logger = slog.New(tel.Handler(logger.Handler(), nil))
		var err error
		if stopSync, err = model.ServeSync(tel.RoundTripper(nil)); err != nil {
			return nil, err
		}
	}
	a := app.New(app.Options{Guard: catalog.GuardFullAccess, Logger: logger})
	if err := model.Register(a); err != nil {
		stopSync()
		return nil, err
	}
	port := int(rh.srv.DiscoveryAddr().Port())
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		connect.Run(ctx, a, connect.Local{HostAddress: "127.0.0.1", DiscoveryPorts: []int{port}}, connect.Options{
			AppID: demoAppID, AppName: "Ansight demo notes", AppVersion: "1.0",
			DeviceName: "demo (simulated)", StateDir: filepath.Join(stateDir, "demoapp"), Logger: logger,
			OnState: onState, ReconnectDelay: 200 * time.Millisecond, Telemetry: tel,
		})
	}()
	return func() { cancel(); <-done; stopSync() }, nil
}

// connectDemoApp is startDemoApp that returns once the app's session is connected.
func connectDemoApp(ctx context.Context, rh *runningHost, stateDir string, logger *slog.Logger) (stop func(), err error) {
	connected := make(chan struct{}, 1)
	stop, err = startDemoApp(ctx, rh, stateDir, logger, func(s connect.StateChange) {
		if s.State == connect.StateConnected {
			select {
			case connected <- struct{}{}:
			default:
			}
		}
	}, true)
	if err != nil {
		return nil, err
	}
	if err := waitFor(ctx, connected, 20*time.Second, "the demo app to connect"); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// demoAppID is the demo app's id.
const demoAppID = "com.ansight.demo.notes"

// startEmbedded starts a host in this process (without a control socket) and, when
// withDemo, the demo app connected to it. The MCP bridge uses it for --embedded-host and
// --demo. stop shuts both down.
func startEmbedded(ctx context.Context, g *globals, withDemo bool) (hostapi.Backend, func(), error) {
	dir, err := os.MkdirTemp("", "ansight-embedded-")
	if err != nil {
		return nil, nil, err
	}
	discard := slog.New(slog.DiscardHandler)
	discovery := "127.0.0.1:0" // the demo app is told the port
	if !withDemo {
		// Other apps on this machine look for a host on the standard port: take it if free.
		discovery = freeOrDefault(host.DefaultDiscoveryAddr)
	}
	rh, err := startHost(ctx, hostConfig{stateDir: dir, discovery: discovery, listen: "127.0.0.1:0", logger: discard, version: g.env.Version})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	stop := func() {
		rh.close()
		os.RemoveAll(dir)
	}
	if withDemo {
		stopApp, err := connectDemoApp(ctx, rh, dir, discard)
		if err != nil {
			stop()
			return nil, nil, err
		}
		stopHost := stop
		stop = func() {
			stopApp()
			stopHost()
		}
	}
	return rh.local, stop, nil
}

func waitFor(ctx context.Context, ch <-chan struct{}, d time.Duration, what string) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("timed out after %s waiting for %s", d, what)
	}
}

// freeOrDefault returns def when that UDP address can be bound right now, else a random
// port on the same host, so that a second host on this machine still starts.
func freeOrDefault(def string) string {
	c, err := net.ListenPacket("udp", def)
	if err != nil {
		h, _, _ := net.SplitHostPort(def)
		return net.JoinHostPort(h, "0")
	}
	c.Close()
	return def
}
