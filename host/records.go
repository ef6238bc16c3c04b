package host

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ansight-go/ansight/wire"
)

// Per-session records are what apps hand over for keeping: crash reports (crash.handoff)
// and annotated-feedback bundles (annotation.submit). They live in the session's
// directory, <root>/<session id>, where root is Options.Tools.ArtifactDir (the session's
// tool client saves its artifacts in the same directory) or, when that is empty, a
// temporary directory made on first use:
//
//	<session>/crashes/<id>/report.json             the report as the app sent it
//	<session>/crashes/<id>/native.trace            traceBase64, decoded (when present)
//	<session>/crashes/<id>/metrickit.json          metricKitPayloadBase64, decoded (when present)
//	<session>/crashes/<id>/crash.json              the CrashReport listings show
//	<session>/annotations/<id>.ansightannotation   the bundle (a zip)
//	<session>/annotations/<id>.json                the Annotation listings show
//
// The directory is the truth: listings read it, so they survive the session's eviction
// from the registry (but not a new host reusing the id: see Server.newSessionIDLocked).
// Everything is bounded per session by RecordLimits.

// Record limits' defaults.
const (
	DefaultMaxCrashReports    = 32
	DefaultMaxCrashBytes      = 64 << 20
	DefaultMaxAnnotations     = 32
	DefaultMaxAnnotationBytes = 1 << 30
)

// RecordLimits bound what the host keeps for each session of what apps hand over. A
// request beyond them is answered success:false, which leaves the report or bundle in the
// app's outbox for a later connection: nothing is dropped silently.
type RecordLimits struct {
	// CrashReports and CrashBytes bound a session's crash reports: their number and the
	// size of all their files (DefaultMaxCrashReports, DefaultMaxCrashBytes). One report
	// is at most session.MaxCrashReportBytes of JSON plus two traces of at most
	// session.MaxCrashTraceBytes.
	CrashReports int
	CrashBytes   int64
	// Annotations and AnnotationBytes bound a session's annotation bundles: their number
	// and their total size, received or announced (DefaultMaxAnnotations,
	// DefaultMaxAnnotationBytes).
	Annotations     int
	AnnotationBytes int64
}

func (l RecordLimits) withDefaults() RecordLimits {
	setDefault(&l.CrashReports, DefaultMaxCrashReports)
	setDefault(&l.CrashBytes, DefaultMaxCrashBytes)
	setDefault(&l.Annotations, DefaultMaxAnnotations)
	setDefault(&l.AnnotationBytes, DefaultMaxAnnotationBytes)
	return l
}

// CrashReport is a crash report an app handed over, as kept.
type CrashReport struct {
	// ID names the report in its session: derived from ProcessSessionID and ReportID, so
	// that a report delivered twice (the app retries when an answer is lost) is kept once.
	ID       string `json:"id"`
	ReportID string `json:"reportId"`
	// SessionID is the session that keeps it: the crashed process's when the host still
	// knows it (same app, grant and processSessionId), else the delivering session.
	SessionID string `json:"sessionId"`
	// ProcessSessionID is the processSessionId of the process that crashed.
	ProcessSessionID string `json:"processSessionId"`
	// DeliveredBy is the session of the process that delivered it.
	DeliveredBy string `json:"deliveredBy"`
	Platform    string `json:"platform,omitzero"`
	Kind        string `json:"kind,omitzero"`
	Confidence  string `json:"confidence,omitzero"`
	// Message is the crash's message as the app recorded it, cut to maxCrashMessage bytes.
	Message    string    `json:"message,omitzero"`
	OccurredAt time.Time `json:"occurredAt"`
	ReceivedAt time.Time `json:"receivedAt"`
	// Dir holds report.json and the decoded traces, listed in Files.
	Dir   string       `json:"dir"`
	Files []RecordFile `json:"files"`
}

// RecordFile is one file of a record.
type RecordFile struct {
	Name      string `json:"name"`
	Path      string `json:"path"`
	SizeBytes int64  `json:"sizeBytes"`
}

