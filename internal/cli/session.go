package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/fleet"
	"github.com/ansight-go/ansight/internal/control"
)

func newSessionCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "session", Short: "List and inspect app sessions"}
	list := &cobra.Command{
		Use:   "list",
		Short: "List app sessions (connected first)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			b, err := g.backend()
			if err != nil {
				return err
			}
			s, err := b.Sessions(c.Context())
			if err != nil {
				return hostErr(err)
			}
			if g.json {
				return writeJSON(g.env.Stdout, s)
			}
			if len(s.Sessions) == 0 {
				if fc, ok := b.(*fleet.Client); ok {
					printf(g.env.Stdout, "no sessions in fleet %s: 'ansight --fleet … host status' lists the hosts that joined it\n", fc.Fleet())
					return nil
				}
				fmt.Fprintln(g.env.Stdout, "no sessions yet: start an app with the Ansight SDK (or 'ansight demo --keep-running')")
				return nil
			}
			// A fleet's listing (--fleet) has a HOST column: the host each session is on.
			withHost := slices.ContainsFunc(s.Sessions, func(ss control.Session) bool { return ss.Host != "" })
			head := []string{"SESSION", "APP", "DEVICE", "PLATFORM", "STATE", "GRANT", "TOOLS", "CONNECTED"}
			at := 0
			if withHost {
				head, at = append([]string{"HOST"}, head...), 1
			}
			tw := newTable(g.env.Stdout).colourBy(at+4, stateColour).colourBy(at+5, policyColour)
			tw.header(head...)
			for _, ss := range s.Sessions {
				tools := "-"
				if ss.ToolCount > 0 {
					tools = fmt.Sprint(ss.ToolCount)
				}
				row := []string{ss.ID, ss.AppID, ss.DeviceName, ss.Platform, ss.State, string(ss.MaxToolPolicy), tools, ago(ss.ConnectedAt)}
				if withHost {
					row = append([]string{ss.Host}, row...)
				}
				tw.row(row...)
			}
			tw.flush()
			return nil
		},
	}
	show := &cobra.Command{
		Use:               "show <session>",
		Short:             "Show one session",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeSessions,
		RunE: func(c *cobra.Command, args []string) error {
			b, err := g.backend()
			if err != nil {
				return err
			}
			s, err := b.Session(c.Context(), args[0])
			if err != nil {
				return hostErr(err)
			}
			if g.json {
				return writeJSON(g.env.Stdout, struct {
					Schema string `json:"schema"`
					*control.Session
				}{control.SchemaSession, s})
			}
			tw := newTable(g.env.Stdout)
			for _, kv := range [][2]string{
				{"session", s.ID}, {"host", s.Host}, {"app", s.AppID}, {"app name", s.AppName}, {"app version", s.AppVersion},
				{"device", s.DeviceName}, {"device id", s.DeviceID}, {"platform", s.Platform}, {"sdk", s.SDK},
				{"state", s.State}, {"app state", s.AppState}, {"grant", string(s.MaxToolPolicy)},
				{"connected", ago(s.ConnectedAt)}, {"catalog revision", s.Revision}, {"tools", fmt.Sprint(s.ToolCount)},
				{"crash reports", recordCount(s.CrashReports, "ansight session crashes "+s.ID)},
				{"annotations", recordCount(s.Annotations, "ansight session annotations "+s.ID)},
			} {
				if kv[1] != "" {
					tw.row(kv[0]+":", kv[1])
				}
			}
			tw.flush()
			return nil
		},
	}
	cmd.AddCommand(list, show, newSessionCrashesCmd(g), newSessionAnnotationsCmd(g))
	return cmd
}

// recordCount shows how many records a session keeps and the command listing them, or
// nothing when there are none.
func recordCount(n int, command string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d (%s)", n, command)
}
