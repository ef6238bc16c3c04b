package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/internal/control"
	"github.com/ansight-go/ansight/mcpbridge"
)

// mcpFlags are the flags of 'ansight mcp'.
type mcpFlags struct {
	http          string
	embedded      bool
	demo          bool
	allowCritical bool
	expose        string
	maxWidth      int
	verbose       bool
}

func newMCPCmd(g *globals) *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Offer the connected apps' tools to AI agents over MCP (stdio, or --http on loopback)",
		Long: `Serve the Model Context Protocol so that an AI agent (Claude, Cursor, VS Code, any MCP
client) can use the tools of the apps connected to the host.

By default it speaks MCP on stdin/stdout, which is how agent clients launch servers, and
talks to the resident host ('ansight host run'). --embedded-host runs a host inside this
process instead; --demo also starts the demo app, to try everything without an app of your own.
--http serves streamable HTTP on a loopback address instead of stdio. With --fleet, agents
see every session of a device lab's hosts (docs/fleet.md), each under its host's grants.

Agents get six compact meta-tools: ansight_list_sessions, ansight_search_app_tools (no
schemas: small context), ansight_describe_app_tool, ansight_call_app_tool,
ansight_call_app_tools (batches) and ansight_take_screenshot (image content).
--expose-app-tools also offers every tool of one session as its own MCP tool.

The bridge never calls a tool above a session's grant, and calls critical tools only with
--allow-critical.

Client configuration (stdio):
  {"mcpServers": {"ansight": {"command": "ansight", "args": ["mcp"]}}}`,
		Example: "  ansight mcp\n  ansight mcp --demo\n  ansight mcp --http 127.0.0.1:7400\n  ansight mcp --fleet nats://lab.example:4222\n" +
			"  ansight mcp --expose-app-tools com.example.notes --allow-critical",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return g.runMCP(c, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.http, "http", "", "serve streamable HTTP at this loopback address (e.g. 127.0.0.1:7400) instead of stdio")
	fl.BoolVar(&f.embedded, "embedded-host", false, "run a host in this process instead of using the resident one")
	fl.BoolVar(&f.demo, "demo", false, "run a host and the demo app in this process (implies --embedded-host)")
	fl.BoolVar(&f.allowCritical, "allow-critical", false, "let agents call critical tools (within each session's grant)")
	fl.StringVar(&f.expose, "expose-app-tools", "", "also offer each tool of this session (id, or app id) as its own MCP tool")
	fl.IntVar(&f.maxWidth, "screenshot-max-width", mcpbridge.DefaultScreenshotMaxWidth, "scale screenshots handed to agents down to this width")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log debug details to stderr")
	return cmd
}

func (g *globals) runMCP(c *cobra.Command, f mcpFlags) error {
	ctx := c.Context()
	if f.maxWidth < 64 || f.maxWidth > 8192 {
		return usageErrorf("--screenshot-max-width must be between 64 and 8192")
	}
	// Stdout carries the protocol in stdio mode: diagnostics go to stderr only.
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(g.env.Stderr, &slog.HandlerOptions{Level: level}))

	var backend control.Backend
	if f.embedded || f.demo {
		b, stop, err := startEmbedded(ctx, g, f.demo)
		if err != nil {
			return fmt.Errorf("start the embedded host: %w", err)
		}
		defer stop()
		backend = b
	} else {
		b, err := g.backend()
		if err != nil {
			return err
		}
		// Agent clients start servers before anyone starts a host: serve anyway (tools then
		// answer host_unavailable with a hint), but tell the user now.
		if _, err := b.Status(ctx); errors.Is(err, control.ErrHostUnavailable) {
			logger.Warn("no ansight host is running: start one with 'ansight host run' (or use --embedded-host / --demo)")
		}
		backend = b
	}

	br := mcpbridge.New(backend, mcpbridge.Options{
		Name: "ansight", Version: versionString(g.env.Version), AllowCritical: f.allowCritical,
		ExposeAppTools: f.expose, ScreenshotMaxWidth: f.maxWidth, Logger: logger,
	})
	if f.http != "" {
		l, err := mcpbridge.ListenLoopback(f.http)
		if err != nil {
			return &exitError{code: ExitUsage, err: err, hint: "use 127.0.0.1:PORT, [::1]:PORT or localhost:PORT"}
		}
		fmt.Fprintf(g.env.Stderr, "ansight mcp: serving MCP at http://%s%s (Ctrl-C to stop)\n", l.Addr(), mcpbridge.HTTPPath)
		return br.Serve(ctx, l)
	}
	return br.Run(ctx, &mcp.IOTransport{Reader: readCloser(g.env.Stdin), Writer: nopWriteCloser{g.env.Stdout}})
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
