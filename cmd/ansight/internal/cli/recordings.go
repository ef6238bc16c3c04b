package cli

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/wire"
)

// The browse commands (session logs, metrics, network, events, touches, trees, crashes,
// artifacts) read a session's recording: one kind filter each over the control API's
// records, with the same flags and the same two outputs — a table (followed line by line
// with --follow) and, with --json, one ansight.session-records/v1 object (one record a line
// with --follow).

// browseSpec describes one browse command.
type browseSpec struct {
	use, short, long, example string
	noun                      string // what an empty listing has none of
	kinds                     []hostapi.RecordKind
	// level, search and channel say which filters fit the kind.
	level, search, channel bool
	// header and row draw the table; row returns nil for a record that is not a line of
	// its own (a metric channel's declaration).
	header []string
	row    func(v *browseView, r hostapi.Record) []string
	// json, when set, builds the --json object of a listing (not --follow) instead of
	// the records themselves: crashes and annotations keep their own schemas.
	json func(sessionID string, recs []hostapi.Record) any
	// fallback, when set, answers for a host that records nothing.
	fallback func(ctx context.Context, g *globals, b hostapi.Backend, sessionID string) error
}

// browseFlags are the flags every browse command shares.
type browseFlags struct {
	since, until string
	follow       bool
	tail         int
	level        string
	search       string
	channel      string
}

// browseView is what rows need beyond the record: the channels seen so far (metrics) and
// where the record files are (trees, artifacts).
type browseView struct {
	channels map[int]channelInfo
	dir      string // the recordings directory, when known
}

type channelInfo struct{ name, unit string }

// file is the path of a record's file on this machine, or "-": also when it is not a file
// of its own (a live frame or tree, kept in its session's pack; the host's blob API reads
// it).
func (v *browseView) file(r hostapi.Record) string {
	if r.Blob == "" || v.dir == "" {
		return "-"
	}
	p := filepath.Join(v.dir, filepath.FromSlash(r.Blob))
	if _, err := os.Stat(p); err != nil {
		return "-"
	}
	return p
}

func newBrowseCmd(g *globals, spec browseSpec) *cobra.Command {
	var f browseFlags
	long := spec.long + browseHelp
	if spec.json == nil {
		long += recordsJSONHelp
	}
	cmd := &cobra.Command{
		Use:               spec.use + " <session>",
		Short:             spec.short,
		Long:              long,
		Example:           spec.example,
		Args:              cobra.RangeArgs(0, 1), // none with --archive: the archive's session
		ValidArgsFunction: g.completeRecordings,
		RunE: func(c *cobra.Command, args []string) error {
			req, err := f.request(spec, time.Now())
			if err != nil {
				return err
			}
			b, id, err := g.recordingsOf(c.Context(), args)
			if err != nil {
				return err
			}
			return g.browse(c.Context(), b, id, spec, f, req)
		},
	}
	g.addRecordingsFlags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.since, "since", "", "only records since this time: a duration back from now (10m, 2h) or an RFC 3339 time")
	fl.StringVar(&f.until, "until", "", "only records before this time (as --since)")
	fl.BoolVarP(&f.follow, "follow", "f", false, "keep printing new records as the host records them (Ctrl-C ends, exit 0)")
	fl.IntVarP(&f.tail, "tail", "n", 0, "only the last N records (with --follow: then the new ones)")
	if spec.level {
		fl.StringVar(&f.level, "level", "", "only log lines of this level or above: debug, info, warn, error (session events are kept)")
	}
	if spec.search {
		fl.StringVar(&f.search, "search", "", "only records whose line contains this text (case ignored)")
	}
	if spec.channel {
		fl.StringVar(&f.channel, "channel", "", "only this metric channel: its number or its name")
	}
	return cmd
}

// browseHelp ends every browse command's help.
const browseHelp = `

The host records what every session sends while it runs ('ansight host run' records by
default), and keeps it after the app has gone and across restarts of the host, within a
budget (see 'ansight host status'): the session may be connected, disconnected or
imported ('ansight session list --all' lists them all).`

// recordsJSONHelp says what --json prints, for the commands that print records.
const recordsJSONHelp = `

--json prints one ansight.session-records/v1 object; with --follow, one record per line.`

