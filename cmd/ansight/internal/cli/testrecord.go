package cli

import (
	"context"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/flow"
)

// testRecordOptions are the flags of 'ansight test record'.
type testRecordOptions struct {
	sel          sessionSelector
	output       string
	since, until string
	origins      []string
	name         string
}

// testRecorded is the --json object of 'test record'.
type testRecorded struct {
	Schema    string `json:"schema"`
	SessionID string `json:"sessionId"`
	Path      string `json:"path,omitzero"`
	Steps     int    `json:"steps"`
}

func newTestRecordCmd(g *globals) *cobra.Command {
	var o testRecordOptions
	cmd := &cobra.Command{
		Use:   "record SESSION -o FLOW.yaml",
		Short: "Turn the calls a session's recording holds into a flow",
		Long: `Write a flow from a session's recorded tool traffic: every call the host saw from the
chosen clients (--origin: cli, player, mcp:<client> or one of its MCP sessions
mcp:<client>#<tag>, flow, internal; all but internal by default), each expecting what came back where it is stable. Ids a later call sends back are
saved and read as ${name.path}; other ids and times are matched by their shape. UI actions on
tree nodes become tap, type and swipe steps by automation id or text, and ui asserts
and waits their steps. Run the flow against a fresh
start of the app (the recording's own state is not restored).`,
		Example: "  ansight test record com-ansight-demo-notes-001 -o flow.yaml\n  ansight test record --app-id com.ansight.demo.notes --since 10m --origin mcp: -o agent.yaml",
		Args:    cobra.MaximumNArgs(1),
		RunE:    func(c *cobra.Command, args []string) error { return g.runTestRecord(c.Context(), o, args) },
	}
	o.sel.addFlag(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&o.output, "output", "o", "", "write the flow to this file (- for standard output)")
	fl.StringVar(&o.since, "since", "", "only calls since this time: a duration back from now (10m, 2h) or an RFC 3339 time")
	fl.StringVar(&o.until, "until", "", "only calls before this time (as --since)")
	fl.StringArrayVar(&o.origins, "origin", nil, "only calls of this origin (repeat; 'mcp:' for every MCP client)")
	fl.StringVar(&o.name, "name", "", "the flow's name")
	cmd.MarkFlagRequired("output")
	return cmd
}

func (g *globals) runTestRecord(ctx context.Context, o testRecordOptions, args []string) error {
	now := time.Now()
	since, err := parseWhen(o.since, now)
	if err != nil {
		return usageErrorf("--since: %v", err)
	}
	until, err := parseWhen(o.until, now)
	if err != nil {
		return usageErrorf("--until: %v", err)
	}
	b, id, err := g.session(ctx, &o.sel, args)
	if err != nil {
		return err
	}
	s, err := b.Session(ctx, id)
	if err != nil {
		return hostErr(err)
	}
	text, steps, err := flow.RecordSession(ctx, b, id, flow.RecordOptions{Name: o.name, AppID: s.AppID, Session: id, Since: since, Until: until, Origins: o.origins})
	if err != nil {
		return hostErr(err)
	}
	if o.output == "-" {
		_, err = g.env.Stdout.Write(text)
		return err
	}
	if err := writeFileWith(o.output, func(w io.Writer) error { _, err := w.Write(text); return err }); err != nil {
		return err
	}
	if g.json {
		return writeJSON(g.env.Stdout, testRecorded{Schema: "ansight.test-record/v1", SessionID: id, Path: absPath(o.output), Steps: steps})
	}
	printf(g.env.Stdout, "wrote %s: %d steps from session %s\n", o.output, steps, id)
	if steps == 0 {
		printf(g.env.Stderr, "hint: the recording holds no calls of the chosen origins in that time (see --origin, --since)\n")
	}
	return nil
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