// Annotation is an annotated-feedback bundle an app sent, as kept.
type Annotation struct {
	// ID is the app's clientAnnotationId (32 hex digits).
	ID         string    `json:"id"`
	SessionID  string    `json:"sessionId"`
	CapturedAt time.Time `json:"capturedAt"`
	ReceivedAt time.Time `json:"receivedAt"`
	// Path is the bundle (a zip: manifest.json, screenshot, visual trees, shapes).
	Path      string `json:"path"`
	FileName  string `json:"fileName,omitzero"` // as the app named it
	MimeType  string `json:"mimeType"`
	SizeBytes int64  `json:"sizeBytes"`
}

// maxCrashMessage bounds CrashReport.Message: it is for listings.
const maxCrashMessage = 512

// Record files.
const (
	crashesDir      = "crashes"
	annotationsDir  = "annotations"
	crashRecordName = "crash.json"
	crashReportName = "report.json"
	annotationExt   = ".ansightannotation"
)

// Crashes lists the crash reports kept for session id, most recent first. It reads the
// session's directory, so it also lists the reports of a session evicted from the
// registry.
func (s *Server) Crashes(id string) ([]CrashReport, error) {
	if !validSessionID(id) {
		return nil, fmt.Errorf("host: %q is not a session id", id)
	}
	return s.records.crashes(id)
}

// Annotations lists the annotated-feedback bundles kept for session id, most recent first
// (see Crashes).
func (s *Server) Annotations(id string) ([]Annotation, error) {
	if !validSessionID(id) {
		return nil, fmt.Errorf("host: %q is not a session id", id)
	}
	return s.records.annotations(id)
}

// validSessionID accepts the ids this host makes (appHint, '-', digits): the id becomes a
// path element of the session's directory.
func validSessionID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// errRecordsFull is wrapped by a refusal over RecordLimits.
var errRecordsFull = errors.New("host: record limit reached")

// records keeps the per-session records. Its methods are safe for concurrent use.
type records struct {
	base   string // Options.Tools.ArtifactDir; "" for a temporary directory
	limits RecordLimits

	mu   sync.Mutex
	root string
	// receiving counts announced annotation bytes not yet stored, per session.
	receiving map[string]int64
}

func newRecords(base string, limits RecordLimits) *records {
	return &records{base: base, limits: limits.withDefaults(), receiving: map[string]int64{}}
}

// rootLocked returns the directory of every session's directory, creating it on first use.
func (r *records) rootLocked() (string, error) {
	if r.root != "" {
		return r.root, nil
	}
	if r.base != "" {
		if err := os.MkdirAll(r.base, 0o700); err != nil {
			return "", fmt.Errorf("host: session directories: %w", err)
		}
		r.root = r.base
		return r.root, nil
	}
	dir, err := os.MkdirTemp("", "ansight-sessions-")
	if err != nil {
		return "", fmt.Errorf("host: session directories: %w", err)
	}
	r.root = dir
	return dir, nil
}

// exists reports whether a directory for session id is on disk (only with a base
// directory: a temporary root is new to this process).
func (r *records) exists(id string) bool {
	if r.base == "" {
		return false
	}
	_, err := os.Lstat(filepath.Join(r.base, id))
	return err == nil
}

// dirLocked returns <root>/<session>/<kind>, created.
func (r *records) dirLocked(sessionID, kind string) (string, error) {
	root, err := r.rootLocked()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, sessionID, kind)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("host: session directory: %w", err)
	}
	return dir, nil
}

// crashID names a crash report: the same process and reportId give the same id.
func crashID(processSessionID, reportID string) string {
	sum := sha256.Sum256([]byte(processSessionID + "\x00" + reportID))
	return hex.EncodeToString(sum[:16])
}

