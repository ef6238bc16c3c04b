package recording

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// Archive layout: one zip holding a manifest, the records as JSON lines, and each
// record's file under blobs/.
const (
	ArchiveSchema   = "ansight.recording-archive/v1"
	ManifestName    = "manifest.json"
	RecordsName     = "records.jsonl"
	archiveBlobsDir = "blobs"
)

// Manifest is an archive's manifest.json: what it holds and how to read it.
type Manifest struct {
	Schema string `json:"schema"`
	// Producer names the program and version that exported it.
	Producer   string    `json:"producer,omitzero"`
	ExportedAt time.Time `json:"exportedAt"`
	// Session describes the recording as it was when exported.
	Session Summary `json:"session"`
	// Counts is the number of records of each kind in the archive.
	Counts map[Kind]int64 `json:"counts"`
	// Records names the JSON-lines file of records: one Record per line, oldest first,
	// whose blob member names a file of this archive.
	Records string `json:"records"`
	// Redacted lists the header and field names whose values were removed on export
	// (network records are sanitised on intake in any case).
	Redacted []string `json:"redacted,omitempty"`
	// Versions says which versions of the formats inside it uses.
	Versions ArchiveVersions `json:"versions"`
	// Traffic sums up the tool traffic in the archive.
	Traffic TrafficSummary `json:"traffic"`
}

// TrafficSummary sums up a recording's tool traffic: what a reader of an archive wants to
// know before reading records.jsonl.
type TrafficSummary struct {
	// Calls counts tool.call and tool.batch requests sent, Errors the responses that were
	// not ok, Denied the calls the host refused to send, Transfers the files received.
	Calls     int64 `json:"calls"`
	Errors    int64 `json:"errors"`
	Denied    int64 `json:"denied"`
	Transfers int64 `json:"transfers"`
	// BytesSent and BytesReceived count the messages as they travelled (requests;
	// responses and transfers).
	BytesSent     int64 `json:"bytesSent"`
	BytesReceived int64 `json:"bytesReceived"`
	// Tools counts the calls of each tool (a batch counts for each of its tools).
	Tools map[string]int64 `json:"tools,omitempty"`
}

// add counts one traffic record.
func (s *TrafficSummary) add(rec Record) {
	var d struct {
		Direction     string   `json:"direction"`
		Type          string   `json:"type"`
		ToolIDs       []string `json:"toolIds"`
		Bytes         int64    `json:"bytes"`
		ReceivedBytes int64    `json:"receivedBytes"`
		Outcome       string   `json:"outcome"`
	}
	if rec.Kind != KindTraffic || json.Unmarshal(rec.Data, &d) != nil {
		return
	}
	call := d.Type == "tool.call" || d.Type == "tool.batch"
	switch d.Direction {
	case string(wire.TrafficRequest):
		s.BytesSent += d.Bytes
		if call {
			s.Calls++
			if s.Tools == nil {
				s.Tools = map[string]int64{}
			}
			for _, id := range d.ToolIDs {
				s.Tools[id]++
			}
		}
	case string(wire.TrafficResponse):
		s.BytesReceived += d.Bytes
		if d.Outcome != wire.TrafficOK {
			s.Errors++
		}
	case string(wire.TrafficDenied):
		s.Denied++
	case string(wire.TrafficTransfer):
		s.BytesReceived += d.ReceivedBytes
		if d.Outcome == wire.TrafficOK {
			s.Transfers++
		}
	}
}

// ArchiveVersions are the versions of the formats an archive holds.
type ArchiveVersions struct {
	Archive        int    `json:"archive"`
	NetworkRequest string `json:"networkRequest"`
	Touches        string `json:"touches"`
	Frame          string `json:"frame"`
}

// ExportOptions adjust Export.
type ExportOptions struct {
	// Redact lists header and field names (ASCII case ignored) whose values are replaced
	// by "<redacted>" in every record and JSON file: header entries, object members at any
	// depth, URL query parameters, name=value pairs in text. See DefaultRedact.
	Redact []string
	// Producer is written in the manifest ("ansight 1.2.3").
	Producer string
}

