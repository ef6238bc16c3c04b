package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/internal/editdist"
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

// Process runs Main as a process's command: Ctrl-C (SIGINT) and SIGTERM cancel its
// context, so that the commands that run until interrupted (host run, demo
// --keep-running, mcp, player) stop cleanly and exit 0. Asking for SIGINT also takes it
// back when the process was started with it ignored, as a shell without job control
// starts 'cmd &': a Go program that does not ask keeps it ignored and ignores Ctrl-C. The
// binary and the test scripts' ansight both run the tree through Process.
func Process(env Env) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Main(ctx, env)
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
	// The completion command now rather than at Execute (it takes the output set above), so
	// that requireSubcommands refuses 'completion bsh' too.
	root.InitDefaultCompletionCmd(env.Args...)
	requireSubcommands(root)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	err = explain(cmd, err)
	code := exitCodeOf(ctx, err)
	if isCobraUsageError(err) {
		code = ExitUsage
	}
	g.reportError(err, code)
	return code
}

// explain makes the errors cobra reports, and those that depend on the command, one line
// with a next step: a wrong number of arguments shows the command's usage; a call's
// timeout names the flag of this command that raises it.
func explain(cmd *cobra.Command, err error) error {
	if e, ok := errors.AsType[*exitError](err); ok {
		if e.timeout != nil {
			flag := ""
			if cmd != nil && cmd.Flags().Lookup("timeout") != nil {
				flag = "--timeout"
			}
			e.setTimeoutFlag(flag)
		}
		return err
	}
	if cmd == nil {
		return err
	}
	msg := err.Error()
	for _, p := range []string{"accepts ", "requires at least", "requires at most", "received "} {
		if strings.Contains(msg, p) {
			return &exitError{code: ExitUsage, err: fmt.Errorf("wrong number of arguments for %s: %s", strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" "), msg),
				hint: "usage: " + cmd.UseLine() + "; see '" + cmd.CommandPath() + " --help'"}
		}
	}
	return err
}

// requireSubcommands makes every command of the tree that only groups others (host,
// session, app…) refuse what it does not know: cobra would print the group's help and exit
// 0 for 'ansight app cal'. An unknown name is a usage error (exit 2) with the nearest
// names; the group alone still prints its help.
func requireSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		requireSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		hint := "see '" + c.CommandPath() + " --help'"
		if s := nearest(args[0], c); len(s) > 0 {
			hint = "did you mean " + strings.Join(s, " or ") + "? (" + hint + ")"
		}
		return &exitError{code: ExitUsage, err: fmt.Errorf("unknown command %q for %q", args[0], c.CommandPath()), hint: hint}
	}
	c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
}

// nearest lists the subcommands of c closest to a mistyped name: those at the smallest
// edit distance (at most 2) or, failing any, those the name is a prefix of.
func nearest(typed string, c *cobra.Command) []string {
	best, out := 3, []string(nil)
	var prefixed []string
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() {
			continue
		}
		for _, name := range append([]string{sub.Name()}, sub.Aliases...) {
			if d := editdist.Distance(strings.ToLower(typed), strings.ToLower(name)); d < best {
				best, out = d, []string{name}
			} else if d == best && !slices.Contains(out, name) {
				out = append(out, name)
			}
			if strings.HasPrefix(name, typed) {
				prefixed = append(prefixed, name)
			}
		}
	}
	if len(out) == 0 {
		return prefixed
	}
	return out
}

// nearestFlag names the flag of c closest to a mistyped one ("" when none is close).
func nearestFlag(typed string, c *cobra.Command) string {
	best, out := 3, ""
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if d := editdist.Distance(typed, f.Name); d < best {
			best, out = d, f.Name
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	return out
}

// flagError is a mistake in the flags: exit 2, with the nearest flag when one is close.
func flagError(c *cobra.Command, err error) error {
	hint := "see '" + c.CommandPath() + " --help'"
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		if near := nearestFlag(name, c); near != "" {
			hint = "did you mean --" + near + "? (" + hint + ")"
		}
	}
	return &exitError{code: ExitUsage, err: err, hint: hint}
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
6 access denied, 7 no such session (or it disconnected), 8 a call timed out
(--timeout raises the limit), 10 a flow failed (test run), 130 interrupted.`,
		Version:       versionString(g.env.Version),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("ansight {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
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
	msg := g.followUps(err.Error())
	hint = g.followUps(hint)
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

// command writes a follow-up command line for this run's user: "ansight " and args, with
// the flags that chose this run's host (--state-dir), so that the command reaches the same
// host from another terminal.
func (g *globals) command(args string) string {
	return "ansight " + g.hostFlags() + args
}

// hostFlags is "--state-dir DIR " when this run was given one (absolute, quoted for a shell
// when it needs it), else "".
func (g *globals) hostFlags() string {
	if g.stateDir == "" {
		return ""
	}
	dir := g.stateDir
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return "--state-dir " + shellQuote(dir) + " "
}

// followUps adds this run's host flags (hostFlags) to the commands a message or hint
// quotes ('ansight session list' → 'ansight --state-dir DIR session list'), but to a
// fleet's, which reach no state directory.
func (g *globals) followUps(text string) string {
	flags := g.hostFlags()
	if flags == "" || !strings.Contains(text, "'ansight ") {
		return text
	}
	var b strings.Builder
	for {
		before, after, found := strings.Cut(text, "'ansight ")
		b.WriteString(before)
		if !found {
			return b.String()
		}
		b.WriteString("'ansight ")
		quoted, _, _ := strings.Cut(after, "'")
		if !strings.HasPrefix(after, "--fleet") && !strings.HasPrefix(after, "--state-dir") && !strings.HasSuffix(quoted, "--help") {
			b.WriteString(flags)
		}
		text = after
	}
}

// shellQuote quotes s for a POSIX shell when it holds anything but the characters of
// ordinary paths.
func shellQuote(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