// saveCrash keeps a crash report in c.SessionID's directory: report (the report's JSON as
// sent) and traces (file name → bytes) under crashes/<c.ID>, then the CrashReport
// itself. Every file is synced and the directory renamed into place, so a report is either
// complete on disk or absent. A report already kept (same ID) is not written again:
// kept is false and the stored one is returned.
func (r *records) saveCrash(c CrashReport, report []byte, traces map[string][]byte) (out CrashReport, kept bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	dir, err := r.dirLocked(c.SessionID, crashesDir)
	if err != nil {
		return CrashReport{}, false, err
	}
	final := filepath.Join(dir, c.ID)
	if old, err := readRecord[CrashReport](filepath.Join(final, crashRecordName)); err == nil {
		return old, false, nil
	}
	list, err := r.crashesIn(dir)
	if err != nil {
		return CrashReport{}, false, err
	}
	size := int64(len(report))
	for _, b := range traces {
		size += int64(len(b))
	}
	if len(list.items) >= r.limits.CrashReports {
		return CrashReport{}, false, fmt.Errorf("%w: session %s keeps %d crash reports already", errRecordsFull, c.SessionID, len(list.items))
	}
	if list.bytes+size > r.limits.CrashBytes {
		return CrashReport{}, false, fmt.Errorf("%w: session %s keeps %d bytes of crash reports, and this one has %d (limit %d)",
			errRecordsFull, c.SessionID, list.bytes, size, r.limits.CrashBytes)
	}

	tmp, err := os.MkdirTemp(dir, ".incoming-")
	if err != nil {
		return CrashReport{}, false, err
	}
	defer os.RemoveAll(tmp) // gone once renamed; cleans up after a failure
	c.Dir = final
	c.Files = nil
	for _, f := range append([]string{crashReportName}, slices.Sorted(maps.Keys(traces))...) {
		b := report
		if f != crashReportName {
			b = traces[f]
		}
		if err := writeSynced(filepath.Join(tmp, f), b); err != nil {
			return CrashReport{}, false, err
		}
		c.Files = append(c.Files, RecordFile{Name: f, Path: filepath.Join(final, f), SizeBytes: int64(len(b))})
	}
	meta, err := wire.Marshal(c)
	if err != nil {
		return CrashReport{}, false, err
	}
	if err := writeSynced(filepath.Join(tmp, crashRecordName), meta); err != nil {
		return CrashReport{}, false, err
	}
	if err := os.Rename(tmp, final); err != nil {
		return CrashReport{}, false, err
	}
	syncDir(dir)
	return c, true, nil
}

// crashes lists a session's crash reports, most recent first.
func (r *records) crashes(sessionID string) ([]CrashReport, error) {
	dir := r.path(sessionID, crashesDir)
	if dir == "" {
		return nil, nil // nothing kept yet
	}
	list, err := r.crashesIn(dir)
	slices.SortFunc(list.items, func(a, b CrashReport) int { return b.OccurredAt.Compare(a.OccurredAt) })
	return list.items, err
}

func (r *records) crashesIn(dir string) (recordList[CrashReport], error) {
	return listRecords(dir, func(e fs.DirEntry) string {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			return ""
		}
		return filepath.Join(dir, e.Name(), crashRecordName)
	}, func(c CrashReport) int64 { return filesSize(c.Files) })
}

// path returns <root>/<session>/<kind> without creating anything, or "" when no root
// exists yet.
func (r *records) path(sessionID, kind string) string {
	r.mu.Lock()
	root := r.root
	r.mu.Unlock()
	if root == "" {
		root = r.base
	}
	if root == "" {
		return ""
	}
	return filepath.Join(root, sessionID, kind)
}