// request reads the flags into a records request; now anchors durations.
func (f browseFlags) request(spec browseSpec, now time.Time) (hostapi.RecordsRequest, error) {
	req := hostapi.RecordsRequest{Kinds: spec.kinds, Level: f.level, Search: f.search}
	var err error
	if req.Since, err = parseWhen(f.since, now); err != nil {
		return req, usageErrorf("--since: %v", err)
	}
	if req.Until, err = parseWhen(f.until, now); err != nil {
		return req, usageErrorf("--until: %v", err)
	}
	if f.level != "" {
		if _, ok := recording.ParseLevel(f.level); !ok {
			return req, usageErrorf("--level: %q is not one of debug, info, warn, error", f.level)
		}
	}
	if f.tail < 0 {
		return req, usageErrorf("--tail must not be negative")
	}
	return req, nil
}

// parseWhen reads a time flag: empty, a duration back from now, or an RFC 3339 time.
func parseWhen(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, errors.New("a duration back from now cannot be negative")
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (10m, 2h) nor an RFC 3339 time (2026-03-20T10:00:00Z)", s)
}

// browse runs one browse command.
func (g *globals) browse(ctx context.Context, b hostapi.Backend, id string, spec browseSpec, f browseFlags, req hostapi.RecordsRequest) error {
	br := &browsing{g: g, b: b, id: id, spec: spec, f: f, view: &browseView{channels: map[int]channelInfo{}}}
	req, err := br.prepare(ctx, req)
	if err != nil {
		return err
	}
	err = br.fetch(ctx, req)
	if f.follow && err != nil && ctx.Err() != nil {
		// Ctrl-C is how a follow ends: exit 0, and nothing more on stdout, which with
		// --json is a stream of records one per line that a reader must be able to trust.
		err = nil
	}
	if wire.CodeOf(err) == wire.CodeRecordingOff && spec.fallback != nil && !f.follow {
		return spec.fallback(ctx, g, b, id)
	}
	if err != nil {
		return recordingErr(err)
	}
	return br.finish()
}

// browsing is one run of a browse command: what it has printed or collected so far.
type browsing struct {
	g      *globals
	b      hostapi.Backend
	id     string
	spec   browseSpec
	f      browseFlags
	view   *browseView
	tw     *table           // the table, once a row is printed
	listed []hostapi.Record // the records of a --json listing
}

// prepare completes the request and the view: the metric channels' names and units
// (those declared so far; the declarations come with the samples while following), and
// where record files are, for the kinds that have them.
func (br *browsing) prepare(ctx context.Context, req hostapi.RecordsRequest) (hostapi.RecordsRequest, error) {
	if br.spec.channel {
		p, err := br.b.Records(ctx, br.id, hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordChannel}, Limit: recording.MaxLimit})
		if err != nil && wire.CodeOf(err) != wire.CodeRecordingOff {
			return req, recordingErr(err)
		}
		if err == nil {
			for _, r := range p.Records {
				br.view.channels[*r.Channel] = channelOf(r)
			}
		}
		req.Kinds = append(slices.Clone(req.Kinds), hostapi.RecordChannel)
		if br.f.channel != "" {
			ch, err := resolveChannel(br.f.channel, br.view.channels)
			if err != nil {
				return req, err
			}
			req.Channel = &ch
		}
	}
	if slices.ContainsFunc(req.Kinds, func(k hostapi.RecordKind) bool {
		return k == hostapi.RecordTree || k == hostapi.RecordArtifact || k == hostapi.RecordCrash || k == hostapi.RecordAnnotation
	}) && !br.g.json {
		// An archive's files are unpacked into a temporary store that is gone when the
		// command ends: no path to show.
		if st, err := br.b.Status(ctx); err == nil && st.Recording != nil && br.g.recordings.archive == "" {
			br.view.dir = st.Recording.Dir
		}
	}
	return req, nil
}

// fetch reads the records and emits each: the last --tail ones (then, with --follow, the
// new ones), a follow from the start, or every page.
func (br *browsing) fetch(ctx context.Context, req hostapi.RecordsRequest) error {
	switch {
	case br.f.tail > 0:
		req.Newest, req.Limit = true, br.f.tail
		p, err := br.b.Records(ctx, br.id, req)
		if err != nil {
			return err
		}
		slices.Reverse(p.Records)
		for _, r := range p.Records {
			if err := br.emit(r); err != nil {
				return err
			}
			req.After = r.Seq
		}
		req.Newest, req.Limit = false, 0
		if br.f.follow {
			return br.b.Follow(ctx, br.id, req, br.emit)
		}
		return nil
	case br.f.follow:
		return br.b.Follow(ctx, br.id, req, br.emit)
	}
	req.Limit = recording.MaxLimit
	for {
		p, err := br.b.Records(ctx, br.id, req)
		if err != nil {
			return err
		}
		for _, r := range p.Records {
			if err := br.emit(r); err != nil {
				return err
			}
		}
		if p.Next == 0 {
			return nil
		}
		req.After = p.Next
	}
}

