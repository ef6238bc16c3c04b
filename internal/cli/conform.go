package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/conformance"
	"github.com/ansight-go/ansight/examples/demoapp/demo"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
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
	fl.StringVar(&f.discovery, "discovery", "", "UDP enrollment address (default 127.0.0.1:45123; 0.0.0.0:45123 with --lan)")
	fl.StringVar(&f.listen, "listen", "", "WebSocket listen address (default: any free port)")
	fl.DurationVar(&f.timeout, "timeout", 2*time.Minute, "how long to wait for an app session")
	fl.DurationVar(&f.responseTimeout, "response-timeout", conformance.DefaultTimeout, "how long to wait for each response")
	fl.BoolVar(&f.allowWrite, "allow-write", false, "let calls that must be refused address write tools when the app has no suitable read tool")
	fl.StringSliceVar(&f.checks, "check", nil, "run only these checks (a name, or a group such as catalog); repeatable")
	fl.BoolVar(&f.list, "list", false, "list the checks and exit")
	// The live-session flags wait for the host's raw session access (see waitLiveTarget).
	for _, name := range []string{"lan", "discovery", "listen", "timeout"} {
		fl.MarkHidden(name)
	}
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
	var target conformance.Target
	if f.demo {
		t, stop, err := startDemoTarget(ctx)
		if err != nil {
			return err
		}
		defer stop()
		target = t
		opts.AllowWrite, opts.Scenario = true, demoScenario()
	} else {
		t, stop, err := waitLiveTarget(ctx, g, f)
		if err != nil {
			return err
		}
		defer stop()
		target = t
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
	} else if err := rep.WriteText(g.env.Stdout); err != nil {
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

// demoScenario is what the suite needs to know about the demo app to run every check:
// signing in makes the sync tools available (and signing out undoes it), a large result
// and a generated file.
func demoScenario() conformance.Scenario {
	return conformance.Scenario{
		ToggleAvailability:  []wire.Call{{ToolID: "account.sign_in", Arguments: jsontext.Value(`{"userName":"conformance"}`)}},
		RestoreAvailability: []wire.Call{{ToolID: "account.sign_out", Arguments: jsontext.Value(`{}`)}},
		LargeResult:         &wire.Call{ToolID: "data.large_result", Arguments: jsontext.Value(`{"sizeBytes":100000}`)},
		Artifact:            &wire.Call{ToolID: "files.generate", Arguments: jsontext.Value(`{"sizeBytes":200000,"pattern":"random"}`)},
	}
}

// startDemoTarget runs the demo app in this process, connected over a loopback WebSocket
// to a listener the suite reads, and returns the suite's end.
//
// The demo does not go through the host's session layer: the suite needs the raw
// messages of the connection, which a host session does not expose yet (see
// waitLiveTarget).
func startDemoTarget(ctx context.Context) (conformance.Target, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	accepted := make(chan transport.Conn, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ws" {
			http.NotFound(w, r)
			return
		}
		if c, err := transport.Accept(w, r, transport.AcceptOptions{}); err == nil {
			select {
			case accepted <- c:
			default:
				c.Close(transport.StatusPolicyViolation, "one app only")
			}
		}
	})}
	go srv.Serve(ln)

	a := app.New(app.Options{Guard: catalog.GuardFullAccess})
	if err := demo.New(demo.Options{}).Register(a); err != nil {
		srv.Close()
		return nil, nil, err
	}
	conn, err := transport.Dial(ctx, "ws://"+ln.Addr().String()+"/ws", transport.DialOptions{})
	if err != nil {
		srv.Close()
		return nil, nil, fmt.Errorf("connect the demo app: %w", err)
	}
	appCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { a.Serve(appCtx, conn, app.ServeOptions{}) })
	var hostEnd transport.Conn
	select {
	case hostEnd = <-accepted:
	case <-ctx.Done():
		cancel()
		conn.Close(transport.StatusGoingAway, "")
		wg.Wait()
		srv.Close()
		return nil, nil, ctx.Err()
	}
	target := conformance.NewConnTarget(hostEnd, "demo-conform-001")
	return target, func() {
		target.Close()
		cancel()
		conn.Close(transport.StatusNormalClosure, "")
		wg.Wait()
		srv.Close()
	}, nil
}

// errLiveSessions explains why only --demo runs for now.
var errLiveSessions = errors.New("running the suite against a live app session needs raw access to the session's messages, which the host does not offer yet")

// waitLiveTarget would start a host (loopback, or --lan), wait for one app session and
// return a target over it. The suite must send arbitrary bytes and see every message the
// app writes, which needs two things from package host that it does not have yet: a tap
// on each session's inbound messages ahead of its tool client, and a raw send on the
// session's connection. Until then the command refuses at once rather than making the
// user start an app for nothing.
func waitLiveTarget(ctx context.Context, g *globals, f conformFlags) (conformance.Target, func(), error) {
	return nil, nil, &exitError{code: ExitFailure, err: errLiveSessions,
		hint: "use 'ansight conform --demo', or run the conformance package from a Go test against your app's connection"}
}
