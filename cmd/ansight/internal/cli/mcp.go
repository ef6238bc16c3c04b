package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/mcpbridge"
	"github.com/ansight-go/ansight/pairing"
)

// mcpTokenEnv sets the HTTP bearer token instead of a fresh one per run (for a client
// configuration that should survive restarts). An environment variable, not a flag, so
// that it does not show in the process list.
const mcpTokenEnv = "ANSIGHT_MCP_TOKEN"

// mcpFlags are the flags of 'ansight mcp'.
type mcpFlags struct {
	http           string
	noAuth         bool
	allowOrigins   []string
	embedded       bool
	demo           bool
	allowCritical  bool
	expose         string
	imageMaxSize   int
	maxResultBytes int
	verbose        bool
	schemaProfile  string
}

func newMCPCmd(g *globals) *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Offer the connected apps' tools to AI agents over MCP (stdio, or --http on loopback)",
		Long: `Serve the Model Context Protocol so that an AI agent (Claude Code, Claude Desktop, Cursor,
VS Code, any MCP client) can use the tools of the apps connected to the host.

By default it speaks MCP on stdin/stdout, which is how agent clients launch servers, and
talks to the resident host ('ansight host run'). Agent clients start it without your shell's
environment: when neither --state-dir nor ANSIGHT_STATE_DIR is given, it also finds a host
whose state directory came from XDG_STATE_HOME or ANSIGHT_STATE_DIR in your terminal.
--embedded-host runs a host inside this process instead; --demo also starts the demo app, to
try everything without an app of your own.
With --fleet, agents see every session of a device lab's hosts (docs/fleet.md), each under
its host's grants.

Agents get compact meta-tools: ansight_list_sessions, ansight_search_app_tools (no schemas:
small context), ansight_describe_app_tool, ansight_call_app_tool, ansight_call_app_tools
(batches), ansight_snapshot (the screen as text with refs to act on), ansight_take_screenshot
(image content) and ansight_read_result (pages of results over --max-result-bytes).
--expose-app-tools also offers every tool of one session as its own MCP tool, under a name
every client accepts (notes.create becomes notes_create).

The bridge never calls a tool above a session's grant, and calls critical tools only with
--allow-critical.

--http serves streamable HTTP on a loopback address instead. Every request must carry the
bearer token printed at start (or $` + mcpTokenEnv + `), unless --no-auth; web pages are
refused unless their origin is allowed with --allow-origin.

Client configuration (stdio), see the README's "Use with AI agents":
  claude mcp add ansight -- ansight mcp
  {"mcpServers": {"ansight": {"command": "ansight", "args": ["mcp"]}}}`,
		Example: "  ansight mcp\n  ansight mcp --demo\n  ansight mcp --http 127.0.0.1:7400\n  ansight mcp --fleet nats://lab.example:4222\n" +
			"  ansight mcp --expose-app-tools com.ansight.demo.notes --allow-critical",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return f.run(c.Context(), g) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.http, "http", "", "serve streamable HTTP at this loopback address (e.g. 127.0.0.1:7400) instead of stdio")
	fl.BoolVar(&f.noAuth, "no-auth", false, "with --http: answer requests without the bearer token (loopback only still)")
	fl.StringArrayVar(&f.allowOrigins, "allow-origin", nil, "with --http: answer web pages of this origin (e.g. http://localhost:6274); repeatable")
	fl.BoolVar(&f.embedded, "embedded-host", false, "run a host in this process instead of using the resident one")
	fl.BoolVar(&f.demo, "demo", false, "run a host and the demo app in this process (implies --embedded-host)")
	fl.BoolVar(&f.allowCritical, "allow-critical", false, "let agents call critical tools (within each session's grant)")
	fl.StringVar(&f.expose, "expose-app-tools", "", "also offer each tool of this session (id, or app id) as its own MCP tool")
	fl.IntVar(&f.imageMaxSize, "image-max-size", mcpbridge.DefaultImageMaxSize, "scale images handed to agents down to this many pixels on their longer side")
	fl.IntVar(&f.imageMaxSize, "screenshot-max-width", mcpbridge.DefaultImageMaxSize, "")
	fl.MarkHidden("screenshot-max-width") // the former name of --image-max-size
	fl.IntVar(&f.maxResultBytes, "max-result-bytes", mcpbridge.DefaultMaxResultBytes, "save larger results to a file and answer an outline (ansight_read_result reads the rest)")
	fl.StringVar(&f.schemaProfile, "schema-profile", string(mcpbridge.SchemaExact), "input schemas of exposed app tools: exact (as the app wrote them) or portable (the subset Gemini, OpenAI and Anthropic all accept: for clients such as Zed, n8n or opencode)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log debug details to stderr")
	return cmd
}