// emit prints one record (a line of JSON when following with --json, a table row
// otherwise) or collects it for a --json listing.
func (br *browsing) emit(r hostapi.Record) error {
	if r.Kind == hostapi.RecordChannel {
		br.view.channels[*r.Channel] = channelOf(r)
	}
	out := br.g.env.Stdout
	switch {
	case br.g.json && br.f.follow:
		line, err := json.Marshal(r, json.Deterministic(true))
		if err != nil {
			return err
		}
		_, err = out.Write(append(line, '\n'))
		return err
	case br.g.json:
		br.listed = append(br.listed, r)
		return nil
	}
	cells := br.spec.row(br.view, r)
	if cells == nil {
		return nil
	}
	if br.tw == nil {
		br.tw = newTable(out)
		if !br.f.follow {
			br.tw.header(br.spec.header...)
		}
	}
	br.tw.row(cells...)
	if br.f.follow {
		br.tw.flush()
	}
	return nil
}

// finish writes what a listing collected, or says it found nothing.
func (br *browsing) finish() error {
	if br.tw != nil {
		br.tw.flush()
	}
	out := br.g.env.Stdout
	switch {
	case br.g.json && br.f.follow:
		return nil
	case br.g.json && br.spec.json != nil:
		return writeJSON(out, br.spec.json(br.id, br.listed))
	case br.g.json:
		if br.listed == nil {
			br.listed = []hostapi.Record{}
		}
		return writeJSON(out, hostapi.Records{Schema: hostapi.SchemaRecords, SessionID: br.id, Records: br.listed})
	case br.tw == nil && !br.f.follow:
		printf(out, "no %s in session %s\n", safe(br.spec.noun), br.id)
	}
	return nil
}

// recordingErr is hostErr with the hint for a host that records nothing.
func recordingErr(err error) error {
	if wire.CodeOf(err) == wire.CodeRecordingOff {
		return &exitError{code: ExitFailure, err: err, hint: "restart the host without --no-record to record sessions"}
	}
	return hostErr(err)
}

// resolveChannel reads --channel: a number, or the name a channel declaration gave it.
func resolveChannel(s string, channels map[int]channelInfo) (int, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, nil
	}
	var names []string
	for id, ch := range channels {
		if strings.EqualFold(ch.name, s) {
			return id, nil
		}
		names = append(names, ch.name)
	}
	slices.Sort(names)
	// The names are the app's: quoted, so that the message holds no control character.
	return 0, usageErrorf("--channel: the session declared no channel %q (it has: %q)", s, names)
}

func channelOf(r hostapi.Record) channelInfo {
	var d struct {
		Unit string `json:"unit"`
	}
	json.Unmarshal(r.Data, &d)
	return channelInfo{name: r.Text, unit: d.Unit}
}

// dataOf decodes what a row needs of a record's data; what does not read stays zero.
func dataOf[T any](r hostapi.Record) T {
	var v T
	if len(r.Data) > 0 {
		json.Unmarshal(r.Data, &v)
	}
	return v
}

// clock shows a record's time: the time of day, with the date when it is not today.
func clock(t time.Time) string {
	t = t.Local()
	if y, m, d := t.Date(); y == time.Now().Year() && m == time.Now().Month() && d == time.Now().Day() {
		return t.Format("15:04:05.000")
	}
	return t.Format("2006-01-02 15:04:05.000")
}