// reserveAnnotation makes room for a bundle of size bytes in a session: it returns the
// directory to receive it in and a release function to call once the transfer has ended
// (stored or not).
func (r *records) reserveAnnotation(sessionID string, size int64) (dir string, release func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	dir, err = r.dirLocked(sessionID, annotationsDir)
	if err != nil {
		return "", nil, err
	}
	list, err := r.annotationsIn(dir)
	if err != nil {
		return "", nil, err
	}
	if len(list.items) >= r.limits.Annotations {
		return "", nil, fmt.Errorf("%w: session %s keeps %d annotations already", errRecordsFull, sessionID, len(list.items))
	}
	if have := list.bytes + r.receiving[sessionID]; have+size > r.limits.AnnotationBytes {
		return "", nil, fmt.Errorf("%w: session %s keeps or receives %d bytes of annotations, and this one has %d (limit %d)",
			errRecordsFull, sessionID, have, size, r.limits.AnnotationBytes)
	}
	r.receiving[sessionID] += size
	var once sync.Once
	return dir, func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.receiving[sessionID] -= size; r.receiving[sessionID] <= 0 {
				delete(r.receiving, sessionID)
			}
		})
	}, nil
}

// saveAnnotation keeps a received bundle: file (received into the directory
// reserveAnnotation gave) becomes <id>.ansightannotation beside its Annotation. A bundle
// already kept under that id is not replaced (kept false): file is removed.
func (r *records) saveAnnotation(a Annotation, file string) (out Annotation, kept bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	dir := filepath.Dir(file)
	meta := filepath.Join(dir, a.ID+".json")
	if old, err := readRecord[Annotation](meta); err == nil {
		os.Remove(file)
		return old, false, nil
	}
	a.Path = filepath.Join(dir, a.ID+annotationExt)
	if err := syncFile(file); err != nil {
		os.Remove(file)
		return Annotation{}, false, err
	}
	if err := os.Rename(file, a.Path); err != nil {
		os.Remove(file)
		return Annotation{}, false, err
	}
	b, err := wire.Marshal(a)
	if err == nil {
		err = writeSynced(meta, b)
	}
	if err != nil {
		os.Remove(a.Path)
		return Annotation{}, false, err
	}
	syncDir(dir)
	return a, true, nil
}

// annotations lists a session's annotations, most recent first.
func (r *records) annotations(sessionID string) ([]Annotation, error) {
	dir := r.path(sessionID, annotationsDir)
	if dir == "" {
		return nil, nil
	}
	list, err := r.annotationsIn(dir)
	slices.SortFunc(list.items, func(a, b Annotation) int { return b.CapturedAt.Compare(a.CapturedAt) })
	return list.items, err
}

func (r *records) annotationsIn(dir string) (recordList[Annotation], error) {
	return listRecords(dir, func(e fs.DirEntry) string {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			return ""
		}
		return filepath.Join(dir, e.Name())
	}, func(a Annotation) int64 { return a.SizeBytes })
}

// recordList is the records found in a directory and the bytes they count for.
type recordList[T any] struct {
	items []T
	bytes int64
}

// listRecords reads the record file that pick names for each entry of dir ("" skips the
// entry). A missing directory is an empty list; an unreadable record is skipped.
func listRecords[T any](dir string, pick func(fs.DirEntry) string, size func(T) int64) (recordList[T], error) {
	var out recordList[T]
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("host: records: %w", err)
	}
	for _, e := range entries {
		path := pick(e)
		if path == "" {
			continue
		}
		v, err := readRecord[T](path)
		if err != nil {
			continue
		}
		out.items = append(out.items, v)
		out.bytes += size(v)
	}
	return out, nil
}

// maxRecordFile bounds a record's metadata file when read back.
const maxRecordFile = 64 << 10

func readRecord[T any](path string) (T, error) {
	var v T
	f, err := os.Open(path)
	if err != nil {
		return v, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRecordFile+1))
	if err != nil || len(b) > maxRecordFile {
		return v, fmt.Errorf("host: record %s unreadable", path)
	}
	return v, wire.Unmarshal(b, &v)
}

func filesSize(fs []RecordFile) int64 {
	var n int64
	for _, f := range fs {
		n += f.SizeBytes
	}
	return n
}

// writeSynced writes a new file (mode 0600) and syncs it.
func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes a rename in dir durable (best effort: not every system can sync a
// directory).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
