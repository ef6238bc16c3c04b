package cli

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/hostapi"
)

func newSessionCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "session", Short: "List and inspect app sessions, browse, export and import their recordings"}
	cmd.AddCommand(newSessionListCmd(g), newSessionShowCmd(g), newSessionRenameCmd(g), newSessionDisconnectCmd(g))
	for _, spec := range browseSpecs() {
		cmd.AddCommand(newBrowseCmd(g, spec))
	}
	cmd.AddCommand(newSessionCrashesCmd(g), newSessionAnnotationsCmd(g), newSessionExportCmd(g), newSessionSanitizeCmd(g), newSessionImportCmd(g),
		newSessionDeleteCmd(g))
	return cmd
}

// sessionListOptions are the flags of 'ansight session list'.
type sessionListOptions struct {
	all, connected bool
	appID, state   string
}

func newSessionListCmd(g *globals) *cobra.Command {
	o := &sessionListOptions{}
	list := &cobra.Command{
		Use:   "list",
		Short: "List app sessions (connected first)",
		Long: `List the app sessions the host holds: connected ones first, then those that disconnected
lately. --all adds every recording the host keeps — sessions of earlier runs of the host
and imported ones included — with its size. --app-id and --state keep the sessions of one
app, or in one state (--connected is the official CLI's --state connected).`,
		Example: "  ansight session list\n  ansight session list --app-id com.ansight.demo.notes --state connected\n  ansight session list --all --json",
		Args:    cobra.NoArgs,
		RunE:    func(c *cobra.Command, _ []string) error { return o.run(c.Context(), g) },
	}
	list.Flags().BoolVarP(&o.all, "all", "a", false, "also list the recordings of sessions the host no longer holds (earlier runs, imports)")
	list.Flags().StringVar(&o.appID, "app-id", "", "only the sessions of this app")
	list.Flags().StringVar(&o.state, "state", "", "only sessions in this state: connected or disconnected")
	list.Flags().BoolVar(&o.connected, "connected", false, "only connected sessions (--state connected)")
	g.addRecordingsFlags(list)
	return list
}

// run lists the sessions, filtered.
func (o *sessionListOptions) run(ctx context.Context, g *globals) error {
	if o.connected {
		if o.state != "" && o.state != hostapi.StateConnected {
			return usageErrorf("give --connected or --state, not both")
		}
		o.state = hostapi.StateConnected
	}
	if o.state != "" && o.state != hostapi.StateConnected && o.state != hostapi.StateDisconnected {
		return usageErrorf("--state must be connected or disconnected")
	}
	backend := g.backend
	if g.recordings.archive != "" {
		o.all = true // an archive holds recordings only: --all is implied
	}
	if o.all {
		backend = func() (hostapi.Backend, error) { return g.recordingsBackend(ctx) }
	}
	b, err := backend()
	if err != nil {
		return err
	}
	s, err := b.Sessions(ctx)
	if err != nil {
		return hostErr(err)
	}
	if o.all {
		rec, err := b.Recordings(ctx)
		if err != nil {
			return hostErr(err)
		}
		s = withRecordings(s, rec)
	}
	filtered := o.appID != "" || o.state != ""
	if filtered {
		s.Sessions = slices.DeleteFunc(s.Sessions, func(ss hostapi.Session) bool {
			return o.appID != "" && ss.AppID != o.appID || o.state != "" && ss.State != o.state
		})
	}
	switch {
	case g.json:
		return writeJSON(g.env.Stdout, s)
	case len(s.Sessions) == 0 && filtered:
		fmt.Fprintln(g.env.Stdout, "no sessions match")
	case len(s.Sessions) == 0:
		o.printNone(g, b)
	default:
		o.printTable(g, s.Sessions)
	}
	return nil
}

// printNone says that there are no sessions, and where they would come from.
func (o *sessionListOptions) printNone(g *globals, b hostapi.Backend) {
	if fc, ok := fleetOf(b); ok {
		printf(g.env.Stdout, "no sessions in fleet %s: 'ansight --fleet … host status' lists the hosts that joined it\n", fc.Fleet())
		return
	}
	fmt.Fprintln(g.env.Stdout, g.followUps("no sessions yet: start an app with the Ansight SDK (or 'ansight demo --keep-running')"))
	if !o.all {
		fmt.Fprintln(g.env.Stdout, g.followUps("'ansight session list --all' lists the recordings of earlier sessions too"))
	}
}

