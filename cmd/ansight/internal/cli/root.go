package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/hostapi"
)

// Env is what a run of the command tree sees of its process.
type Env struct {
	Args    []string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Version string
	// LookupEnv reads an environment variable (--password-env); os.LookupEnv when nil.
	LookupEnv func(string) (string, bool)
}

// lookupEnv reads an environment variable through env.LookupEnv.
func (env Env) lookupEnv(name string) (string, bool) {
	if env.LookupEnv != nil {
		return env.LookupEnv(name)
	}
	return os.LookupEnv(name)
}

// globals are the flags every command shares.
type globals struct {
	json     bool
	stateDir string
	fleet    fleetFlags
	env      Env
	// ctx is the run's context; cleanup runs when the command ends.
	ctx     context.Context
	cleanup []func()
	// backendOnce holds the backend of the run once made.
	backendMade hostapi.Backend
	// recordings are the read-only recordings commands' --archive and --password-env.
	recordings recordingsFlags
}

// Main runs the command tree and returns the process exit code.
func Main(ctx context.Context, env Env) int {
	g := &globals{env: env, ctx: ctx}
	defer func() {
		for _, f := range g.cleanup {
			f()
		}
	}()
	root := newRoot(g) // defines the flags, resetting g.json
	// --json is read before parsing too, so that errors cobra reports before it parses
	// flags (an unknown command) still come out as JSON.
	for _, a := range env.Args {
		if a == "--json" || a == "--json=true" {
			g.json = true
		}
	}
	root.SetArgs(env.Args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := exitCodeOf(ctx, err)
	if isCobraUsageError(err) {
		code = ExitUsage
	}
	g.reportError(err, code)
	return code
}

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "ansight",
		Short: "Drive the tools inside running apps: host, CLI, MCP bridge and demo",
		Long: `ansight runs the Ansight host, which apps with an Ansight SDK connect to, and drives
their tools from a terminal, a script or an AI agent.

Start here:
  ansight demo                       a host and a demo app, end to end, no phone needed
  ansight host run                   the resident host that apps connect to
  ansight session list               the connected apps
  ansight app tools <session>        what an app offers
  ansight app call <session> <tool> --arguments '{...}'

A device lab: 'ansight host run --fleet nats://…' joins this host to a fleet over NATS;
'ansight --fleet nats://… session list' (and app, mcp) then drive the sessions of every
host of the fleet. See docs/fleet.md.

Exit codes: 0 ok, 1 failure, 2 usage, 4 host unavailable, 5 tool unavailable,
6 access denied, 7 no such session, 10 a flow failed (test run), 130 interrupted.`,
		Version:       versionString(g.env.Version),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("ansight {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: ExitUsage, err: err, hint: "see '" + c.CommandPath() + " --help'"}
	})
	root.PersistentFlags().BoolVar(&g.json, "json", false, "write one JSON object to stdout (stable, versioned)")
	root.PersistentFlags().StringVar(&g.stateDir, "state-dir", "", "host state directory (default: $ANSIGHT_STATE_DIR, else the user's state directory)")
	g.fleet.register(root)
	root.AddCommand(newVersionCmd(g), newSessionCmd(g), newAppCmd(g), newUICmd(g), newPairingCmd(g), newHostCmd(g), newDemoCmd(g), newBenchCmd(g), newConformCmd(g), newMCPCmd(g), newPlayerCmd(g), newTestCmd(g))
	return root
}

func isCobraUsageError(err error) bool {
	var e *exitError
	if errors.As(err, &e) {
		return e.code == ExitUsage
	}
	// cobra reports unknown commands and wrong argument counts as plain errors.
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "accepts ", "requires at least", "requires at most", "invalid argument"} {
		if len(msg) >= len(p) && containsFold(msg, p) {
			return true
		}
	}
	return false
}

func (g *globals) reportError(err error, code int) {
	if errors.As(err, new(silentError)) {
		return // the command already printed its outcome
	}
	var hint, errCode string
	var e *exitError
	if errors.As(err, &e) {
		hint, errCode = e.hint, e.errCode
	}
	msg := err.Error()
	if code == ExitInterrupted {
		msg = "interrupted" // not "context canceled"
	}
	if g.json {
		writeJSON(g.env.Stdout, errorOutput{Schema: schemaError, Error: errorBody{Code: errCode, Message: msg, ExitCode: code, Hint: hint}})
		return
	}
	printf(g.env.Stderr, "ansight: %s\n", msg) // a host's error may quote an app
	if hint != "" {
		printf(g.env.Stderr, "hint: %s\n", hint)
	}
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of ansight",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			v := versionString(g.env.Version)
			if g.json {
				return writeJSON(g.env.Stdout, versionOutput{Schema: schemaVersion, Version: v})
			}
			fmt.Fprintf(g.env.Stdout, "ansight %s\n", v)
			return nil
		},
	}
}

// versionString prefers the linker-set version, then the module version.
func versionString(v string) string {
	if v != "" {
		return v
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