// duration shows milliseconds.
func duration(ms float64) string {
	if ms <= 0 {
		return "-"
	}
	if ms < 10 {
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}

// browseSpecs are the browse commands.
func browseSpecs() []browseSpec {
	return []browseSpec{logsSpec(), metricsSpec(), networkSpec(), eventsSpec(), touchesSpec(), treesSpec(), artifactsSpec()}
}

// logsSpec is 'ansight session logs'.
func logsSpec() browseSpec {
	return browseSpec{
		use: "logs", noun: "log lines", short: "Show an app's log lines and the session's events",
		long: `Show the log lines an app sent (client.log, CLIENT_LOG, the Go SDK's slog handler) with the
session's events (connected, opened, disconnected, foreground, background), oldest first.
The level of a line is what the app said, else what its text starts with ([Error], E/, level=warn).`,
		example: "  ansight session logs com-ansight-demo-notes-001\n  ansight session logs com-ansight-demo-notes-001 --level warn --since 10m\n" +
			"  ansight session logs com-ansight-demo-notes-001 -f --tail 20\n  ansight session logs com-ansight-demo-notes-001 --search payment --json",
		kinds: []hostapi.RecordKind{hostapi.RecordLog, hostapi.RecordState, hostapi.RecordAppState}, level: true, search: true,
		header: []string{"TIME", "LEVEL", "LINE"},
		row: func(_ *browseView, r hostapi.Record) []string {
			switch r.Kind {
			case hostapi.RecordState:
				return []string{clock(r.At), "event", "session " + r.Text}
			case hostapi.RecordAppState:
				return []string{clock(r.At), "event", "app " + r.Text}
			}
			return []string{clock(r.At), fmt.Sprintf("%-5s", r.Level), r.Text}
		},
	}
}

// metricsSpec is 'ansight session metrics'.
func metricsSpec() browseSpec {
	return browseSpec{
		use: "metrics", noun: "metric samples", short: "Show an app's metric samples",
		long: `Show the metric samples an app sent (CLIENT_METRICS, the Go SDK's runtime metrics), with the
names and units its channel declarations gave them (CLIENT_METRIC_CHANNELS).`,
		example: "  ansight session metrics com-ansight-demo-notes-001\n  ansight session metrics com-ansight-demo-notes-001 --channel goroutines -f",
		kinds:   []hostapi.RecordKind{hostapi.RecordMetric}, channel: true,
		header: []string{"TIME", "CHANNEL", "VALUE"},
		row: func(v *browseView, r hostapi.Record) []string {
			if r.Kind != hostapi.RecordMetric || r.Channel == nil {
				return nil
			}
			ch := v.channels[*r.Channel]
			name := ch.name
			if name == "" {
				name = "#" + strconv.Itoa(*r.Channel)
			}
			return []string{clock(r.At), name, strings.TrimSpace(strconv.FormatFloat(r.Value, 'f', -1, 64) + " " + ch.unit)}
		},
	}
}

// networkSpec is 'ansight session network'.
func networkSpec() browseSpec {
	return browseSpec{
		use: "network", noun: "network requests", short: "Show the HTTP requests an app reported",
		long: `Show the HTTP requests an app reported (CLIENT_NETWORK_REQUEST, the Go SDK's RoundTripper):
method, URL, status and duration. The host sanitised them when it received them: values of
credential headers and query parameters read <redacted>.`,
		example: "  ansight session network com-ansight-demo-notes-001\n  ansight session network com-ansight-demo-notes-001 --search /api/orders --json",
		kinds:   []hostapi.RecordKind{hostapi.RecordNetwork}, search: true,
		header: []string{"TIME", "REQUEST", "DURATION"},
		row: func(_ *browseView, r hostapi.Record) []string {
			return []string{clock(r.At), r.Text, duration(r.Value)}
		},
	}
}

// eventsSpec is 'ansight session events'.
func eventsSpec() browseSpec {
	return browseSpec{
		use: "events", noun: "events", short: "Show the events an app reported",
		long:    `Show the events an app reported (CLIENT_EVENTS): navigation, lifecycle, its own.`,
		example: "  ansight session events com-ansight-demo-notes-001 --since 1h",
		kinds:   []hostapi.RecordKind{hostapi.RecordEvent}, search: true,
		header: []string{"TIME", "TYPE", "EVENT"},
		row: func(_ *browseView, r hostapi.Record) []string {
			d := dataOf[struct {
				EventType string `json:"eventType"`
			}](r)
			return []string{clock(r.At), dash(d.EventType), r.Text}
		},
	}
}

// touchesSpec is 'ansight session touches'.
func touchesSpec() browseSpec {
	return browseSpec{
		use: "touches", noun: "touches", short: "Show the touches an app reported",
		long:    `Show the touches an app reported (CLIENT_TOUCH_INPUT, ansight.touches.v1): action, pointer and position.`,
		example: "  ansight session touches com-ansight-demo-notes-001 --json",
		kinds:   []hostapi.RecordKind{hostapi.RecordTouch},
		header:  []string{"TIME", "TOUCH"},
		row: func(_ *browseView, r hostapi.Record) []string {
			return []string{clock(r.At), r.Text}
		},
	}
}

// treesSpec is 'ansight session trees'.
func treesSpec() browseSpec {
	return browseSpec{
		use: "trees", noun: "visual trees", short: "List the visual-tree snapshots an app sent",
		long: `List the visual-tree snapshots an app sent (CLIENT_VISUAL_TREE, on touches or on its own):
source, snapshot, node count, and the file holding the tree ("-" for a live tree: it is
kept in its session's tree pack, and the export and the control API give it as a file).`,
		example: "  ansight session trees com-ansight-demo-notes-001",
		kinds:   []hostapi.RecordKind{hostapi.RecordTree}, search: true,
		header: []string{"TIME", "SNAPSHOT", "NODES", "FILE"},
		row: func(v *browseView, r hostapi.Record) []string {
			d := dataOf[struct {
				NodeCount *int `json:"nodeCount"`
			}](r)
			nodes := "-"
			if d.NodeCount != nil {
				nodes = strconv.Itoa(*d.NodeCount)
			}
			return []string{clock(r.At), dash(r.Text), nodes, v.file(r)}
		},
	}
}

// artifactsSpec is 'ansight session artifacts'.
func artifactsSpec() browseSpec {
	return browseSpec{
		use: "artifacts", noun: "artifacts", short: "List the files an app's tools delivered",
		long: `List the files an app's tools delivered over ASFT (screenshots, generated files, profiles):
name, type, size, and the recording's copy of the file (a link to the host's, not a second copy).`,
		example: "  ansight session artifacts com-ansight-demo-notes-001",
		kinds:   []hostapi.RecordKind{hostapi.RecordArtifact}, search: true,
		header: []string{"TIME", "NAME", "TYPE", "SIZE", "FILE"},
		row: func(v *browseView, r hostapi.Record) []string {
			d := dataOf[struct {
				MimeType string `json:"mimeType"`
			}](r)
			return []string{clock(r.At), r.Text, dash(d.MimeType), humanBytes(r.BlobBytes), v.file(r)}
		},
	}
}

// keptJSON decodes the host's descriptions that kept records carry as their data.
func keptJSON[T any](recs []hostapi.Record, of func(*browseView, hostapi.Record) T) []T {
	out := make([]T, 0, len(recs))
	for _, r := range slices.Backward(recs) { // most recent first, as the host lists them
		if len(r.Data) > 0 {
			out = append(out, of(nil, r))
		}
	}
	return out
}

// completeRecordings offers the ids of every recording, else the connected sessions'.
func (g *globals) completeRecordings(c *cobra.Command, args []string, s string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	b, err := g.backend()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	list, err := b.Recordings(ctx)
	if err != nil || len(list.Sessions) == 0 {
		return g.completeSessions(c, args, s)
	}
	ids := make([]string, len(list.Sessions))
	for i, ss := range list.Sessions {
		ids[i] = ss.ID
	}
	return ids, cobra.ShellCompDirectiveNoFileComp
}

// exportOptions are session export's (and session sanitize's) flags.
type exportOptions struct {
	output   string
	redact   []string
	format   string
	sanitize bool
}

// newSessionExportCmd writes a session's recording as one zip archive.
func newSessionExportCmd(g *globals) *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export <session>",
		Short: "Export a session's recording as one zip archive",
		Long: `Write everything the host recorded of a session to one self-describing zip archive:
manifest.json (format versions, the session, counts of each kind, what was redacted),
records.jsonl (one record per line: logs, metrics, events, touches, network requests,
tool traffic with its request and response bodies, session events) and blobs/ (screen
frames, visual trees, artifacts, crash reports, annotations). 'ansight session import'
reads it back, here or on another machine.

--format official writes the official host's session archive instead (session.json,
session-data/, network/requests/, visual-trees/, session-images/, artifacts/), which the
official 'ansight session import' reads; what it has no place for (tool traffic, control
requests, crash reports as records) travels in artifacts/ansight-go/, from which our import
restores it (docs/recordings.md).

Network records were sanitised when they were recorded (credential headers and query
parameters read <redacted>). --redact removes more before the archive leaves the machine:
the values of the headers, JSON members, query parameters and name=value pairs named, in
every record and JSON file; 'default' stands for the usual credentials
(authorization, cookie, set-cookie, token, password, secret, api_key, …). --sanitize applies
the built-in privacy policy (pii-default, as 'ansight session sanitize'; SECURITY.md).

With no host running, the recordings are read directly; --archive exports (converts) an
archive instead.`,
		Example: "  ansight session export com-ansight-demo-notes-001 -o session.zip\n" +
			"  ansight session export com-ansight-demo-notes-001 -o session.zip --redact default,x-session-id,email\n" +
			"  ansight session export com-ansight-demo-notes-001 -o official.zip --format official --sanitize",
		Args:              cobra.RangeArgs(0, 1), // none with --archive: the archive's session
		ValidArgsFunction: g.completeRecordings,
		RunE:              func(c *cobra.Command, args []string) error { return g.runExport(c.Context(), args, o) },
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "the archive to write (default <session>.zip)")
	cmd.Flags().StringSliceVar(&o.redact, "redact", nil, "header, field and parameter names whose values to remove, comma separated ('default': the usual credentials)")
	cmd.Flags().StringVar(&o.format, "format", recording.FormatAnsight, "the archive's format: ansight (ours) or official (the official host's)")
	cmd.Flags().BoolVar(&o.sanitize, "sanitize", false, "apply the built-in privacy policy (pii-default): detectors, sensitive fields, touches and screen regions")
	g.addRecordingsFlags(cmd)
	return cmd
}

