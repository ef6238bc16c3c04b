package recording

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// ExportOptions adjust Export.
type ExportOptions struct {
	// Format is FormatAnsight (the default: manifest.json, records.jsonl, blobs/) or
	// FormatOfficial (the official host's session archive; see docs/recordings.md for
	// what it cannot carry and where the rest goes).
	Format string
	// Redact lists header and field names (ASCII case ignored) whose values are replaced
	// by "<redacted>" in every record and JSON file: header entries, object members at any
	// depth, URL query parameters, name=value pairs in text. See DefaultRedact.
	Redact []string
	// Sanitize applies the built-in policy (SanitizePolicyID, sanitize.go and
	// sensitive.go) and adds its counts as sanitization/report.json.
	Sanitize bool
	// Producer is written in the manifest ("ansight 1.2.3").
	Producer string
}

// Export writes one recording as a zip archive to w, in opts.Format. Records committed
// while it runs are not included.
func (r *Recorder) Export(ctx context.Context, sessionID string, w io.Writer, opts ExportOptions) error {
	sum, err := r.Session(ctx, sessionID)
	if err != nil {
		return err
	}
	r.writeMu.Lock()
	last := r.nextSeq
	r.writeMu.Unlock()
	x := &exporter{r: r, ctx: ctx, id: sessionID, last: last, rd: newRedactor(opts.Redact), now: r.opts.Clock().UTC()}
	if opts.Sanitize {
		x.san = newSanitizer(x.now)
		if err := x.indexTrees(); err != nil {
			return err
		}
	}
	switch opts.Format {
	case "", FormatAnsight:
		return x.ours(w, sum, opts)
	case FormatOfficial:
		return x.official(w, sum)
	}
	return fmt.Errorf("recording: unknown export format %q (want %q or %q)", opts.Format, FormatAnsight, FormatOfficial)
}

// exporter is one export: the session's records as they leave the machine, redacted and
// sanitised.
type exporter struct {
	r    *Recorder
	ctx  context.Context
	id   string
	last int64 // records after this seq were committed after the export started
	rd   *redactor
	san  *sanitizer
	now  time.Time
}

// exported is one record ready to be written: file is its file's content when the export
// changed it (nil: copy the stored file as it is), and keep is false for a record the
// sanitize policy drops.
type exported struct {
	Record
	file []byte
}

// each calls fn with the session's records of kinds (all when none), oldest first,
// prepared for export; records the policy drops are not passed.
func (x *exporter) each(kinds []Kind, fn func(exported) error) error {
	return x.raw(kinds, func(rec Record) error {
		e, keep, err := x.prepare(rec)
		if err != nil || !keep {
			return err
		}
		return fn(e)
	})
}

// raw calls fn with the stored records of kinds, oldest first.
func (x *exporter) raw(kinds []Kind, fn func(Record) error) error {
	q := Query{Session: x.id, Kinds: kinds, Limit: MaxLimit}
	for {
		p, err := x.r.Records(x.ctx, q)
		if err != nil {
			return err
		}
		for _, rec := range p.Records {
			if rec.Seq > x.last {
				return nil
			}
			if err := fn(rec); err != nil {
				return err
			}
		}
		if p.Next == 0 {
			return nil
		}
		q.After = p.Next
	}
}

// indexTrees reads the recording's visual trees, and the trees in its tool answers, for
// the sanitize policy's screen and typing rules.
func (x *exporter) indexTrees() error {
	x.san.trees = &treeIndex{}
	err := x.raw([]Kind{KindTree, KindTraffic}, func(rec Record) error {
		var b []byte
		if rec.Blob != "" {
			var err error
			if b, err = x.read(rec, wire.DefaultMaxMessageBytes); err != nil {
				return err
			}
		}
		if rec.Kind == KindTraffic {
			x.san.nodes.learnTraffic(rec.Data, b)
			return nil
		}
		x.san.trees.add(rec, b) // a tree whose file is gone still says a tree was there: it decides nothing
		x.san.nodes.learnTree(b)
		return nil
	})
	x.san.trees.sort()
	return err
}

// read returns a record's stored file, at most max bytes; nil when it is gone (evicted).
func (x *exporter) read(rec Record, max int64) ([]byte, error) {
	f, err := x.r.OpenBlob(rec)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("recording: record %d's file is larger than %d bytes", rec.Seq, max)
	}
	return b, nil
}