// Export writes one recording as a zip archive to w: manifest.json, records.jsonl and the
// records' files. Records committed while it runs are not included.
func (r *Recorder) Export(ctx context.Context, sessionID string, w io.Writer, opts ExportOptions) error {
	sum, err := r.Session(ctx, sessionID)
	if err != nil {
		return err
	}
	r.writeMu.Lock()
	last := r.nextSeq
	r.writeMu.Unlock()
	rd := newRedactor(opts.Redact)
	m := Manifest{Schema: ArchiveSchema, Producer: opts.Producer, ExportedAt: r.opts.Clock().UTC(), Session: sum,
		Counts: map[Kind]int64{}, Records: RecordsName,
		Versions: ArchiveVersions{Archive: 1, NetworkRequest: NetworkSchema, Touches: TouchSchema, Frame: "ASJP/1 JPEG"}}
	if rd != nil {
		for n := range rd.names {
			m.Redacted = append(m.Redacted, n)
		}
		slices.Sort(m.Redacted)
		if len(m.Session.Info) > 0 {
			m.Session.Info = rd.json(m.Session.Info)
		}
	}
	var recs bytes.Buffer
	var blobs []Record
	q := Query{Session: sessionID, Limit: MaxLimit}
	for {
		p, err := r.Records(ctx, q)
		if err != nil {
			return err
		}
		for _, rec := range p.Records {
			if rec.Seq > last {
				break
			}
			if rd != nil {
				rec.Text = rd.string(rec.Text)
				if len(rec.Data) > 0 {
					rec.Data = rd.json(rec.Data)
				}
			}
			if rec.Blob != "" {
				blobs = append(blobs, rec)
				rec.Blob = archiveBlobName(rec)
			}
			m.Counts[rec.Kind]++
			m.Traffic.add(rec)
			b, err := json.Marshal(rec, json.Deterministic(true))
			if err != nil {
				return err
			}
			recs.Write(b)
			recs.WriteByte('\n')
		}
		if p.Next == 0 {
			break
		}
		q.After = p.Next
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
	if err := zipFile(zw, RecordsName, recs.Bytes(), true, m.ExportedAt); err != nil {
		return err
	}
	for _, rec := range blobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.zipBlob(zw, rec, rd); err != nil {
			return err
		}
	}
	return zw.Close()
}

// archiveBlobName is a record's file inside an archive: blobs/<kind>/<seq>.<ext>.
func archiveBlobName(rec Record) string {
	return path.Join(archiveBlobsDir, string(rec.Kind), fmt.Sprintf("%d%s", rec.Seq, path.Ext(rec.Blob)))
}

// zipBlob copies a record's file into the archive, redacting JSON files.
func (r *Recorder) zipBlob(zw *zip.Writer, rec Record, rd *redactor) error {
	f, err := r.OpenBlob(rec)
	if errors.Is(err, ErrNotFound) {
		return nil // evicted meanwhile: the record says which file it had
	}
	if err != nil {
		return err
	}
	defer f.Close()
	name := archiveBlobName(rec)
	if rd != nil && path.Ext(rec.Blob) == ".json" {
		b, err := io.ReadAll(io.LimitReader(f, wire.DefaultMaxMessageBytes+1))
		if err != nil {
			return err
		}
		var v jsontext.Value
		if wire.Unmarshal(b, &v) == nil {
			b = rd.json(v)
		}
		return zipFile(zw, name, b, true, rec.At)
	}
	compress := path.Ext(rec.Blob) != ".jpg"
	method := zip.Store
	if compress {
		method = zip.Deflate
	}
	zf, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: rec.At})
	if err != nil {
		return err
	}
	_, err = io.Copy(zf, f)
	return err
}

// zipFile adds a file to the archive, modified at modified: an entry without a time shows
// as of 1980 in archive tools.
func zipFile(zw *zip.Writer, name string, data []byte, deflate bool, modified time.Time) error {
	h := &zip.FileHeader{Name: name, Method: zip.Store, Modified: modified}
	if deflate {
		h.Method = zip.Deflate
	}
	f, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return err
}