// newSessionSanitizeCmd writes a sanitised archive of a session (the official CLI's
// session sanitize: export with the built-in policy).
func newSessionSanitizeCmd(g *globals) *cobra.Command {
	o := exportOptions{sanitize: true}
	cmd := &cobra.Command{
		Use:   "sanitize <session> [<out.zip>]",
		Short: "Export a session's recording with the built-in privacy policy applied",
		Long: `Write a session's recording as 'ansight session export --sanitize' does: the built-in
policy pii-default replaces e-mail addresses, phone numbers, IP addresses, card numbers and
credentials in every string, the values of sensitive fields and inputs (passwords, tokens,
names), and goes beyond the official policy: touches on sensitive nodes are dropped, frames
are boxed over sensitive nodes and blacked out when no visual tree can decide, and the
values an agent typed into sensitive fields are replaced. sanitization/report.json counts
what was done. SECURITY.md says what it promises and what it does not.`,
		Example:           "  ansight session sanitize com-ansight-demo-notes-001 shared.zip\n  ansight session sanitize com-ansight-demo-notes-001 shared.zip --format official",
		Args:              cobra.RangeArgs(0, 2), // none with --archive: the archive's session
		ValidArgsFunction: g.completeRecordings,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 2 {
				if o.output != "" {
					return usageErrorf("give the archive as an argument or with -o, not both")
				}
				o.output = args[1]
			}
			return g.runExport(c.Context(), args[:min(len(args), 1)], o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "the archive to write (default <session>.zip)")
	cmd.Flags().StringSliceVar(&o.redact, "redact", nil, "more names whose values to remove, as export's --redact")
	cmd.Flags().StringVar(&o.format, "format", recording.FormatAnsight, "the archive's format: ansight (ours) or official (the official host's)")
	g.addRecordingsFlags(cmd)
	return cmd
}

// runExport writes the archive of the session args names (the --archive's, without one)
// to o.output.
func (g *globals) runExport(ctx context.Context, args []string, o exportOptions) error {
	if o.format != recording.FormatAnsight && o.format != recording.FormatOfficial {
		return usageErrorf("--format must be %s or %s", recording.FormatAnsight, recording.FormatOfficial)
	}
	b, id, err := g.recordingsOf(ctx, args)
	if err != nil {
		return err
	}
	output := o.output
	if output == "" {
		output = id + ".zip"
	}
	// The recording's size is what the progress bar counts towards (the archive is about
	// as large: JPEGs are stored, text deflated).
	var size int64
	if s, err := b.Session(ctx, id); err == nil && s.Recording != nil {
		size = s.Recording.Bytes
	}
	if err := mkdirFor(output); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(output), ".ansight-export-*.zip")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	bar := g.progress()
	w := &counted{w: tmp, report: func(n int64) {
		bar.update(hostapi.Progress{FileName: filepath.Base(output), ReceivedBytes: n, SizeBytes: max(size, n)})
	}}
	err = b.Export(ctx, id, hostapi.ExportRequest{Redact: o.redact, Format: o.format, Sanitize: o.sanitize}, w)
	bar.done()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return recordingErr(err)
	}
	sum, err := summarize(tmp.Name(), o.format)
	if err != nil {
		return fmt.Errorf("the host's archive does not read: %w", err)
	}
	if err := os.Rename(tmp.Name(), output); err != nil {
		return err
	}
	abs, _ := filepath.Abs(output)
	return printExport(g, id, abs, w.n, o.format, sum)
}