// prepare applies the redaction list and the sanitize policy to a record and its file.
func (x *exporter) prepare(rec Record) (exported, bool, error) {
	e := exported{Record: rec}
	if x.rd != nil {
		e.Text = x.rd.string(e.Text)
		if len(e.Data) > 0 {
			e.Data = x.rd.json(e.Data)
		}
	}
	if x.san != nil {
		if e.Kind == KindTouch {
			switch x.san.trees.judgeTouch(rec) {
			case touchOnSensitive:
				x.san.report.TouchesDropped++
				return e, false, nil
			case touchUndecided:
				x.san.report.TouchesUndecided++
				return e, false, nil
			}
		}
		if e.Kind == KindTraffic {
			var n int
			e.Data, _, n = x.san.nodes.maskTraffic(e.Data, nil)
			x.san.report.TypedValuesRedacted += n
		}
		e.Text = x.san.text(e.Text, false)
		if len(e.Data) > 0 {
			e.Data = x.san.json(e.Data, false)
		}
	}
	if rec.Blob == "" || (x.rd == nil && x.san == nil) {
		return e, true, nil
	}
	ext := path.Ext(rec.Blob)
	switch {
	case x.san != nil && rec.Kind == KindFrame:
		return x.frame(e)
	case x.san != nil:
		b, err := x.read(rec, maxSanitizedText)
		if err != nil && rec.BlobBytes <= maxSanitizedText {
			return e, false, err
		}
		if rec.Kind == KindTraffic && b != nil {
			var n int
			_, b, n = x.san.nodes.maskTraffic(rec.Data, b)
			x.san.report.TypedValuesRedacted += n
		}
		name := rec.Blob
		if fn, ok := str(objectOf(rec.Data).get("fileName")); ok && rec.Kind == KindArtifact {
			name = fn
		}
		if out, ok := x.san.textFile(name, b); ok && b != nil {
			e.file = out
			if rec.Kind == KindArtifact {
				x.san.report.ArtifactsSanitized++
			}
			return e, true, nil
		}
		if ext == ".json" && b != nil {
			var v jsontext.Value
			if strictValue(b, &v) == nil {
				e.file = x.san.json(v, false)
				return e, true, nil
			}
		}
		// A binary file (an artifact, an annotation bundle) or one too large to sanitise
		// is left out; the record says so.
		x.san.report.ArtifactsExcluded++
		e.Blob, e.BlobBytes = "", 0
		e.Data = objectOf(e.Data).set("excluded", quoted("sanitize: binary or larger than 8 MiB")).encode()
		return e, true, nil
	case ext == ".json":
		b, err := x.read(rec, wire.DefaultMaxMessageBytes)
		if err != nil || b == nil {
			return e, err == nil, err
		}
		var v jsontext.Value
		if wire.Unmarshal(b, &v) == nil {
			b = x.rd.json(v)
		}
		e.file = b
	}
	return e, true, nil
}

// frame boxes a frame's sensitive regions, or blacks it out when no tree decides; a frame
// that cannot be decoded is left out.
func (x *exporter) frame(e exported) (exported, bool, error) {
	b, err := x.read(e.Record, 64<<20)
	if err != nil {
		return e, false, err
	}
	if b == nil {
		return e, true, nil // evicted: the record says which file it had
	}
	frameID, _ := str(objectOf(e.Record.Data).get("frameId"))
	t := x.san.trees.forFrame(frameID, e.At)
	out, boxes, err := boxFrame(b, t)
	if err != nil {
		x.san.report.ScreenshotsRemoved++
		return e, false, nil
	}
	if boxes > 0 {
		x.san.report.ScreenshotsRedacted++
		x.san.report.ScreenshotRegionsRedacted += boxes
		if t == nil {
			x.san.report.ScreenshotsBlackedOut++
		}
	}
	e.file, e.BlobBytes = out, int64(len(out))
	return e, true, nil
}

// objectOf is a record's data as an object (empty when it has none).
func objectOf(v jsontext.Value) object {
	o, _ := members(v)
	return o
}

