package recording

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

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
	// Sanitized names the sanitize policy applied (SanitizePolicyID), whose counts are in
	// the archive's sanitization/report.json.
	Sanitized string `json:"sanitized,omitempty"`
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
	maxRecordLineBytes = wire.DefaultMaxMessageBytes + 1<<20
	importChunk        = 500
)

// archive is an archive opened for reading: its manifest checked, its records read one at
// a time.
type archive struct {
	manifest Manifest
	z        *zipArchive
	dir      string
	rc       io.ReadCloser
	br       *bufio.Reader
	line     int
}

// openArchive reads the manifest of an archive in our format (z holds manifest.json).
func openArchive(z *zipArchive, dir string) (*archive, error) {
	a := &archive{z: z, dir: dir}
	mb, err := z.readAll(ManifestName, maxManifestBytes)
	if err != nil {
		return nil, err
	}
	if err := wire.Unmarshal(mb, &a.manifest); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestName, err)
	}
	if a.manifest.Schema != ArchiveSchema {
		return nil, fmt.Errorf("archive schema %q, want %q", a.manifest.Schema, ArchiveSchema)
	}
	if !z.has(a.manifest.Records) {
		return nil, fmt.Errorf("the archive has no %q", a.manifest.Records)
	}
	if a.rc, err = z.open(a.manifest.Records); err != nil {
		return nil, fmt.Errorf("%s: %w", a.manifest.Records, err)
	}
	a.br = bufio.NewReaderSize(a.rc, 64<<10)
	return a, nil
}

// next reads the next record, its file (if any) extracted into a.dir; io.EOF after the last.
func (a *archive) next() (entry, error) {
	for {
		b, err := readLine(a.br, maxRecordLineBytes)
		if err == io.EOF {
			return entry{}, io.EOF
		}
		if err != nil {
			return entry{}, fmt.Errorf("%s: %w", a.manifest.Records, err)
		}
		a.line++
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		e, err := importEntry(b, a.z, a.dir, a.line)
		if err != nil {
			return entry{}, fmt.Errorf("%s line %d: %w", a.manifest.Records, a.line, err)
		}
		return e, nil
	}
}

func (a *archive) close() { a.rc.Close() }

// meta is the recording's description from the manifest.
func (a *archive) meta() importMeta {
	m := a.manifest
	info := infoJSON(m.Session.Info)
	if info == nil {
		info = object{{"id", quoted(m.Session.ID)}, {"appId", quoted(m.Session.AppID)}, {"deviceId", quoted(m.Session.DeviceID)},
			{"deviceName", quoted(m.Session.DeviceName)}}.encode()
	}
	return importMeta{id: m.Session.ID, info: info, state: m.Session.State, label: m.Session.Label}
}

// isOurManifest reports whether the archive's manifest.json is ours (an offline capture
// exported without its root directory has a manifest.json too).
func isOurManifest(z *zipArchive) bool {
	if z.size(ManifestName) > maxManifestBytes {
		return false
	}
	b, err := z.readAll(ManifestName, maxManifestBytes)
	if err != nil {
		return false
	}
	obj, err := parseObject(b)
	if err != nil {
		return false
	}
	schema, _ := str(obj.get("schema"))
	return schema == ArchiveSchema
}

// report says what was read: our format carries everything it holds.
func (a *archive) report() ImportReport { return ImportReport{Format: FormatAnsight} }

// importEntry checks one record line and extracts its file to dir.
func importEntry(b []byte, z *zipArchive, dir string, line int) (entry, error) {
	return importEntryFrom(b, z, dir, fmt.Sprint(line), archiveBlobsDir+"/")
}

// importEntryFrom checks one record line whose file (if any) is an entry under blobs (or,
// for an artifact record, under also), and extracts the file to dir under the name tmp.
func importEntryFrom(b []byte, z *zipArchive, dir, tmp, blobs string, also ...string) (entry, error) {
	var rec Record
	if err := wire.Unmarshal(b, &rec); err != nil {
		return entry{}, err
	}
	if !rec.Kind.Valid() {
		return entry{}, fmt.Errorf("unknown kind %q", rec.Kind)
	}
	if err := checkNumbers(rec); err != nil {
		return entry{}, err
	}
	if len(rec.Data) > 0 && rec.Data.Kind() != '{' {
		return entry{}, errors.New("data is not an object")
	}
	e := entry{kind: rec.Kind, at: rec.At, level: rec.Level, text: clip(rec.Text, maxTextBytes), value: rec.Value, data: compact(rec.Data)}
	if rec.Channel != nil {
		e.channel, e.hasChan = *rec.Channel, true
	}
	if rec.Blob != "" {
		under := strings.HasPrefix(rec.Blob, blobs)
		for _, a := range also {
			under = under || (rec.Kind == KindArtifact && strings.HasPrefix(rec.Blob, a))
		}
		if !z.has(rec.Blob) || !under {
			return entry{}, fmt.Errorf("blob %q is not in the archive", rec.Blob)
		}
		e.ext = strings.TrimPrefix(path.Ext(rec.Blob), ".")
		if !plainExt(e.ext) {
			e.ext = "bin"
		}
		p := filepath.Join(dir, tmp+"."+e.ext)
		if _, err := z.extract(rec.Blob, p); err != nil {
			return entry{}, err
		}
		e.link, e.owned = p, true
	}
	return e, nil
}

// checkNumbers refuses a record whose numbers no recorder writes: a negative or absurd
// seq or size, a time outside years 1970–9999, a channel outside 0–255.
func checkNumbers(rec Record) error {
	switch {
	case rec.Seq < 0 || rec.Seq > 1<<53:
		return fmt.Errorf("seq %d is out of range", rec.Seq)
	case rec.Size < 0 || rec.Size > DefaultMaxBytes<<4:
		return fmt.Errorf("size %d is out of range", rec.Size)
	case rec.BlobBytes < 0 || rec.BlobBytes > DefaultMaxBytes<<4:
		return fmt.Errorf("blobBytes %d is out of range", rec.BlobBytes)
	case rec.At.Year() < 1970 || rec.At.Year() > 9999:
		return fmt.Errorf("time %s is out of range", rec.At.Format(time.RFC3339))
	case rec.Channel != nil && (*rec.Channel < 0 || *rec.Channel > 255):
		return fmt.Errorf("channel %d is out of range", *rec.Channel)
	case math.IsNaN(rec.Value) || math.IsInf(rec.Value, 0):
		return errors.New("value is not a number")
	}
	return nil
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
