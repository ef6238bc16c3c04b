package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/fleet"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/internal/durtext"
	"github.com/ansight-go/ansight/player"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/wire/session"
)

func newHostCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "host", Short: "Run, inspect and stop the resident host"}
	cmd.AddCommand(newHostRunCmd(g), newHostStatusCmd(g), newHostStopCmd(g))
	return cmd
}

// hostRunOptions are the flags of 'ansight host run'.
type hostRunOptions struct {
	discovery, listen, wsPorts string
	lan, verbose               bool
	playerAddr                 string
	noPlayer, noRecord         bool
	maskSensitive              bool
	recordMiB                  int64
	jpegInterval               time.Duration
	jpegQuality                int
	maxSessions                int
	fleetHost                  string
	// callTimeout is the host's default limit of a call (hidden: tests lower it, so that
	// a call longer than the default takes a second, not 20).
	callTimeout time.Duration
}

const hostRunLong = `Run the resident host: the UDP enrollment listener apps send ENROLLMENT_CONNECT to (port
45123), the WebSocket listener they upgrade on, and the control API the other commands
use (a Unix socket in the state directory, reachable only by you).

By default everything listens on loopback: desktop apps, iOS simulators and Android
emulators on this machine connect in local mode. --lan serves phones and other machines,
which pair with an invite ('ansight pairing issue --qr'): it listens on every address,
IPv4 and IPv6, and takes the WebSocket port from 56500-56599, the official host's range,
so that firewall rules written for it work (--websocket-port pins another port or range).

--fleet joins a device lab: the host announces its sessions to the fleet's NATS server
and serves the fleet's requests for them, under the grants it holds; its player shows
every host of the fleet. Other machines then reach its sessions with
'ansight --fleet <url> session list' and 'app call'. See docs/fleet.md.`

func newHostRunCmd(g *globals) *cobra.Command {
	o := &hostRunOptions{}
	run := &cobra.Command{
		Use:   "run",
		Short: "Run the host that apps connect to (until Ctrl-C or 'ansight host stop')",
		Long:  hostRunLong,
		Example: "  ansight host run\n  ansight host run --lan\n  ansight host run --lan --websocket-port 56510\n  ansight host run --discovery 127.0.0.1:46123\n" +
			"  ansight host run --fleet nats://lab.example:4222 --fleet-host-name bench-3\n" +
			"  ANSIGHT_FLEET_PASSWORD=… ansight host run --fleet tls://lab.example:4222 --fleet-user lab-host",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return o.run(c.Context(), g) },
	}
	f := run.Flags()
	f.StringVar(&o.discovery, "discovery", "", "UDP enrollment address (default 127.0.0.1:45123; [::]:45123, IPv4 and IPv6, with --lan)")
	f.StringVar(&o.listen, "listen", "", "WebSocket listen address (default 127.0.0.1:0, any free port; [::] with --lan)")
	f.StringVar(&o.wsPorts, "websocket-port", "", "WebSocket port or range FIRST-LAST: the first free one is used (default with --lan: 56500-56599, as the official host)")
	f.BoolVar(&o.lan, "lan", false, "serve phones and other machines on the network (they pair with invites)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log debug details (tokens are never logged)")
	f.StringVar(&o.playerAddr, "player", player.DefaultAddr, "loopback address of the web player (its URL, with this run's token, is printed)")
	f.BoolVar(&o.noPlayer, "no-player", false, "do not serve the web player")
	f.BoolVar(&o.noRecord, "no-record", false, "do not keep session recordings (logs, metrics, network, screen, tool traffic) in the state directory")
	f.BoolVar(&o.maskSensitive, "mask-sensitive", false, "mask screens before they are recorded: frames boxed over sensitive nodes of the latest visual tree (blacked out without one), touches on them and typed secrets not kept (for official SDKs' apps; SECURITY.md)")
	f.Int64Var(&o.recordMiB, "record-budget", recording.DefaultMaxBytes>>20, "MiB the recordings may use; the oldest records are evicted beyond")
	f.DurationVar(&o.jpegInterval, "jpeg-interval", 2*time.Second, "interval (50ms-10m) of the live screen frames apps are asked to stream")
	f.IntVar(&o.jpegQuality, "jpeg-quality", host.DefaultJpegQuality, "JPEG quality (1-100) of the live screen frames apps are asked to stream")
	f.DurationVar(&o.callTimeout, "call-timeout", 0, "the default limit of a call that asks for none (default 20s)")
	f.MarkHidden("call-timeout")
	f.IntVar(&o.maxSessions, "max-sessions", host.DefaultMaxSessions, "sessions connected at once (each app installation holds at most 4); the open-file limit is raised to fit, as far as the system allows")
	addFleetHostFlag(run, &o.fleetHost)
	return run
}

