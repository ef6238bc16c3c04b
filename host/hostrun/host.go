package hostrun

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ansight-go/ansight/fleet"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/host/control"
	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/player"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/wire"
)

// Options configures a complete host. The zero value of each optional member leaves its
// part out.
type Options struct {
	// StateDir holds the host's state: the pairing store, artifacts (artifacts/), session
	// recordings (recordings/), the player's access token (player-token) and the control
	// socket (host.sock). Required; it should be private (privdir rules: see
	// hostapi.DefaultStateDir).
	StateDir string
	// Host configures the session server: its addresses, logger, limits. Start sets its
	// StateDir and Recorder, defaults Tools.ArtifactDir to <StateDir>/artifacts, and feeds
	// Tools.OnTraffic and OnFrame to the player as well as to the functions given.
	Host host.Options
	// Version is what the control API reports and the player shows.
	Version string
	// Record keeps session recordings in <StateDir>/recordings, within RecordBytes
	// (recording.DefaultMaxBytes when 0).
	Record      bool
	RecordBytes int64
	// MaskSensitive masks screens on intake (recording.Options.MaskSensitive): frames
	// boxed over sensitive nodes or blacked out, touches on them and typed secrets not kept.
	MaskSensitive bool
	// Player, when set, serves the web player on this listener (see player.Listen, a
	// loopback address); the token kept in <StateDir>/player-token opens it. Start owns
	// the listener from the call on: it closes it on failure and at Close.
	Player net.Listener
	// Control serves the control API on <StateDir>/host.sock (hostapi.SocketName) at once;
	// Host.ServeControl serves it later.
	Control bool
	// Fleet, when set, joins the host to that device lab under the name FleetHost; the
	// player then shows every host of the fleet.
	Fleet     *fleet.Config
	FleetHost string
}

// Host is a running host: the session server, its control API in process and, as asked,
// its recorder, web player, control socket and fleet membership.
type Host struct {
	opts Options
	srv  *host.Server
	api  *control.Backend
	rec  *recording.Recorder // nil when not recording
	done chan struct{}       // closed when a client asks the host to stop

	// The control socket, once served.
	socket      string
	httpSrv     *http.Server
	stopControl context.CancelFunc // ends the control API's requests (its server's base context)

	// The web player, when served, at playerAddr.
	player     *player.Player
	playerSrv  *http.Server
	playerAddr string

	// The fleet membership, and the fleet as the player sees it.
	member    *fleet.Member
	fleetView *fleet.Client

	closeOnce sync.Once
}

// Start starts a host as opts says: the recorder, the session server (which binds its UDP
// enrollment and WebSocket listeners), its control API, the fleet membership, the player
// and the control socket. On failure everything started is stopped again. Close stops the
// host.
func Start(ctx context.Context, opts Options) (*Host, error) {
	if opts.StateDir == "" {
		closeListener(opts.Player)
		return nil, errors.New("hostrun: a state directory is required")
	}
	h := &Host{opts: opts, done: make(chan struct{})}
	if err := h.start(ctx); err != nil {
		closeListener(opts.Player)
		h.Close()
		return nil, err
	}
	return h, nil
}

