package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/hostapi"
)

// newSessionCrashesCmd lists the crash reports an app handed over in a session.
func newSessionCrashesCmd(g *globals) *cobra.Command {
	cmd := recordsCmd(g, hostapi.Backend.Crashes, func(w io.Writer, v *hostapi.Crashes) {
		if len(v.Crashes) == 0 {
			printf(w, "no crash reports in session %s\n", v.SessionID)
			return
		}
		tw := newTable(w)
		tw.row("OCCURRED", "KIND", "PLATFORM", "CONFIDENCE", "MESSAGE", "REPORT")
		for _, r := range v.Crashes {
			tw.row(ago(r.OccurredAt), dash(r.Kind), dash(r.Platform), dash(r.Confidence), dash(oneLine(r.Message, 60)), r.Dir)
		}
		tw.flush()
	})
	cmd.Use = "crashes <session>"
	cmd.Short = "List the crash reports an app handed over"
	cmd.Long = `List the crash reports kept in a session, most recent first.

Apps built with the official SDKs write a report when they crash and hand it over from
their next launch (crash.handoff); the host keeps it in the session of the process that
crashed when it still has it, else in the delivering one. Each report's directory holds
report.json as the app sent it, and native.trace or metrickit.json when it carried one.`
	cmd.Example = "  ansight session crashes com-example-app-002\n  ansight session crashes com-example-app-002 --json"
	return cmd
}

// newSessionAnnotationsCmd lists the annotated-feedback bundles an app sent in a session.
func newSessionAnnotationsCmd(g *globals) *cobra.Command {
	cmd := recordsCmd(g, hostapi.Backend.Annotations, func(w io.Writer, v *hostapi.Annotations) {
		if len(v.Annotations) == 0 {
			printf(w, "no annotations in session %s\n", v.SessionID)
			return
		}
		tw := newTable(w)
		tw.row("CAPTURED", "SIZE", "ANNOTATION", "BUNDLE")
		for _, a := range v.Annotations {
			tw.row(ago(a.CapturedAt), humanBytes(a.SizeBytes), a.ID, a.Path)
		}
		tw.flush()
	})
	cmd.Use = "annotations <session>"
	cmd.Short = "List the annotated feedback an app sent"
	cmd.Long = `List the annotated-feedback bundles kept in a session, most recent first: zip files
(application/vnd.ansight.annotation+zip) with the user's note, shapes, a screenshot and
visual trees, as the official SDKs' annotation tools send them (annotation.submit).`
	cmd.Example = "  ansight session annotations com-example-app-002 --json"
	return cmd
}

// recordsCmd is a command listing one kind of a session's records: fetched with list,
// printed as JSON with --json, else by show.
func recordsCmd[T any](g *globals, list func(hostapi.Backend, context.Context, string) (T, error), show func(io.Writer, T)) *cobra.Command {
	return &cobra.Command{
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeSessions,
		RunE: func(c *cobra.Command, args []string) error {
			b, err := g.backend()
			if err != nil {
				return err
			}
			v, err := list(b, c.Context(), args[0])
			if err != nil {
				return hostErr(err)
			}
			if g.json {
				return writeJSON(g.env.Stdout, v)
			}
			show(g.env.Stdout, v)
			return nil
		},
	}
}

// dash shows an empty cell as "-".
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