// copyFile writes a record's file to w: the export's content, or the stored file.
func (x *exporter) copyFile(w io.Writer, e exported) error {
	if e.file != nil {
		_, err := w.Write(e.file)
		return err
	}
	f, err := x.r.OpenBlob(e.Record)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// zipEntry adds a file (deflated unless it is an image or compressed already) to the
// archive, modified at modified.
func zipEntry(zw *zip.Writer, name string, modified time.Time, deflate bool) (io.Writer, error) {
	h := &zip.FileHeader{Name: name, Method: zip.Store, Modified: modified}
	if deflate {
		h.Method = zip.Deflate
	}
	return zw.CreateHeader(h)
}

// storedExt lists the extensions of files kept as they are (not deflated again).
var storedExt = []string{".jpg", ".jpeg", ".png", ".webp", ".zip", ".gz", ".ansightannotation"}

// ours writes our own format: the records' files under blobs/, records.jsonl, the
// manifest and, sanitised, the policy's report.
func (x *exporter) ours(w io.Writer, sum Summary, opts ExportOptions) error {
	m := Manifest{Schema: ArchiveSchema, Producer: opts.Producer, ExportedAt: x.now, Session: sum,
		Counts: map[Kind]int64{}, Records: RecordsName,
		Versions: ArchiveVersions{Archive: 1, NetworkRequest: NetworkSchema, Touches: TouchSchema, Frame: "ASJP/1 JPEG"}}
	m.Session.Import = nil
	if x.rd != nil {
		for n := range x.rd.names {
			m.Redacted = append(m.Redacted, n)
		}
		slices.Sort(m.Redacted)
		if len(m.Session.Info) > 0 {
			m.Session.Info = x.rd.json(m.Session.Info)
		}
		m.Session.Label = x.rd.string(m.Session.Label)
	}
	if x.san != nil {
		m.Sanitized = SanitizePolicyID
		if len(m.Session.Info) > 0 {
			m.Session.Info = x.san.json(m.Session.Info, false)
		}
		m.Session.DeviceName = x.san.text(m.Session.DeviceName, true)
		m.Session.Label = x.san.text(m.Session.Label, false) // a name a user typed: it may hold an address
	}
	// The manifest comes first, then the records, then their files, as archive tools list
	// them: the records and the files the export changed wait in spools meanwhile.
	recs, err := newSpool()
	if err != nil {
		return err
	}
	defer recs.close()
	changed, err := newSpool()
	if err != nil {
		return err
	}
	defer changed.close()
	type pending struct {
		e        exported
		off, len int64
	}
	var files []pending
	err = x.each(nil, func(e exported) error {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		if e.Blob != "" {
			p := pending{e: e, off: -1}
			if e.file != nil {
				p.off, p.len = changed.n, int64(len(e.file))
				if _, err := changed.Write(e.file); err != nil {
					return err
				}
				p.e.file = nil
			}
			files = append(files, p)
			e.Blob = archiveBlobName(e.Record)
		}
		m.Counts[e.Kind]++
		m.Traffic.add(e.Record)
		return appendLine(recs, e.Record)
	})
	if err != nil {
		return err
	}
	m.Session.Records = 0
	for _, n := range m.Counts {
		m.Session.Records += n
	}
	zw := zip.NewWriter(w)
	mb, err := json.Marshal(m, json.Deterministic(true), jsontext.WithIndent("  "))
	if err != nil {
		return err
	}
	if err := zipFile(zw, ManifestName, mb, true, m.ExportedAt); err != nil {
		return err
	}
	fw, err := zipEntry(zw, RecordsName, m.ExportedAt, true)
	if err != nil {
		return err
	}
	if _, err := io.Copy(fw, recs.all()); err != nil {
		return err
	}
	for _, p := range files {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		fw, err := zipEntry(zw, archiveBlobName(p.e.Record), p.e.At, !slices.Contains(storedExt, path.Ext(p.e.Blob)))
		if err != nil {
			return err
		}
		if p.off >= 0 {
			_, err = io.Copy(fw, changed.section(p.off, p.len))
		} else {
			err = x.copyFile(fw, p.e)
		}
		if err != nil {
			return err
		}
	}
	if x.san != nil {
		if err := x.writeReport(zw); err != nil {
			return err
		}
	}
	return zw.Close()
}

// writeReport adds the sanitize policy's counts.
func (x *exporter) writeReport(zw *zip.Writer) error {
	b, err := json.Marshal(x.san.report, json.Deterministic(true))
	if err != nil {
		return err
	}
	return zipFile(zw, SanitizeReportName, b, true, x.now)
}

// appendLine adds a record to a records.jsonl being written.
func appendLine(w io.Writer, rec Record) error {
	b, err := json.Marshal(rec, json.Deterministic(true))
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// archiveBlobName is a record's file inside our archive: blobs/<kind>/<seq>.<ext>.
func archiveBlobName(rec Record) string {
	return path.Join(archiveBlobsDir, string(rec.Kind), fmt.Sprintf("%d%s", rec.Seq, path.Ext(rec.Blob)))
}