func (h *Host) start(ctx context.Context) error {
	opts := h.opts.Host
	opts.StateDir = h.opts.StateDir
	if h.opts.Record {
		rec, err := recording.Open(recording.Options{Dir: filepath.Join(h.opts.StateDir, "recordings"), MaxBytes: h.opts.RecordBytes,
			MaskSensitive: h.opts.MaskSensitive, Logger: opts.Logger})
		if err != nil {
			return err
		}
		h.rec, opts.Recorder = rec, rec
	}
	if opts.Tools.ArtifactDir == "" {
		opts.Tools.ArtifactDir = filepath.Join(h.opts.StateDir, "artifacts")
	}
	var pl atomic.Pointer[player.Player] // set once the player runs; the hooks fire before
	onTraffic, onFrame := opts.Tools.OnTraffic, opts.OnFrame
	opts.Tools.OnTraffic = func(ev wire.TrafficEvent) {
		if onTraffic != nil {
			onTraffic(ev)
		}
		if p := pl.Load(); p != nil {
			p.OnTraffic(ev)
		}
	}
	opts.OnFrame = func(id string, f wire.ASJPFrame) {
		if onFrame != nil {
			onFrame(id, f)
		}
		if p := pl.Load(); p != nil {
			p.OnFrame(id, f)
		}
	}
	srv, err := host.New(opts)
	if err == nil {
		if err = srv.Start(ctx); err != nil {
			err = fmt.Errorf("start host: %w", err)
		}
	}
	if err != nil {
		return err
	}
	h.srv = srv
	var stopOnce sync.Once
	h.api = control.New(srv, control.Options{
		Version:  h.opts.Version,
		StateDir: h.opts.StateDir,
		Shutdown: func() { stopOnce.Do(func() { close(h.done) }) },
		Recorder: h.rec,
	})
	if opts.Tap == nil { // a tap watches the session's own traffic: the host sends nothing unasked
		go prefetchCatalogs(srv)
	}
	if h.opts.Fleet != nil {
		if err := h.joinFleet(ctx, opts.Tools.ArtifactDir); err != nil {
			return err
		}
	}
	if h.opts.Player != nil {
		if err := h.servePlayer(opts.Tools.ArtifactDir); err != nil {
			return err
		}
		pl.Store(h.player)
	}
	if h.opts.Control {
		return h.ServeControl()
	}
	return nil
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

// joinFleet makes the host a member of the fleet and, for its player, a client of the
// whole fleet that serves this host's own sessions in process.
func (h *Host) joinFleet(ctx context.Context, artifactDir string) error {
	m, err := fleet.Join(ctx, h.api, fleet.MemberOptions{Config: *h.opts.Fleet, Host: h.opts.FleetHost, Version: h.opts.Version})
	if err != nil {
		return err
	}
	h.member = m
	if h.opts.Player == nil {
		return nil
	}
	c, err := fleet.Dial(ctx, fleet.ClientOptions{Config: *h.opts.Fleet, ArtifactDir: filepath.Join(artifactDir, "fleet"), Version: h.opts.Version,
		Home: &fleet.Home{Name: h.opts.FleetHost, Backend: h.api}})
	if err != nil {
		return err
	}
	h.fleetView = c
	return nil
}

// ServeControl serves the control API on the socket in the state directory, if it is not
// served yet: the other commands, scripts and the MCP bridge reach the host there.
func (h *Host) ServeControl() error {
	if h.httpSrv != nil {
		return nil
	}
	socket := filepath.Join(h.opts.StateDir, hostapi.SocketName)
	l, err := hostapi.Listen(socket)
	if err != nil {
		return err
	}
	// Requests that stream until the client leaves (session logs --follow) end when the
	// host closes, rather than holding its shutdown up.
	ctx, cancel := context.WithCancel(context.Background())
	h.socket, h.stopControl = socket, cancel
	h.httpSrv = &http.Server{Handler: hostapi.NewHandler(h.api), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go h.httpSrv.Serve(l)
	return nil
}

// servePlayer serves the web player on the listener of Options.Player.
func (h *Host) servePlayer(artifactDir string) error {
	token, err := playerToken(h.opts.StateDir, false)
	if err != nil {
		return err
	}
	var backend hostapi.Backend = h.api
	if h.fleetView != nil {
		backend = h.fleetView
	}
	p, err := player.New(hostapi.WithOrigin(backend, hostapi.OriginPlayer), player.Options{Token: token, ArtifactDir: artifactDir, Version: h.opts.Version, Logger: h.opts.Host.Logger})
	if err != nil {
		return err
	}
	h.player, h.playerAddr = p, h.opts.Player.Addr().String()
	h.playerSrv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go h.playerSrv.Serve(h.opts.Player)
	h.api.SetPlayer(playerAccess{h})
	return nil
}

// Server is the session server.
func (h *Host) Server() *host.Server { return h.srv }

// Backend is the host's control API in process: what the control socket serves.
func (h *Host) Backend() *control.Backend { return h.api }

// Recorder keeps the session recordings; nil when the host records nothing.
func (h *Host) Recorder() *recording.Recorder { return h.rec }

// SocketPath is the control socket's path, once served ("" before).
func (h *Host) SocketPath() string { return h.socket }

// Member is the host's membership of a fleet; nil outside one.
func (h *Host) Member() *fleet.Member { return h.member }

// Done is closed when a client of the control API asks the host to stop (ansight host
// stop); the owner then calls Close.
func (h *Host) Done() <-chan struct{} { return h.done }

// PlayerURL returns the URL that opens the web player, with its access token; "" when the
// host serves no player. Show it to the user, never log it.
func (h *Host) PlayerURL() string {
	if h.player == nil {
		return ""
	}
	return h.player.URL(h.playerAddr)
}

// Close stops the player and the control API, leaves the fleet, then stops the host and,
// once everything it recorded is written, the recorder.
func (h *Host) Close() error {
	h.closeOnce.Do(h.close)
	return nil
}

func (h *Host) close() {
	if h.playerSrv != nil {
		h.player.Close() // ends the live streams, which Shutdown would wait for
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		h.playerSrv.Shutdown(ctx)
		cancel()
	}
	if h.httpSrv != nil {
		h.stopControl()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		h.httpSrv.Shutdown(ctx)
		cancel()
		os.Remove(h.socket)
	}
	if h.fleetView != nil {
		h.fleetView.Close()
	}
	if h.member != nil {
		h.member.Close() // leaves the fleet before the sessions end
	}
	if h.srv != nil {
		h.srv.Close()
	}
	if h.rec != nil {
		h.rec.Close() // after the host: everything it recorded is written
	}
}

func closeListener(l net.Listener) {
	if l != nil {
		l.Close()
	}
}
