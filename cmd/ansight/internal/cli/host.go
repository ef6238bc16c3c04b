package cli

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/fleet"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/player"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/wire/session"
)

func newHostCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "host", Short: "Run, inspect and stop the resident host"}
	var discovery, listen, wsPorts string
	var lan, verbose bool
	var playerAddr string
	var noPlayer bool
	var noRecord, maskSensitive bool
	var recordMiB int64
	var jpegInterval time.Duration
	var jpegQuality int
	var maxSessions int
	var fleetHost string
	run := &cobra.Command{
		Use:   "run",
		Short: "Run the host that apps connect to (until Ctrl-C or 'ansight host stop')",
		Long: `Run the resident host: the UDP enrollment listener apps send ENROLLMENT_CONNECT to (port
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
'ansight --fleet <url> session list' and 'app call'. See docs/fleet.md.`,
		Example: "  ansight host run\n  ansight host run --lan\n  ansight host run --lan --websocket-port 56510\n  ansight host run --discovery 127.0.0.1:46123\n" +
			"  ansight host run --fleet nats://lab.example:4222 --fleet-host-name bench-3\n" +
			"  ANSIGHT_FLEET_PASSWORD=… ansight host run --fleet tls://lab.example:4222 --fleet-user lab-host",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := checkJpegFlags(jpegInterval, jpegQuality); err != nil {
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
			if verbose {
				level = slog.LevelDebug
			}
			logger := slog.New(slog.NewTextHandler(g.env.Stderr, &slog.HandlerOptions{Level: level}))
			if discovery == "" {
				discovery = host.DefaultDiscoveryAddr
				if lan {
					discovery = host.DefaultLANDiscoveryAddr
				}
			}
			listenPort := ""
			if listen == "" {
				listen = host.DefaultListenAddr
				if lan {
					listen = host.DefaultLANListenAddr
				}
			} else if _, p, err := net.SplitHostPort(listen); err == nil {
				listenPort = p
			}
			var ports host.PortRange
			switch {
			case wsPorts != "":
				if listenPort != "" && listenPort != "0" {
					return usageErrorf("give the WebSocket port with --listen or --websocket-port, not both")
				}
				if ports, err = host.ParsePortRange(wsPorts); err != nil {
					return usageErrorf("--websocket-port: %v", err)
				}
			case lan && (listenPort == "" || listenPort == "0"):
				ports = host.OfficialWebSocketPorts
			}
			if noPlayer {
				playerAddr = ""
			}
			cfg := hostConfig{stateDir: dir, discovery: discovery, listen: listen, ports: ports, lan: lan,
				serveControl: true, logger: logger, version: g.env.Version, player: playerAddr, bindFlags: hostRunBindFlags,
				record: !noRecord, recordBytes: recordMiB << 20, maskSensitive: maskSensitive, maxSessions: maxSessions, jpeg: session.JpegCapturePolicy{
					Mode: session.JpegCaptureApp, IntervalMilliseconds: int(jpegInterval.Milliseconds()), Quality: jpegQuality}}
			if err := g.joinFleetConfig(&cfg, fleetHost, logger); err != nil {
				return err
			}
			rh, err := startHost(c.Context(), cfg)
			if err != nil {
				return hostErr(err)
			}
			defer rh.close()
			st, _ := rh.Backend().Status(c.Context())
			if g.json {
				writeJSON(g.env.Stdout, st)
			} else {
				fmt.Fprintf(g.env.Stdout, "ansight host %s running (pid %d)\n", st.Version, st.PID)
				fmt.Fprintf(g.env.Stdout, "  enrollment  udp://%s%s\n  websocket   ws://%s/ws%s\n  control     %s\n",
					st.Discovery, listenNote(st, false), st.WebSocket, listenNote(st, true), rh.SocketPath())
				if rh.PlayerURL() != "" {
					fmt.Fprintf(g.env.Stdout, "  player      %s\n", rh.PlayerURL())
				}
				if u := st.Recording; u != nil {
					printf(g.env.Stdout, "  recordings  %s (up to %s; ansight session list --all)\n", u.Dir, humanBytes(u.MaxBytes))
				}
				if cfg.fleet != nil {
					fmt.Fprintf(g.env.Stdout, "  fleet       %s as host %s, at %s\n", rh.Member().Fleet(), rh.Member().Host(), fleet.RedactURL(cfg.fleet.URL))
				}
				if !lan {
					fmt.Fprintln(g.env.Stdout, "  loopback only: apps on this machine connect in local mode (--lan for phones)")
				}
				if limit := host.FileLimit(st.FileLimit); !limit.Enough() {
					printf(g.env.Stdout, "  warning     %s\n", limit)
				}
				fmt.Fprintln(g.env.Stdout, "Press Ctrl-C to stop.")
			}
			select {
			case <-c.Context().Done():
			case <-rh.Done():
			}
			return nil
		},
	}
	run.Flags().StringVar(&discovery, "discovery", "", "UDP enrollment address (default 127.0.0.1:45123; [::]:45123, IPv4 and IPv6, with --lan)")
	run.Flags().StringVar(&listen, "listen", "", "WebSocket listen address (default 127.0.0.1:0, any free port; [::] with --lan)")
	run.Flags().StringVar(&wsPorts, "websocket-port", "", "WebSocket port or range FIRST-LAST: the first free one is used (default with --lan: 56500-56599, as the official host)")
	run.Flags().BoolVar(&lan, "lan", false, "serve phones and other machines on the network (they pair with invites)")
	run.Flags().BoolVarP(&verbose, "verbose", "v", false, "log debug details (tokens are never logged)")
	run.Flags().StringVar(&playerAddr, "player", player.DefaultAddr, "loopback address of the web player (its URL, with this run's token, is printed)")
	run.Flags().BoolVar(&noPlayer, "no-player", false, "do not serve the web player")
	run.Flags().BoolVar(&noRecord, "no-record", false, "do not keep session recordings (logs, metrics, network, screen, tool traffic) in the state directory")
	run.Flags().BoolVar(&maskSensitive, "mask-sensitive", false, "mask screens before they are recorded: frames boxed over sensitive nodes of the latest visual tree (blacked out without one), touches on them and typed secrets not kept (for official SDKs' apps; SECURITY.md)")
	run.Flags().Int64Var(&recordMiB, "record-budget", recording.DefaultMaxBytes>>20, "MiB the recordings may use; the oldest records are evicted beyond")
	run.Flags().DurationVar(&jpegInterval, "jpeg-interval", 2*time.Second, "interval (50ms-10m) of the live screen frames apps are asked to stream")
	run.Flags().IntVar(&jpegQuality, "jpeg-quality", host.DefaultJpegQuality, "JPEG quality (1-100) of the live screen frames apps are asked to stream")
	run.Flags().IntVar(&maxSessions, "max-sessions", host.DefaultMaxSessions, "sessions connected at once (each app installation holds at most 4); the open-file limit is raised to fit, as far as the system allows")
	addFleetHostFlag(run, &fleetHost)

	status := &cobra.Command{
		Use:   "status",
		Short: "Show whether a host is running, and where (with --fleet: the fleet's hosts)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			b, err := g.backend()
			if err != nil {
				return err
			}
			if fc, ok := b.(*fleet.Client); ok {
				return g.printFleetHosts(fc)
			}
			st, err := b.Status(c.Context())
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
		},
	}
	stop := &cobra.Command{
		Use:   "stop",
		Short: "Stop the resident host",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			b, err := g.backend()
			if err != nil {
				return err
			}
			if err := b.Shutdown(c.Context()); err != nil {
				return hostErr(err)
			}
			if g.json {
				return writeJSON(g.env.Stdout, struct {
					Schema  string `json:"schema"`
					Stopped bool   `json:"stopped"`
				}{"ansight.host-stop/v1", true})
			}
			fmt.Fprintln(g.env.Stdout, "host stopping")
			return nil
		},
	}
	cmd.AddCommand(run, status, stop)
	return cmd
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