// Bounds of an archive being imported.
const (
	maxManifestBytes   = 1 << 20
	maxArchiveEntries  = 1 << 20
	maxRecordLineBytes = wire.DefaultMaxMessageBytes + 1<<20
	importChunk        = 500
)

// ImportOptions adjust Import.
type ImportOptions struct {
	// ID is the imported recording's id. Default: the archive's session id, with
	// "-import-N" appended when a recording of that id exists.
	ID string
}

// Import reads an archive Export wrote and stores it as a new recording (Origin "import").
// The archive is not trusted: sizes, names and every record are checked, and the
// recordings' budgets apply to it. An archive that fails a check leaves nothing behind.
func (r *Recorder) Import(ctx context.Context, ra io.ReaderAt, size int64, opts ImportOptions) (Summary, error) {
	a, err := openArchive(ra, size, r.opts.MaxBytes)
	if err != nil {
		return Summary{}, err
	}
	defer a.close()
	m := a.manifest

	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	id := opts.ID
	if id == "" {
		id = r.freeID(clip(strings.TrimSpace(m.Session.ID), 128))
	} else if r.Recorded(id) {
		return Summary{}, fmt.Errorf("recording: a recording %q exists", id)
	}
	tmp, err := os.MkdirTemp(r.dir, "import-")
	if err != nil {
		return Summary{}, err
	}
	defer os.RemoveAll(tmp)

	info := infoJSON(m.Session.Info)
	update := map[string]*sessionUpdate{id: {info: info, state: clip(m.Session.State, 64)}}
	if info == nil {
		o := object{{"id", quoted(id)}, {"appId", quoted(m.Session.AppID)}, {"deviceId", quoted(m.Session.DeviceID)}, {"deviceName", quoted(m.Session.DeviceName)}}
		update[id].info = o.encode()
	}
	var chunk []pendingEntry
	committed := false
	flush := func() error {
		_, err := r.commit(ctx, chunk, update, "import")
		committed = committed || err == nil
		chunk, update = chunk[:0], nil
		return err
	}
	err = func() error {
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			e, err := a.next(tmp)
			if err == io.EOF {
				return flush()
			}
			if err != nil {
				return err
			}
			chunk = append(chunk, pendingEntry{session: id, arrival: e.at, entry: e})
			if len(chunk) == importChunk {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}()
	if err != nil {
		if committed {
			r.deleteLocked(ctx, id) // the part already stored
		}
		return Summary{}, err
	}
	r.enforceBudgets(ctx)
	return r.Session(ctx, id)
}

// archive is an archive opened for reading: its manifest checked, its records read one at
// a time.
type archive struct {
	manifest Manifest
	files    map[string]*zip.File
	rc       io.ReadCloser
	br       *bufio.Reader
	line     int
}

// openArchive opens an archive of at most budget bytes unpacked and reads its manifest.
func openArchive(ra io.ReaderAt, size, budget int64) (*archive, error) {
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, fmt.Errorf("recording: read archive: %w", err)
	}
	if len(zr.File) > maxArchiveEntries {
		return nil, fmt.Errorf("recording: archive has %d entries, more than %d", len(zr.File), maxArchiveEntries)
	}
	a := &archive{files: map[string]*zip.File{}}
	var total uint64
	for _, f := range zr.File {
		a.files[f.Name] = f
		total += f.UncompressedSize64
	}
	if total > uint64(budget) {
		return nil, fmt.Errorf("recording: archive holds %d bytes, more than the recordings' budget of %d", total, budget)
	}
	mf := a.files[ManifestName]
	if mf == nil {
		return nil, errors.New("recording: archive has no " + ManifestName)
	}
	mb, err := readZip(mf, maxManifestBytes)
	if err != nil {
		return nil, err
	}
	if err := wire.Unmarshal(mb, &a.manifest); err != nil {
		return nil, fmt.Errorf("recording: %s: %w", ManifestName, err)
	}
	if a.manifest.Schema != ArchiveSchema {
		return nil, fmt.Errorf("recording: archive schema %q, want %q", a.manifest.Schema, ArchiveSchema)
	}
	rf := a.files[a.manifest.Records]
	if rf == nil {
		return nil, fmt.Errorf("recording: archive has no %q", a.manifest.Records)
	}
	if a.rc, err = rf.Open(); err != nil {
		return nil, fmt.Errorf("recording: %s: %w", a.manifest.Records, err)
	}
	a.br = bufio.NewReaderSize(a.rc, 64<<10)
	return a, nil
}