// printTable prints the sessions, one a row. A fleet's listing (--fleet) has a HOST
// column: the host each session is on.
func (o *sessionListOptions) printTable(g *globals, sessions []hostapi.Session) {
	withHost := slices.ContainsFunc(sessions, func(ss hostapi.Session) bool { return ss.Host != "" })
	withLabel := slices.ContainsFunc(sessions, func(ss hostapi.Session) bool { return ss.Label != "" })
	head := []string{"SESSION", "APP", "DEVICE", "PLATFORM", "STATE", "GRANT", "TOOLS", "CONNECTED"}
	at := 0
	if withHost {
		head, at = append([]string{"HOST"}, head...), 1
	}
	if o.all {
		head = append(head, "RECORDED")
	}
	if withLabel {
		head = append(head, "LABEL")
	}
	tw := newTable(g.env.Stdout).colourBy(at+4, stateColour).colourBy(at+5, policyColour)
	tw.header(head...)
	for _, ss := range sessions {
		tools := "-"
		if ss.ToolCount > 0 {
			tools = fmt.Sprint(ss.ToolCount)
		}
		row := []string{ss.ID, ss.AppID, ss.DeviceName, ss.Platform, ss.State, string(ss.MaxToolPolicy), tools, ago(ss.ConnectedAt)}
		if withHost {
			row = append([]string{ss.Host}, row...)
		}
		if o.all {
			row = append(row, recordedSize(ss.Recording))
		}
		if withLabel {
			row = append(row, ss.Label)
		}
		tw.row(row...)
	}
	tw.flush()
}

func newSessionRenameCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rename <session> <label>",
		Short: "Give a session a label that session list, session show and the player show",
		Long: `Give a session — connected, or recorded — a human label, shown by 'session list',
'session show' and the web player. The host keeps it with the session's recording, so it
stays after the app has gone and across restarts of the host (a host run with --no-record
keeps none). An empty label ("") removes it. At most 200 bytes, on one line.`,
		Example:           "  ansight session rename com-ansight-demo-notes-001 \"checkout on the Pixel\"\n  ansight session rename com-ansight-demo-notes-001 \"\"",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: g.completeSessions,
		RunE: func(c *cobra.Command, args []string) error {
			return runSessionRename(c.Context(), g, args[0], hostapi.RenameRequest{Label: args[1]})
		},
	}
}

// runSessionRename is 'ansight session rename'.
func runSessionRename(ctx context.Context, g *globals, id string, req hostapi.RenameRequest) error {
	b, err := g.backend()
	if err != nil {
		return err
	}
	r, err := b.Rename(ctx, id, req)
	if err != nil {
		return hostErr(err)
	}
	if g.json {
		return writeJSON(g.env.Stdout, r)
	}
	if r.Label == "" {
		printf(g.env.Stdout, "session %s has no label\n", r.SessionID)
	} else {
		printf(g.env.Stdout, "session %s is labelled %q\n", r.SessionID, r.Label)
	}
	return nil
}

func newSessionDisconnectCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "disconnect <session>",
		Short: "Close a session's connection",
		Long: `Close a connected session's connection, as the app closing it would: its pending calls
fail, and it stays listed as disconnected. An app whose SDK reconnects by itself comes back
as the same session; to keep it out, revoke its pairing ('ansight pairing revoke').`,
		Example:           "  ansight session disconnect com-ansight-demo-notes-001",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeSessions,
		RunE:              func(c *cobra.Command, args []string) error { return runSessionDisconnect(c.Context(), g, args[0]) },
	}
}