// run serves MCP over the backend the flags choose, on stdio or --http.
func (f *mcpFlags) run(ctx context.Context, g *globals) error {
	if err := f.check(); err != nil {
		return err
	}
	// Stdout carries the protocol in stdio mode: diagnostics go to stderr only.
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(g.env.Stderr, &slog.HandlerOptions{Level: level}))
	opts := mcpbridge.Options{
		Name: "ansight", Version: versionString(g.env.Version), AllowCritical: f.allowCritical,
		ExposeAppTools: f.expose, ImageMaxSize: f.imageMaxSize, MaxResultBytes: f.maxResultBytes, Logger: logger,
		HTTPNoAuth: f.noAuth, AllowedOrigins: f.allowOrigins,
	}
	opts.SchemaProfile, _ = mcpbridge.ParseSchemaProfile(f.schemaProfile) // check() read it
	// A refused --http address is a usage error, before anything starts.
	var l net.Listener
	if f.http != "" {
		var err error
		if l, err = mcpbridge.ListenLoopback(f.http); err != nil {
			return &exitError{code: ExitUsage, err: err, hint: "use 127.0.0.1:PORT, [::1]:PORT or localhost:PORT"}
		}
		defer l.Close()
	}
	backend, stop, err := f.backend(ctx, g, &opts, logger)
	if err != nil {
		return err
	}
	defer stop()
	if f.http != "" {
		return f.serveHTTP(ctx, g, backend, opts, l)
	}
	br := mcpbridge.New(backend, opts)
	return br.Run(ctx, &mcpbridge.LineTransport{Reader: readCloser(g.env.Stdin), Writer: nopWriteCloser{g.env.Stdout}})
}

// check refuses flags out of range or that do not go together.
func (f *mcpFlags) check() error {
	if f.imageMaxSize < 64 || f.imageMaxSize > 8192 {
		return usageErrorf("--image-max-size must be between 64 and 8192")
	}
	if f.maxResultBytes < 4096 || f.maxResultBytes > 16<<20 {
		return usageErrorf("--max-result-bytes must be between 4096 and 16777216")
	}
	if _, err := mcpbridge.ParseSchemaProfile(f.schemaProfile); err != nil {
		return usageErrorf("--schema-profile must be exact or portable, not %q", f.schemaProfile)
	}
	if f.http == "" && (f.noAuth || len(f.allowOrigins) > 0) {
		return usageErrorf("--no-auth and --allow-origin apply to --http only")
	}
	for _, o := range f.allowOrigins {
		if _, err := mcpbridge.NormalizeOrigin(o); err != nil {
			return usageErrorf("--allow-origin: %v", err)
		}
	}
	return nil
}

// backend is the host the bridge serves: one in this process (--embedded-host, --demo), a
// device lab (--fleet), or the resident host, found again whenever it is asked. It sets
// where large results are kept. stop ends what it started.
func (f *mcpFlags) backend(ctx context.Context, g *globals, opts *mcpbridge.Options, logger *slog.Logger) (hostapi.Backend, func(), error) {
	if f.embedded || f.demo {
		b, stop, err := startEmbedded(ctx, g, f.demo)
		if err != nil {
			return nil, nil, fmt.Errorf("start the embedded host: %w", err)
		}
		opts.HostMode = mcpbridge.HostEmbedded
		if f.demo {
			opts.HostMode = mcpbridge.HostDemo
		}
		// Results of a host that lives as long as this process go with it.
		dir, err := os.MkdirTemp("", "ansight-mcp-results-")
		if err != nil {
			stop()
			return nil, nil, err
		}
		opts.ResultDir = dir
		return b, func() { os.RemoveAll(dir); stop() }, nil
	}
	if dir, err := g.stateDirPath(); err == nil {
		opts.ResultDir = filepath.Join(dir, "mcp-results")
	}
	if cfg, ok := g.fleetConfig(); ok {
		b, err := g.fleetClient(cfg) // a device lab: every host's sessions
		return b, func() {}, err
	}
	locate, err := g.locateHost()
	if err != nil {
		return nil, nil, err
	}
	b := hostapi.NewLocatingClient(locate)
	// Agent clients start servers before anyone starts a host: serve anyway (tools then
	// answer host_unavailable with a hint), but tell the user now.
	if _, err := b.Status(ctx); errors.Is(err, hostapi.ErrHostUnavailable) {
		logger.Warn("no ansight host is running: start one with 'ansight host run' (or use --embedded-host / --demo)")
	}
	return b, func() {}, nil
}

// serveHTTP serves streamable HTTP on l, behind the bearer token it prints (or
// $ANSIGHT_MCP_TOKEN's) unless --no-auth.
func (f *mcpFlags) serveHTTP(ctx context.Context, g *globals, backend hostapi.Backend, opts mcpbridge.Options, l net.Listener) error {
	endpoint := fmt.Sprintf("http://%s%s", l.Addr(), mcpbridge.HTTPPath)
	if f.noAuth {
		fmt.Fprintf(g.env.Stderr, "ansight mcp: serving MCP at %s without authentication (Ctrl-C to stop)\n", endpoint)
	} else {
		opts.HTTPToken = os.Getenv(mcpTokenEnv)
		if opts.HTTPToken == "" {
			opts.HTTPToken = pairing.NewToken(pairing.AccessTokenBytes)
		}
		// Like the player's URL: the user needs the token to configure a client.
		fmt.Fprintf(g.env.Stderr, "ansight mcp: serving MCP at %s (Ctrl-C to stop)\n  clients send the header: Authorization: Bearer %s\n", endpoint, opts.HTTPToken)
	}
	return mcpbridge.New(backend, opts).Serve(ctx, l)
}

// readCloser closes r when it can be closed (os.Stdin), so that ending the session stops
// the transport's reader.
func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

// nopWriteCloser leaves stdout open: the command's caller owns it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
