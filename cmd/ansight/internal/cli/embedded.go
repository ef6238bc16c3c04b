package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/app/telemetry"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/examples/notes"
	"github.com/ansight-go/ansight/fleet"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/hostrun"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/player"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire/session"
)

// hostConfig is how a command starts a host in its own process (package hostrun): what
// its flags chose.
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
	// maskSensitive masks screens on intake (hostrun.Options.MaskSensitive).
	maskSensitive bool
	// jpeg is the live-screen policy answered to device.profile.
	jpeg session.JpegCapturePolicy
	// maxSessions bounds connected sessions (host.DefaultMaxSessions when 0).
	maxSessions int
	// callTimeout is the default limit of a call (tools.DefaultTimeout when 0).
	callTimeout time.Duration
	// fleet, when set, joins the host to that device lab under the name fleetHost; its
	// player then shows every host of the fleet.
	fleet     *fleet.Config
	fleetHost string
}

// runningHost is a started host, with what the CLI adds: the pointer to its state
// directory while its control socket is served (locate.go).
type runningHost struct {
	*hostrun.Host
	unpoint func()
}

// startHost starts a host as cfg says. A taken address is said with the command's flag
// that changes it (bind.go).
func startHost(ctx context.Context, cfg hostConfig) (*runningHost, error) {
	opts := hostrun.Options{
		StateDir: cfg.stateDir,
		Host: host.Options{
			DiscoveryAddr:  cfg.discovery,
			ListenAddr:     cfg.listen,
			WebSocketPorts: cfg.ports,
			LAN:            cfg.lan,
			Logger:         cfg.logger,
			Tap:            cfg.tap,
			JpegCapture:    cfg.jpeg,
			MaxSessions:    cfg.maxSessions,
		},
		Version:     versionString(cfg.version),
		Record:      cfg.record,
		RecordBytes: cfg.recordBytes, MaskSensitive: cfg.maskSensitive,
		Fleet:     cfg.fleet,
		FleetHost: cfg.fleetHost,
	}
	opts.Host.Tools.Timeout = cfg.callTimeout // the default limit of a call (0: the host's)
	// The player binds first: a taken player address fails the start before the host
	// logs that it serves.
	if cfg.player != "" {
		l, err := listenPlayer(cfg)
		if err != nil {
			return nil, err
		}
		opts.Player = l
	}
	h, err := hostrun.Start(ctx, opts)
	if err != nil {
		return nil, hostStartErr(err, cfg)
	}
	rh := &runningHost{Host: h, unpoint: func() {}}
	if cfg.serveControl {
		if err := rh.serveControl(); err != nil {
			rh.close()
			return nil, err
		}
	}
	return rh, nil
}

// serveControl makes the host reachable by the other commands through the control socket
// in its state directory.
func (rh *runningHost) serveControl() error {
	if err := rh.ServeControl(); err != nil {
		return err
	}
	rh.unpoint = pointToHost(filepath.Dir(rh.SocketPath()))
	return nil
}

// close stops the host.
func (rh *runningHost) close() {
	rh.Close()
	rh.unpoint()
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
		tel = telemetry.New(telemetry.Options{Frames: ui.FrameSource(model.Screen())})
		logger = slog.New(tel.Handler(logger.Handler(), nil))
		var err error
		if stopSync, err = model.ServeSync(tel.RoundTripper(nil)); err != nil {
			return nil, err
		}
	}
	a := app.New(app.Options{Guard: catalog.GuardFullAccess, Logger: logger})
	var taps ui.TapRecorder // the taps the UI tools perform, recorded as the official SDKs report touches
	if tel != nil {
		taps = tel
	}
	if err := model.RegisterReporting(a, taps); err != nil {
		stopSync()
		return nil, err
	}
	// Its files (a temporary directory with a welcome file), its notes kept in notes.db
	// there for the data tools, and its settings for the preference tools: the player's
	// Files and Data pages, the CLI and agents have them to look at.
	dir, removeFiles, err := model.RegisterFiles(a, "")
	if err != nil {
		stopSync()
		return nil, err
	}
	closeDB, err := model.RegisterData(a, dir)
	if err != nil {
		removeFiles()
		stopSync()
		return nil, err
	}
	stopData := func() { closeDB(); removeFiles() }
	port := int(rh.Server().DiscoveryAddr().Port())
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
	return func() { cancel(); <-done; stopSync(); stopData() }, nil
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

// embeddedRecordBytes bounds the recordings of a host in this process: it lives as long
// as one command, in a temporary directory.
const embeddedRecordBytes = 256 << 20

// startEmbedded starts a host in this process (without a control socket) and, when
// withDemo, the demo app connected to it. The MCP bridge uses it for --embedded-host and
// --demo, 'test run' for --demo. stop shuts both down.

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
	// It records, within embeddedRecordBytes, into the directory it removes when it stops:
	// 'test run --demo --report' links each session's recording, and the MCP bridge's
	// ansight_record_flow reads the agent's calls back from it.
	cfg := hostConfig{stateDir: dir, discovery: discovery, listen: "127.0.0.1:0", logger: discard, version: g.env.Version,
		record: true, recordBytes: embeddedRecordBytes}
	rh, err := startHost(ctx, cfg)
	if err != nil && discovery == host.DefaultDiscoveryAddr && errors.Is(err, syscall.EADDRINUSE) {
		// The standard port was free a moment ago and another host took it since: this one
		// does not need it.
		h, _, _ := net.SplitHostPort(discovery)
		cfg.discovery = net.JoinHostPort(h, "0")
		rh, err = startHost(ctx, cfg)
	}
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
	return rh.Backend(), stop, nil
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
