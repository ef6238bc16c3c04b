package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/conformance"
	"github.com/ansight-go/ansight/examples/notes/notestest"
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/transport"
)

// conformFlags are the flags of ansight conform.
type conformFlags struct {
	demo, lan, allowWrite, list bool
	discovery, listen           string
	timeout, responseTimeout    time.Duration
	checks                      []string
}

func newConformCmd(g *globals) *cobra.Command {
	var f conformFlags
	cmd := &cobra.Command{
		Use:   "conform",
		Short: "Check that an app's Ansight SDK honours the tool protocol",
		Long: `Run the conformance suite against one app: envelopes and correlation, every catalog
form and filter, revisions, call processing order and error codes, after blocks and
evidence, batches, payload compression, ASFT artifacts and malformed requests. Every
check prints pass, fail or skip (with the reason, and the messages exchanged when it
failed), then a summary line. Exit code 0 only when no check failed.

The suite adapts to the app's catalog: checks that need a kind of tool the app does not
have are skipped. It only runs read tools whose arguments are all optional; calls that
must be refused before they run go to read tools, and to write tools only with
--allow-write; critical tools are never called.

  ansight conform                        start a host, wait for one app (any SDK), check it
  ansight conform --lan                  the same for a phone (pair it with an invite)
  ansight conform --demo                 the demo app, in this process (what CI runs)
  ansight conform --demo --json          the same, as one JSON object
  ansight conform --check catalog        only the catalog.* checks
  ansight conform --list                 the names of the checks`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runConform(c.Context(), g, f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.demo, "demo", false, "run the suite against the demo app started in this process (write calls and the demo's scenario allowed)")
	fl.BoolVar(&f.lan, "lan", false, "accept apps from the network (phones), not only this machine")
	fl.StringVar(&f.discovery, "discovery", "", "UDP enrollment address (default 127.0.0.1:45123; [::]:45123, IPv4 and IPv6, with --lan)")
	fl.StringVar(&f.listen, "listen", "", "WebSocket listen address (default: any free port)")
	fl.DurationVar(&f.timeout, "timeout", 2*time.Minute, "how long to wait for an app session")
	fl.DurationVar(&f.responseTimeout, "response-timeout", conformance.DefaultTimeout, "how long to wait for each response")
	fl.BoolVar(&f.allowWrite, "allow-write", false, "let calls that must be refused address write tools when the app has no suitable read tool")
	fl.StringSliceVar(&f.checks, "check", nil, "run only these checks (a name, or a group such as catalog); repeatable")
	fl.BoolVar(&f.list, "list", false, "list the checks and exit")
	return cmd
}

// conformList is the --json form of --list.
type conformList struct {
	Schema string   `json:"schema"`
	Checks []string `json:"checks"`
}

func runConform(ctx context.Context, g *globals, f conformFlags) error {
	if f.list {
		if g.json {
			return writeJSON(g.env.Stdout, conformList{Schema: "ansight.conform-checks/v1", Checks: conformance.Checks()})
		}
		fmt.Fprintln(g.env.Stdout, strings.Join(conformance.Checks(), "\n"))
		return nil
	}
	for _, c := range f.checks {
		if !knownCheck(c) {
			return usageErrorf("--check %q names no check or group (see ansight conform --list)", c)
		}
	}
	opts := conformance.Options{Timeout: f.responseTimeout, AllowWrite: f.allowWrite, Checks: f.checks}
	target, stop, err := liveTarget(ctx, g, f)
	if err != nil {
		return err
	}
	defer stop()
	if f.demo {
		opts.AllowWrite, opts.Scenario = true, notestest.ConformanceScenario()
	}
	if !g.json {
		fmt.Fprintf(g.env.Stderr, "ansight conform: running %d checks\n", len(conformance.Checks()))
	}
	rep := conformance.Run(ctx, target, opts)
	if g.json {
		b, err := rep.JSON()
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(g.env.Stdout, "%s\n", b); err != nil {
			return err
		}
	} else if err := writeReport(g.env.Stdout, rep.WriteText); err != nil {
		return err
	}
	if !rep.OK() {
		return &exitError{code: ExitFailure, err: silentError{}}
	}
	return nil
}

// knownCheck reports whether name is a check or a group of checks.
func knownCheck(name string) bool {
	for _, c := range conformance.Checks() {
		if c == name || strings.HasPrefix(c, name+".") {
			return true
		}
	}
	return false
}

// liveTarget starts a host whose tap hands one session's tool traffic to the suite, waits
// for an app session to open (the demo app, started here, with --demo) and returns the
// suite's end of it. The app goes through the whole session layer: enrollment, upgrade,
// control channel.
func liveTarget(ctx context.Context, g *globals, f conformFlags) (conformance.Target, func(), error) {
	dir, err := os.MkdirTemp("", "ansight-conform-")
	if err != nil {
		return nil, nil, err
	}
	var tap sessionTap
	discard := slog.New(slog.DiscardHandler)
	discovery, listen := f.addresses()
	rh, err := startHost(ctx, hostConfig{stateDir: dir, discovery: discovery, listen: listen, lan: f.lan, logger: discard, version: g.env.Version, tap: tap.feed,
		bindFlags: conformBindFlags})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	stopApp := func() {}
	cleanup := func() {
		stopApp()
		rh.close()
		os.RemoveAll(dir)
	}
	if f.demo {
		stop, err := startDemoApp(ctx, rh, dir, discard, nil, false)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		stopApp = stop
	} else if !g.json {
		st, _ := rh.Backend().Status(ctx)
		fmt.Fprintf(g.env.Stderr, "ansight conform: waiting up to %s for an app (enrollment udp://%s)\n", f.timeout, st.Discovery)
	}
	wait, cancelWait := context.WithTimeoutCause(ctx, f.timeout, fmt.Errorf("no app session opened within %s", f.timeout))
	defer cancelWait()
	sess, err := rh.Server().WaitSession(wait, (*host.Session).Opened)
	if err != nil {
		cleanup()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, err
	}
	t := tap.target(sess)
	if !g.json {
		printf(g.env.Stderr, "ansight conform: session %s (%s)\n", sess.ID(), sess.AppID())
	}
	return t, func() { t.Close(); cleanup() }, nil
}

// addresses are the host's enrollment and WebSocket addresses: free loopback ports for
// the demo app, else the flags' (the standard ones by default, every address with --lan).
func (f conformFlags) addresses() (discovery, listen string) {
	discovery, listen = f.discovery, f.listen
	switch {
	case f.demo:
		discovery, listen = "127.0.0.1:0", "127.0.0.1:0"
	case discovery == "" && f.lan:
		discovery = host.DefaultLANDiscoveryAddr
	case discovery == "":
		discovery = host.DefaultDiscoveryAddr
	}
	if listen == "" {
		listen = host.DefaultListenAddr
		if f.lan {
			listen = host.DefaultLANListenAddr
		}
	}
	return discovery, listen
}

// sessionTap hands one session's inbound tool traffic to the suite once target chose it
// (host.Options.Tap); the host handles everything else.
type sessionTap struct {
	mu sync.Mutex
	t  *conformance.TapTarget
	id string
}

func (st *sessionTap) feed(s *host.Session, typ transport.MessageType, data []byte) bool {
	st.mu.Lock()
	t, id := st.t, st.id
	st.mu.Unlock()
	return t != nil && s.ID() == id && t.Feed(typ, data)
}

// target makes sess the tapped session and returns the suite's end of it.
func (st *sessionTap) target(sess *host.Session) *conformance.TapTarget {
	t := conformance.NewTapTarget(sess.ID(), sess.Send)
	st.mu.Lock()
	st.t, st.id = t, sess.ID()
	st.mu.Unlock()
	return t
}