// runSessionDisconnect is 'ansight session disconnect'.
func runSessionDisconnect(ctx context.Context, g *globals, id string) error {
	d, err := ask(g, ctx, hostapi.Backend.Disconnect, id)
	if err != nil {
		return err
	}
	if g.json {
		return writeJSON(g.env.Stdout, d)
	}
	if d.Disconnected {
		printf(g.env.Stdout, "disconnected session %s\n", d.SessionID)
	} else {
		printf(g.env.Stdout, "session %s was not connected\n", d.SessionID)
	}
	return nil
}

func newSessionShowCmd(g *globals) *cobra.Command {
	show := &cobra.Command{
		Use:               "show <session>",
		Short:             "Show one session",
		Args:              cobra.RangeArgs(0, 1), // none with --archive: the archive's session
		ValidArgsFunction: g.completeSessions,
		RunE:              func(c *cobra.Command, args []string) error { return runSessionShow(c.Context(), g, args) },
	}
	g.addRecordingsFlags(show)
	return show
}

// runSessionShow is 'ansight session show'.
func runSessionShow(ctx context.Context, g *globals, args []string) error {
	b, id, err := g.recordingsOf(ctx, args)
	if err != nil {
		return err
	}
	s, err := b.Session(ctx, id)
	if err != nil {
		return hostErr(err)
	}
	if g.json {
		return writeJSON(g.env.Stdout, sessionJSON(s))
	}
	tw := newTable(g.env.Stdout)
	for _, kv := range [][2]string{
		{"session", s.ID}, {"label", s.Label}, {"host", s.Host}, {"app", s.AppID}, {"app name", s.AppName}, {"app version", s.AppVersion},
		{"device", s.DeviceName}, {"device id", s.DeviceID}, {"platform", s.Platform}, {"sdk", s.SDK},
		{"state", s.State}, {"app state", s.AppState}, {"grant", string(s.MaxToolPolicy)},
		{"connected", ago(s.ConnectedAt)}, {"catalog revision", s.Revision}, {"tools", fmt.Sprint(s.ToolCount)},
		{"crash reports", recordCount(s.CrashReports, g.command("session crashes "+s.ID))},
		{"annotations", recordCount(s.Annotations, g.command("session annotations "+s.ID))},
		{"recording", recordingLine(s)},
	} {
		if kv[1] != "" {
			tw.row(kv[0]+":", kv[1])
		}
	}
	tw.flush()
	return nil
}

// sessionJSON is one session as --json prints it: with its schema.
func sessionJSON(s *hostapi.Session) any {
	return struct {
		Schema string `json:"schema"`
		*hostapi.Session
	}{hostapi.SchemaSession, s}
}

// withRecordings lists the registry's sessions, then the recordings of the others; each
// session gets its recording's figures.
func withRecordings(live, recorded *hostapi.Sessions) *hostapi.Sessions {
	out := &hostapi.Sessions{Schema: live.Schema, Sessions: slices.Clone(live.Sessions)}
	index := map[string]int{}
	for i, s := range out.Sessions {
		index[s.ID] = i
	}
	for _, r := range recorded.Sessions {
		if i, ok := index[r.ID]; ok {
			out.Sessions[i].Recording = r.Recording
			continue
		}
		out.Sessions = append(out.Sessions, r)
	}
	return out
}

// recordedSize shows a session's recording in a list: its size, and "imported".
func recordedSize(r *hostapi.Recording) string {
	switch {
	case r == nil:
		return "-"
	case r.Origin == "import":
		return humanBytes(r.Bytes) + " (imported)"
	}
	return humanBytes(r.Bytes)
}

// recordingLine describes a session's recording for session show.
func recordingLine(s *hostapi.Session) string {
	r := s.Recording
	if r == nil {
		return ""
	}
	line := fmt.Sprintf("%d records, %s, %s to %s", r.Records, humanBytes(r.Bytes), clock(r.FirstAt), clock(r.LastAt))
	if r.Origin == "import" {
		line += ", imported"
	}
	if r.Dropped > 0 || r.Evicted > 0 {
		line += fmt.Sprintf(", %d dropped, %d evicted", r.Dropped, r.Evicted)
	}
	return line + " (ansight session logs " + s.ID + ")"
}

// recordCount shows how many records a session keeps and the command listing them, or
// nothing when there are none.
func recordCount(n int, command string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d (%s)", n, command)
}