// run runs the host until Ctrl-C or a client's 'ansight host stop'.
func (o *hostRunOptions) run(ctx context.Context, g *globals) error {
	if err := checkJpegFlags(o.jpegInterval, o.jpegQuality); err != nil {
		return err
	}
	dir, err := g.stateDirPath()
	if err != nil {
		return err
	}
	lock, err := lockStateDir(dir) // before binding anything
	if err != nil {
		return err
	}
	defer lock.release()
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(g.env.Stderr, &slog.HandlerOptions{Level: level}))
	cfg, err := o.config(dir, logger, g.env.Version)
	if err != nil {
		return err
	}
	if err := g.joinFleetConfig(&cfg, o.fleetHost, logger); err != nil {
		return err
	}
	rh, err := startHost(ctx, cfg)
	if err != nil {
		return hostErr(err)
	}
	defer rh.close()
	st, _ := rh.Backend().Status(ctx)
	if g.json {
		writeJSON(g.env.Stdout, st)
	} else {
		o.printRunning(g.env.Stdout, rh, st, cfg)
	}
	why := "asked to stop ('ansight host stop')"
	select {
	case <-ctx.Done():
		why = "interrupted"
	case <-rh.Done():
	}
	logger.Info("host stopping", "reason", why)
	rh.close()
	logger.Info("host stopped")
	return nil
}

// config turns the flags into the host's configuration: the addresses (loopback, or every
// address with --lan), the WebSocket port range, the player, the recordings, the live
// screen policy.
func (o *hostRunOptions) config(dir string, logger *slog.Logger, version string) (hostConfig, error) {
	discovery, listen := o.discovery, o.listen
	if discovery == "" {
		discovery = host.DefaultDiscoveryAddr
		if o.lan {
			discovery = host.DefaultLANDiscoveryAddr
		}
	}
	listenPort := ""
	if listen == "" {
		listen = host.DefaultListenAddr
		if o.lan {
			listen = host.DefaultLANListenAddr
		}
	} else if _, p, err := net.SplitHostPort(listen); err == nil {
		listenPort = p
	}
	var ports host.PortRange
	switch {
	case o.wsPorts != "":
		if listenPort != "" && listenPort != "0" {
			return hostConfig{}, usageErrorf("give the WebSocket port with --listen or --websocket-port, not both")
		}
		var err error
		if ports, err = host.ParsePortRange(o.wsPorts); err != nil {
			return hostConfig{}, usageErrorf("--websocket-port: %v", err)
		}
	case o.lan && (listenPort == "" || listenPort == "0"):
		ports = host.OfficialWebSocketPorts
	}
	playerAddr := o.playerAddr
	if o.noPlayer {
		playerAddr = ""
	}
	return hostConfig{stateDir: dir, discovery: discovery, listen: listen, ports: ports, lan: o.lan,
		serveControl: true, logger: logger, version: version, player: playerAddr, bindFlags: hostRunBindFlags,
		record: !o.noRecord, recordBytes: o.recordMiB << 20, maskSensitive: o.maskSensitive, maxSessions: o.maxSessions, callTimeout: o.callTimeout, jpeg: session.JpegCapturePolicy{
			Mode: session.JpegCaptureApp, IntervalMilliseconds: int(o.jpegInterval.Milliseconds()), Quality: o.jpegQuality}}, nil
}

// printRunning says where the running host listens.
func (o *hostRunOptions) printRunning(w io.Writer, rh *runningHost, st *hostapi.Status, cfg hostConfig) {
	fmt.Fprintf(w, "ansight host %s running (pid %d)\n", st.Version, st.PID)
	fmt.Fprintf(w, "  enrollment  udp://%s%s\n  websocket   ws://%s/ws%s\n  control     %s\n",
		st.Discovery, listenNote(st, false), st.WebSocket, listenNote(st, true), rh.SocketPath())
	if u := rh.PlayerURL(); u != "" {
		fmt.Fprintf(w, "  player      %s\n", u)
	}
	if u := st.Recording; u != nil {
		printf(w, "  recordings  %s (up to %s; ansight session list --all)\n", u.Dir, humanBytes(u.MaxBytes))
	}
	if m := rh.Member(); m != nil {
		fmt.Fprintf(w, "  fleet       %s as host %s, at %s\n", m.Fleet(), m.Host(), fleet.RedactURL(cfg.fleet.URL))
	}
	if !o.lan {
		fmt.Fprintln(w, "  loopback only: apps on this machine connect in local mode (--lan for phones)")
	}
	if limit := host.FileLimit(st.FileLimit); !limit.Enough() {
		printf(w, "  warning     %s\n", limit)
	}
	fmt.Fprintln(w, "Press Ctrl-C to stop.")
}

func newHostStatusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show whether a host is running, and where (with --fleet: the fleet's hosts)",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return runHostStatus(c.Context(), g) },
	}
}

