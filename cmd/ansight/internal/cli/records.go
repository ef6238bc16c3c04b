package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/hostapi"
)

// newSessionCrashesCmd lists the crash reports an app handed over in a session: the
// recording's crash records, whose data is the host's description of each report (a host
// that records nothing lists its session directory instead).
func newSessionCrashesCmd(g *globals) *cobra.Command {
	show := func(w io.Writer, v *hostapi.Crashes) {
		if len(v.Crashes) == 0 {
			printf(w, "no crash reports in session %s\n", v.SessionID)
			return
		}
		tw := newTable(w)
		tw.header("OCCURRED", "KIND", "PLATFORM", "CONFIDENCE", "MESSAGE", "REPORT")
		for _, r := range v.Crashes {
			tw.row(crashRow(r)...)
		}
		tw.flush()
	}
	return newBrowseCmd(g, browseSpec{
		use: "crashes", noun: "crash reports", short: "List the crash reports an app handed over",
		long: `List the crash reports kept in a session, oldest first (--json: most recent first).

Apps built with the official SDKs write a report when they crash and hand it over from
their next launch (crash.handoff); the host keeps it in the session of the process that
crashed when it still has it, else in the delivering one. Each report's directory holds
report.json as the app sent it, and native.trace or metrickit.json when it carried one.
--json prints an ansight.session-crashes/v1 object (with --follow, one record per line).`,
		example: "  ansight session crashes com-example-app-002\n  ansight session crashes com-example-app-002 --json",
		kinds:   []hostapi.RecordKind{hostapi.RecordCrash}, search: true,
		header: []string{"OCCURRED", "KIND", "PLATFORM", "CONFIDENCE", "MESSAGE", "REPORT"},
		row:    func(v *browseView, r hostapi.Record) []string { return crashRow(crashOf(v, r)) },
		json: func(id string, recs []hostapi.Record) any {
			return &hostapi.Crashes{Schema: hostapi.SchemaCrashes, SessionID: id, Crashes: keptJSON(recs, crashOf)}
		},
		fallback: kept(hostapi.Backend.Crashes, show),
	})
}

// crashOf is a crash record's report: the host's description it keeps as its data, with
// what an imported record (an offline capture's, an official archive's, which keep the
// report's own members) lacks taken from the record — its time, its id, its file.
func crashOf(v *browseView, r hostapi.Record) hostapi.CrashReport {
	c := dataOf[hostapi.CrashReport](r)
	if c.OccurredAt.IsZero() {
		c.OccurredAt = r.At
	}
	if c.ID == "" {
		c.ID = c.ReportID
	}
	if c.SessionID == "" {
		c.SessionID = r.Session
	}
	if c.Dir == "" && len(c.Files) == 0 && v != nil {
		if f := v.file(r); f != "-" {
			c.Dir = f
		}
	}
	return c
}

// annotationOf is crashOf for annotation records.
func annotationOf(v *browseView, r hostapi.Record) hostapi.Annotation {
	a := dataOf[struct {
		hostapi.Annotation
		AnnotationID string `json:"annotationId"` // an imported bundle's
	}](r)
	if a.ID == "" {
		a.ID = a.AnnotationID
	}
	if a.CapturedAt.IsZero() {
		a.CapturedAt = r.At
	}
	if a.SessionID == "" {
		a.SessionID = r.Session
	}
	if a.MimeType == "" {
		a.MimeType = "application/vnd.ansight.annotation+zip" // what every bundle is
	}
	if a.SizeBytes == 0 {
		a.SizeBytes = r.BlobBytes
	}
	if a.Path == "" && v != nil {
		if f := v.file(r); f != "-" {
			a.Path = f
		}
	}
	return a.Annotation
}

func crashRow(r hostapi.CrashReport) []string {
	return []string{clock(r.OccurredAt), dash(r.Kind), dash(r.Platform), dash(r.Confidence), dash(oneLine(r.Message, 60)), r.Dir}
}

// newSessionAnnotationsCmd lists the annotated-feedback bundles an app sent in a session.
func newSessionAnnotationsCmd(g *globals) *cobra.Command {
	show := func(w io.Writer, v *hostapi.Annotations) {
		if len(v.Annotations) == 0 {
			printf(w, "no annotations in session %s\n", v.SessionID)
			return
		}
		tw := newTable(w)
		tw.header("CAPTURED", "SIZE", "ANNOTATION", "BUNDLE")
		for _, a := range v.Annotations {
			tw.row(annotationRow(a)...)
		}
		tw.flush()
	}
	return newBrowseCmd(g, browseSpec{
		use: "annotations", noun: "annotations", short: "List the annotated feedback an app sent",
		long: `List the annotated-feedback bundles kept in a session, oldest first (--json: most recent
first): zip files (application/vnd.ansight.annotation+zip) with the user's note, shapes, a
screenshot and visual trees, as the official SDKs' annotation tools send them
(annotation.submit). --json prints an ansight.session-annotations/v1 object (with --follow,
one record per line).`,
		example: "  ansight session annotations com-example-app-002 --json",
		kinds:   []hostapi.RecordKind{hostapi.RecordAnnotation},
		header:  []string{"CAPTURED", "SIZE", "ANNOTATION", "BUNDLE"},
		row:     func(v *browseView, r hostapi.Record) []string { return annotationRow(annotationOf(v, r)) },
		json: func(id string, recs []hostapi.Record) any {
			return &hostapi.Annotations{Schema: hostapi.SchemaAnnotations, SessionID: id, Annotations: keptJSON(recs, annotationOf)}
		},
		fallback: kept(hostapi.Backend.Annotations, show),
	})
}

func annotationRow(a hostapi.Annotation) []string {
	return []string{clock(a.CapturedAt), humanBytes(a.SizeBytes), a.ID, a.Path}
}

// kept lists what the host keeps in a session's directory, for a host that records
// nothing: fetched with list, printed as JSON with --json, else by show.
func kept[T any](list func(hostapi.Backend, context.Context, string) (T, error), show func(io.Writer, T)) func(context.Context, *globals, hostapi.Backend, string) error {
	return func(ctx context.Context, g *globals, b hostapi.Backend, id string) error {
		v, err := list(b, ctx, id)
		if err != nil {
			return hostErr(err)
		}
		if g.json {
			return writeJSON(g.env.Stdout, v)
		}
		show(g.env.Stdout, v)
		return nil
	}
}

// dash shows an empty cell as "-".
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