// printExport says what an export wrote.
func printExport(g *globals, id, abs string, n int64, format string, sum archiveSummary) error {
	m := sum.manifest
	if g.json {
		return writeJSON(g.env.Stdout, exportOutput{Schema: schemaExport, SessionID: id, Path: abs, Bytes: n, Format: format,
			Records: m.Session.Records, Counts: m.Counts, Traffic: m.Traffic, Redacted: m.Redacted, Sanitization: sum.report})
	}
	if format == recording.FormatOfficial {
		printf(g.env.Stdout, "exported session %s in the official host's format to %s (%s)\n", id, abs, humanBytes(n))
	} else {
		printf(g.env.Stdout, "exported %d records of session %s to %s (%s)\n", m.Session.Records, id, abs, humanBytes(n))
		tr := m.Traffic
		printf(g.env.Stdout, "tool calls: %d (%d failed, %d refused by the host), %d files received; logs: %d lines; crash reports: %d\n",
			tr.Calls, tr.Errors, tr.Denied, tr.Transfers, m.Counts[recording.KindLog], m.Counts[recording.KindCrash])
	}
	if len(m.Redacted) > 0 {
		printf(g.env.Stdout, "redacted: %s\n", strings.Join(m.Redacted, ", "))
	}
	if r := sum.report; r != nil {
		printf(g.env.Stdout, "sanitized (%s): %d strings redacted, %d touches dropped (%d undecided), %d frames boxed (%d blacked out), %d typed values, %d artifacts left out\n",
			r.PolicyID, r.RedactedStrings, r.TouchesDropped, r.TouchesUndecided, r.ScreenshotsRedacted, r.ScreenshotsBlackedOut,
			r.TypedValuesRedacted, r.ArtifactsExcluded)
	}
	return nil
}