// next reads the next record, its file (if any) extracted into dir; io.EOF after the last.
func (a *archive) next(dir string) (entry, error) {
	for {
		b, err := readLine(a.br, maxRecordLineBytes)
		if err == io.EOF {
			return entry{}, io.EOF
		}
		if err != nil {
			return entry{}, fmt.Errorf("recording: %s: %w", a.manifest.Records, err)
		}
		a.line++
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		e, err := importEntry(b, a.files, dir, a.line)
		if err != nil {
			return entry{}, fmt.Errorf("recording: %s line %d: %w", a.manifest.Records, a.line, err)
		}
		return e, nil
	}
}

func (a *archive) close() { a.rc.Close() }

// importEntry checks one record line and extracts its file to dir.
func importEntry(b []byte, files map[string]*zip.File, dir string, line int) (entry, error) {
	var rec Record
	if err := wire.Unmarshal(b, &rec); err != nil {
		return entry{}, err
	}
	if !rec.Kind.Valid() {
		return entry{}, fmt.Errorf("unknown kind %q", rec.Kind)
	}
	if len(rec.Data) > 0 && rec.Data.Kind() != '{' {
		return entry{}, errors.New("data is not an object")
	}
	e := entry{kind: rec.Kind, at: rec.At, level: rec.Level, text: clip(rec.Text, maxTextBytes), value: rec.Value, data: compact(rec.Data)}
	if rec.Channel != nil {
		e.channel, e.hasChan = *rec.Channel, true
	}
	if rec.Blob != "" {
		f := files[rec.Blob]
		if f == nil || !strings.HasPrefix(rec.Blob, archiveBlobsDir+"/") || !filepath.IsLocal(filepath.FromSlash(rec.Blob)) {
			return entry{}, fmt.Errorf("blob %q is not in the archive", rec.Blob)
		}
		e.ext = strings.TrimPrefix(path.Ext(rec.Blob), ".")
		if !plainExt(e.ext) {
			e.ext = "bin"
		}
		rc, err := f.Open()
		if err != nil {
			return entry{}, err
		}
		defer rc.Close()
		tmp := filepath.Join(dir, fmt.Sprintf("%d.%s", line, e.ext))
		out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return entry{}, err
		}
		// The declared size bounds the copy: a zip that lies inflates no further.
		_, err = io.Copy(out, io.LimitReader(rc, int64(f.UncompressedSize64)))
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return entry{}, err
		}
		e.link, e.owned = tmp, true
	}
	return e, nil
}

func plainExt(ext string) bool {
	if ext == "" || len(ext) > 8 {
		return false
	}
	for _, c := range ext {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// readZip reads one archive entry of at most max bytes.
func readZip(f *zip.File, max int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(max) {
		return nil, fmt.Errorf("recording: %s is larger than %d bytes", f.Name, max)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, max))
}

// readLine reads one line (without its end) of at most max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, fmt.Errorf("a line is longer than %d bytes", max)
		}
		switch err {
		case nil:
			return bytes.TrimRight(line, "\r\n"), nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			if len(line) == 0 {
				return nil, io.EOF
			}
			return line, nil
		default:
			return nil, err
		}
	}
}

// freeID returns id, or id-import-N, whichever no recording holds. r.writeMu is held.
func (r *Recorder) freeID(id string) string {
	if id == "" {
		id = "recording"
	}
	if !r.Recorded(id) {
		return id
	}
	for n := 1; ; n++ {
		if c := fmt.Sprintf("%s-import-%d", id, n); !r.Recorded(c) {
			return c
		}
	}
}