// runHostStatus is 'ansight host status'.
func runHostStatus(ctx context.Context, g *globals) error {
	b, err := g.backend()
	if err != nil {
		return err
	}
	if fc, ok := fleetOf(b); ok {
		return g.printFleetHosts(fc)
	}
	st, err := b.Status(ctx)
	if err != nil {
		return hostErr(err)
	}
	if g.json {
		return writeJSON(g.env.Stdout, st)
	}
	tw := newTable(g.env.Stdout)
	tw.row("host:", "running (pid "+fmt.Sprint(st.PID)+", "+st.Version+")")
	tw.row("since:", ago(st.StartedAt))
	tw.row("enrollment:", "udp://"+st.Discovery+listenNote(st, false))
	tw.row("websocket:", "ws://"+st.WebSocket+"/ws"+listenNote(st, true))
	tw.row("lan:", fmt.Sprint(st.LAN))
	sessions := fmt.Sprint(st.Sessions) + " connected"
	if st.FileLimit.Sessions > 0 {
		sessions += fmt.Sprintf(", at most %d", st.FileLimit.Sessions)
	}
	tw.row("sessions:", sessions)
	tw.row("files:", host.FileLimit(st.FileLimit).String())
	if st.Player != "" {
		tw.row("player:", st.Player+" (open it: ansight player open)")
	} else {
		tw.row("player:", "off (--no-player)")
	}
	tw.row("state:", st.StateDir)
	tw.row("recordings:", recordingUsage(st.Recording))
	tw.flush()
	return nil
}

func newHostStopCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "stop",
		Short: "Stop the resident host",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return runHostStop(c.Context(), g) },
	}
}

// hostStopWait bounds how long 'ansight host stop' waits for the host to exit: it closes
// its sessions, player and recordings first, which takes well under a second unless the
// machine is very busy; a host still running after this long is reported, not waited for.
const hostStopWait = 30 * time.Second

// runHostStop is 'ansight host stop': it asks the host to stop, then waits (up to
// hostStopWait) until it has exited — its state directory's lock is free — so that a
// script may start another host on the same directory at once.
func runHostStop(ctx context.Context, g *globals) error {
	b, err := g.backend()
	if err != nil {
		return err
	}
	st, err := b.Status(ctx)
	if err != nil {
		return hostErr(err)
	}
	if err := b.Shutdown(ctx); err != nil {
		return hostErr(err)
	}
	if _, fleet := fleetOf(b); !fleet && st.StateDir != "" {
		if err := waitHostExit(ctx, st.StateDir, hostStopWait); err != nil {
			return &exitError{code: ExitFailure, err: fmt.Errorf("the host (pid %d) was asked to stop but still runs after %s", st.PID, durtext.Format(hostStopWait)),
				hint: "it may be closing a slow connection; 'ansight host status' shows whether it still runs"}
		}
	}
	if g.json {
		return writeJSON(g.env.Stdout, struct {
			Schema  string `json:"schema"`
			Stopped bool   `json:"stopped"`
			PID     int    `json:"pid,omitzero"`
		}{"ansight.host-stop/v1", true, st.PID})
	}
	fmt.Fprintf(g.env.Stdout, "host stopped (pid %d)\n", st.PID)
	return nil
}

// waitHostExit waits until no host holds dir's lock (lockStateDir), at most limit.
func waitHostExit(ctx context.Context, dir string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for !lockFree(dir) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// recordingUsage describes the recordings' use of their budget for host status.
func recordingUsage(u *hostapi.RecordingUsage) string {
	if u == nil {
		return "off (--no-record)"
	}
	line := fmt.Sprintf("%s of %s (%d%%; %s per session), %d sessions, %d records, %s on disk, in %s",
		humanBytes(u.Bytes), humanBytes(u.MaxBytes), u.Bytes*100/max(u.MaxBytes, 1), humanBytes(u.MaxSessionBytes),
		u.Sessions, u.Records, humanBytes(u.DiskBytes), u.Dir)
	if u.Dropped > 0 || u.Evicted > 0 || u.Thinned > 0 {
		line += fmt.Sprintf("; since start %d dropped, %d frames thinned, %d evicted", u.Dropped, u.Thinned, u.Evicted)
	}
	return line
}

// listenNote says how a listener of the status listens: dual-stack, and the port range
// the WebSocket port came from.
func listenNote(st *hostapi.Status, websocket bool) string {
	var notes []string
	if st.DualStack {
		notes = append(notes, "IPv4 and IPv6")
	}
	if websocket && st.WebSocketPorts != "" {
		notes = append(notes, "port range "+st.WebSocketPorts)
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}

// checkJpegFlags refuses a live-screen interval or quality that the host would refuse.
func checkJpegFlags(interval time.Duration, quality int) error {
	lo, hi := host.MinJpegIntervalMilliseconds*time.Millisecond, host.MaxJpegIntervalMilliseconds*time.Millisecond
	if interval < lo || interval > hi {
		return usageErrorf("--jpeg-interval %s is out of range: give %s to %s", interval, lo, hi)
	}
	if quality < host.MinJpegQuality || quality > host.MaxJpegQuality {
		return usageErrorf("--jpeg-quality %d is out of range: give %d to %d", quality, host.MinJpegQuality, host.MaxJpegQuality)
	}
	return nil
}