// schemaExport names session export's --json output.
const schemaExport = "ansight.session-export/v1"

type exportOutput struct {
	Schema    string                   `json:"schema"`
	SessionID string                   `json:"sessionId"`
	Path      string                   `json:"path"`
	Bytes     int64                    `json:"bytes"`
	Format    string                   `json:"format"`
	Records   int64                    `json:"records,omitzero"`
	Counts    map[recording.Kind]int64 `json:"counts,omitempty"`
	Traffic   recording.TrafficSummary `json:"traffic,omitzero"`
	Redacted  []string                 `json:"redacted,omitempty"`
	// Sanitization is the archive's sanitization/report.json, when sanitised.
	Sanitization *recording.SanitizeReport `json:"sanitization,omitempty"`
}

// archiveSummary is what an exported archive says of itself: our manifest, the sanitize
// report.
type archiveSummary struct {
	manifest recording.Manifest
	report   *recording.SanitizeReport
}

// summarize reads an exported archive's manifest (ours) and sanitize report.
func summarize(path, format string) (archiveSummary, error) {
	var s archiveSummary
	zr, err := zip.OpenReader(path)
	if err != nil {
		return s, err
	}
	defer zr.Close()
	read := func(name string, v any) error {
		f, err := zr.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, 1<<20))
		if err != nil {
			return err
		}
		return json.Unmarshal(b, v)
	}
	if format != recording.FormatOfficial {
		if err := read(recording.ManifestName, &s.manifest); err != nil {
			return s, err
		}
	}
	var r recording.SanitizeReport
	if read(recording.SanitizeReportName, &r) == nil {
		s.report = &r
	}
	return s, nil
}

// counted counts the bytes read from r or written to w, and reports the total (progress).
type counted struct {
	r      io.Reader
	w      io.Writer
	n      int64
	report func(int64)
}

func (c *counted) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	c.report(c.n)
	return n, err
}

func (c *counted) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.report(c.n)
	return n, err
}

// newSessionImportCmd stores an archive as a new recording of the host.
func newSessionImportCmd(g *globals) *cobra.Command {
	var passwordEnv string
	cmd := &cobra.Command{
		Use:   "import <file.zip>",
		Short: "Import a recording: ours, the official host's, or an SDK's offline capture",
		Long: `Store an archive as a new recording of the host: one that 'ansight session export'
wrote (here or on another machine), the official host's session archive (session.json), or
an official SDK's offline capture (.ansight/sessions/<id>/), plain or password-protected
(--password-env names the variable that holds the password). It is listed by 'ansight
session list --all', browsed with 'ansight session logs' and the like, and replayed in the
player. Its id is the archive's session's, lower-cased (so that no two recordings' files
share a directory on a case-insensitive file system), with -import-N appended when a
recording holds that id already.

The archive is not trusted: it is refused whole when an entry's name, size or content
fails a check (SECURITY.md); entries the official import skips (visual trees of another
schema or snapshot, older duplicates, unreadable requests) are skipped and counted.`,
		Example: "  ansight session import session.zip\n  ansight session import capture.zip --password-env CAPTURE_PASSWORD --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runSessionImport(c.Context(), g, args[0], passwordEnv)
		},
	}
	cmd.Flags().StringVar(&passwordEnv, "password-env", "", "the environment variable that holds the password of an encrypted archive")
	return cmd
}

// runSessionImport is 'ansight session import'; passwordEnv names the variable holding an
// encrypted archive's password.
func runSessionImport(ctx context.Context, g *globals, path, passwordEnv string) error {
	password := ""
	if passwordEnv != "" {
		p, err := (&recordingsFlags{passwordEnv: passwordEnv}).password(g.env)
		if err != nil {
			return err
		}
		password = p
	}
	f, err := os.Open(path)
	if err != nil {
		return &exitError{code: ExitFailure, err: err, hint: "check the archive's path"}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	b, err := g.backend()
	if err != nil {
		return err
	}
	bar := g.progress()
	s, err := b.Import(ctx, hostapi.ImportRequest{Password: password}, &counted{r: f, report: func(n int64) {
		bar.update(hostapi.Progress{FileName: filepath.Base(path), ReceivedBytes: n, SizeBytes: st.Size()})
	}})
	bar.done()
	if err != nil {
		return importErr(err)
	}
	if g.json {
		return writeJSON(g.env.Stdout, sessionJSON(s))
	}
	printImported(g, s)
	return nil
}

// printImported says what an import stored.
func printImported(g *globals, s *hostapi.Session) {
	n := int64(0)
	if s.Recording != nil {
		n = s.Recording.Records
	}
	tw := newTable(g.env.Stdout) // every cell sanitised: the id is the archive's
	tw.row("imported:", fmt.Sprintf("%d records", n))
	tw.row("session:", s.ID)
	if s.Label != "" {
		tw.row("label:", s.Label)
	}
	if r := s.Import; r != nil {
		tw.row("format:", strings.TrimSpace(r.Format+" "+r.Schema))
		if len(r.Skipped) > 0 {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(r.Skipped)) {
				parts = append(parts, fmt.Sprintf("%s %d", k, r.Skipped[k]))
			}
			tw.row("skipped:", strings.Join(parts, ", "))
		}
		if r.Skipped["label"] > 0 { // the archive's label was refused: say why, and how to give one
			tw.row("label:", "left out: not one line of text without control or hidden characters, at most 200 bytes; set one with "+
				g.command("session rename "+s.ID+" LABEL"))
		}
	}
	tw.row("browse:", g.command("session logs "+s.ID))
	tw.flush()
}

// importErr gives an import's refusal its exit code: a missing or wrong password is a
// usage error with the official words.
func importErr(err error) error {
	switch wire.CodeOf(err) {
	case wire.CodePasswordRequired:
		return &exitError{code: ExitUsage, err: err, hint: "give its password with --password-env NAME", errCode: recording.ReasonPasswordRequired}
	case wire.CodePasswordInvalid:
		return &exitError{code: ExitUsage, err: err, hint: "check the password in the variable --password-env names", errCode: recording.ReasonInvalidPassword}
	case wire.CodeBadRequest:
		return &exitError{code: ExitFailure, err: err, hint: refusedHint}
	}
	return recordingErr(err)
}

// newSessionDeleteCmd removes a session's recording.
func newSessionDeleteCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete <session>",
		Short: "Delete a session's recording",
		Long: `Delete everything the host recorded of a session: its records and their files. The files
the host keeps on its own side (artifacts, crash reports, annotations under <state>/artifacts)
stay; a connected session goes on recording from now on.`,
		Example:           "  ansight session delete com-ansight-demo-notes-001",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeRecordings,
		RunE:              func(c *cobra.Command, args []string) error { return runSessionDelete(c.Context(), g, args) },
	}
}

// runSessionDelete is 'ansight session delete'.
func runSessionDelete(ctx context.Context, g *globals, args []string) error {
	b, err := g.backend()
	if err != nil {
		return err
	}
	if err := b.DeleteRecording(ctx, args[0]); err != nil {
		return recordingErr(err)
	}
	if g.json {
		return writeJSON(g.env.Stdout, struct {
			Schema    string `json:"schema"`
			SessionID string `json:"sessionId"`
			Deleted   bool   `json:"deleted"`
		}{"ansight.session-delete/v1", args[0], true})
	}
	printf(g.env.Stdout, "deleted the recording of session %s\n", args[0])
	return nil
}
