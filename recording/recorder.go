package recording

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// Defaults of Options.
const (
	// DefaultMaxBytes is the total budget of all recordings.
	DefaultMaxBytes = 2 << 30
	// DefaultMaxSessionBytes is the budget of one session's recording.
	DefaultMaxSessionBytes = 512 << 20
	// DefaultQueueBytes and DefaultQueueMessages bound the telemetry waiting to be written.
	DefaultQueueBytes    = 64 << 20
	DefaultQueueMessages = 20000
	// DefaultMinFrameInterval is the shortest time between two recorded live frames of a
	// session: 10 frames a second.
	DefaultMinFrameInterval = 100 * time.Millisecond
)

// Options configures a Recorder. Only Dir is required.
type Options struct {
	// Dir holds the database and the blobs (created 0700 when missing).
	Dir string
	// MaxBytes is the total budget (DefaultMaxBytes) and MaxSessionBytes the budget of one
	// session (DefaultMaxSessionBytes). Beyond either, the oldest records (of all sessions,
	// or of that session) are evicted, their files removed, until 90% of the budget is used.
	MaxBytes, MaxSessionBytes int64
	// QueueBytes and QueueMessages bound telemetry accepted and not yet written
	// (DefaultQueueBytes, DefaultQueueMessages). Telemetry beyond them is dropped and
	// counted; tool traffic, control requests and session changes are never dropped.
	QueueBytes    int64
	QueueMessages int
	// MinFrameInterval thins live frames: a frame that arrives sooner than this after the
	// session's last recorded frame is not recorded (counted as thinned). Default
	// DefaultMinFrameInterval; negative records every frame.
	MinFrameInterval time.Duration
	// HonorNoRedact keeps a network record unredacted when the app sent it with
	// redactSensitiveData:false (the official host does). Off by default: secrets are
	// redacted whatever the app says.
	HonorNoRedact bool
	// MaskSensitive masks screens before they are stored (mask.go): frames boxed over the
	// sensitive nodes of the session's most recent visual tree, or blacked out when none
	// is recent enough; touches on sensitive nodes, or with no recent tree, not kept. For
	// sessions of apps that do not mask at the source (the official SDKs).
	MaskSensitive bool
	// Logger receives write failures (discarded when nil).
	Logger *slog.Logger
	// Clock gives arrival times (time.Now when nil).
	Clock func() time.Time
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxSessionBytes <= 0 {
		o.MaxSessionBytes = DefaultMaxSessionBytes
	}
	if o.MaxSessionBytes > o.MaxBytes {
		o.MaxSessionBytes = o.MaxBytes
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.QueueMessages <= 0 {
		o.QueueMessages = DefaultQueueMessages
	}
	if o.MinFrameInterval == 0 {
		o.MinFrameInterval = DefaultMinFrameInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o
}

// Recorder keeps session recordings. Its intake methods (RecordMessage, RecordControl,
// RecordSession, RecordTraffic) never block on the disk: they queue, and one goroutine
// writes. All methods are safe for concurrent use.
type Recorder struct {
	opts   Options
	dir    string
	db     *sql.DB
	log    *slog.Logger
	parser parser

	mu       sync.Mutex
	queue    []item
	spare    []item // a written batch's array, for queue (recycle)
	queued   int64  // bytes of droppable items in queue
	nqueued  int    // droppable items in queue
	sessions map[string]*sessionStats
	total    int64 // bytes of all records
	records  int64
	dropped  int64
	thinned  int64
	evicted  int64
	closed   bool
	changed  chan struct{} // closed and replaced after each commit: Follow's wake-up
	done     chan struct{}

	queueSliced bool // queue is the rest of an array that take cut batches from (r.mu)

	// The writer wakes up on tick, armed by the item that finds the queue empty, so that
	// it writes what commitInterval gathered in one batch; wake is for what cannot wait
	// (a barrier, a backlog, Close). See enqueue.
	tick *time.Timer
	wake chan struct{}

	// writeMu serialises writers: the intake loop's batches, imports, synchronous stores.
	writeMu sync.Mutex
	nextSeq int64                // under writeMu
	packs   map[string]*openPack // under writeMu: each session's pack in progress of each packed kind (packKey)
	packUse int64                // under writeMu: counts records appended, to order packs by use
	// idlePacks is, under writeMu, each session's pack of a kind (packKey) that
	// closeIdlePacks closed before it was full: the session's next record of the kind goes
	// on in it. At most one per session and kind.
	idlePacks map[string]string
	// packBytes is the size at which a pack is full (defaultPackBytes; tests make it
	// smaller).
	packBytes int64
	stmts     writerStmts // under writeMu
	// lastAt is the last_at (Unix µs) of sessions that live batches deferred, to write
	// when lastAtInterval has passed since lastAtWritten (or at a Flush, or Close). Under
	// writeMu.
	lastAt        map[string]int64
	lastAtWritten time.Time

	staged atomic.Int64 // names the links stage makes

	// readOnly: opened by OpenReadOnly, with no writer; intake is ignored and changes are
	// refused with ErrReadOnly.
	readOnly bool
	// tempDir is the private store of OpenArchive, removed by Close.
	tempDir string

	// maskTrees is each session's most recent tree (Options.MaskSensitive; the writer's).
	maskTrees                                map[string]*treeRegions
	maskNodes                                map[string]*nodeIndex
	maskedFrames, maskedTouches, maskedTyped atomic.Int64
}

// sessionStats is what the recorder keeps in memory about each recording.
type sessionStats struct {
	bytes, records, dropped, evicted int64
	lastFrame                        time.Time // arrival of the last frame queued
	stored                           bool      // its sessions row exists
	droppedSaved                     int64     // dropped as last written to the row
}

// item is one thing queued for the writer.
type item struct {
	session string
	arrival time.Time
	must    bool // never dropped
	op      itemOp
	typ     transport.MessageType
	data    []byte
	action  string
	ok      bool
	message string
	event   string
	traffic wire.TrafficEvent
	// kind, text and path describe a kept file (opKept): path is the file to record, and
	// staged says it is a link of the recorder's own (see stage), to be moved into place.
	kind    Kind
	text    string
	path    string
	ext     string
	staged  bool
	barrier chan struct{} // opBarrier: closed once everything queued before it is stored
}

type itemOp uint8

const (
	opMessage itemOp = iota + 1
	opControl
	opSession
	opTraffic
	opKept
	opBarrier
)

// Open opens (creating when missing) the recordings in opts.Dir and starts the writer.
// Recordings of sessions that were connected when the previous process stopped are marked
// disconnected.
func Open(opts Options) (*Recorder, error) {
	if opts.Dir == "" {
		return nil, errors.New("recording: Options.Dir is required")
	}
	opts = opts.withDefaults()
	// Links staged by an earlier process that stopped before writing them are orphans.
	os.RemoveAll(filepath.Join(opts.Dir, BlobDir, stagingDir))
	if err := os.MkdirAll(filepath.Join(opts.Dir, BlobDir, stagingDir), 0o700); err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	ctx := context.Background()
	db, err := openDB(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	r := &Recorder{
		opts: opts, dir: opts.Dir, db: db, log: opts.Logger, parser: parser{keepRaw: opts.HonorNoRedact},
		sessions: map[string]*sessionStats{}, changed: make(chan struct{}), wake: make(chan struct{}, 1),
		done: make(chan struct{}), tick: time.NewTimer(commitInterval), packs: map[string]*openPack{}, idlePacks: map[string]string{},
		packBytes: defaultPackBytes, lastAt: map[string]int64{}, lastAtWritten: time.Now(),
	}
	r.tick.Stop()
	if err := r.load(ctx); err != nil {
		db.Close()
		return nil, err
	}
	go r.writer()
	return r, nil
}

// load reads the totals of existing recordings and closes those left connected (but for
// a read-only recorder, which changes nothing).
func (r *Recorder) load(ctx context.Context) error {
	if !r.readOnly {
		if _, err := r.db.ExecContext(ctx, `UPDATE sessions SET state = 'disconnected' WHERE state = 'connected'`); err != nil {
			return fmt.Errorf("recording: %w", err)
		}
	}
	rows, err := r.db.QueryContext(ctx, `SELECT id, dropped, evicted FROM sessions`)
	if err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	for rows.Next() {
		st := &sessionStats{stored: true}
		var id string
		if err := rows.Scan(&id, &st.dropped, &st.evicted); err != nil {
			rows.Close()
			return fmt.Errorf("recording: %w", err)
		}
		st.droppedSaved = st.dropped
		r.sessions[id] = st
	}
	rows.Close()
	rows, err = r.db.QueryContext(ctx, `SELECT session, COUNT(*), COALESCE(SUM(size), 0) FROM records GROUP BY session`)
	if err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n, size int64
		if err := rows.Scan(&id, &n, &size); err != nil {
			return fmt.Errorf("recording: %w", err)
		}
		st := r.stats(id)
		st.records, st.bytes = n, size
		r.records += n
		r.total += size
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	return r.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM records`).Scan(&r.nextSeq)
}

// stats returns the session's counters, creating them; r.mu is held.
func (r *Recorder) stats(id string) *sessionStats {
	st := r.sessions[id]
	if st == nil {
		st = &sessionStats{}
		r.sessions[id] = st
	}
	return st
}

// Dir is the recordings directory.
func (r *Recorder) Dir() string { return r.dir }

// Close writes what is queued and closes the database. Intake after Close is ignored.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	if r.readOnly {
		return r.db.Close()
	}
	r.signal()
	<-r.done
	r.writeMu.Lock()
	for s := range r.packs {
		r.closePack(s)
	}
	r.stmts.close()
	r.writeMu.Unlock()
	err := r.db.Close()
	if r.tempDir != "" {
		os.RemoveAll(r.tempDir)
	}
	return err
}

// RecordMessage queues one message an app sent that is neither a tool response nor a
// control request: telemetry text (CLIENT_*, DeviceAppProfile) or a binary live frame
// (ASJP). It never blocks; when the intake buffer is full the message is dropped and
// counted. The recorder keeps data: the caller must not change it afterwards.
func (r *Recorder) RecordMessage(sessionID string, typ transport.MessageType, data []byte, at time.Time) {
	it := item{session: sessionID, arrival: at, op: opMessage, typ: typ, data: data}
	if typ == transport.MessageBinary && r.opts.MinFrameInterval > 0 {
		r.mu.Lock()
		st := r.stats(sessionID)
		if !st.lastFrame.IsZero() && at.Sub(st.lastFrame) < r.opts.MinFrameInterval && at.After(st.lastFrame.Add(-time.Minute)) {
			r.thinned++
			r.mu.Unlock()
			return
		}
		st.lastFrame = at
		r.mu.Unlock()
	}
	r.enqueue(it)
}

// RecordControl queues a control request the app sent and the host's answer. Accepted
// requests of known actions become typed records (client.log a log line, device.profile a
// profile, app.state a state change, crash.handoff a crash report, …), others a control
// record. client.log lines are telemetry (dropped when the buffer is full); other actions
// never are.
func (r *Recorder) RecordControl(sessionID, action string, payload []byte, ok bool, message string, at time.Time) {
	r.enqueue(item{session: sessionID, arrival: at, op: opControl, data: payload, action: action, ok: ok,
		message: message, must: action != actionClientLog})
}

// RecordSession records a change of a session: event is "connected", "updated" or
// "disconnected" (others are kept as given); info is the session's description as a JSON
// object (its id, appId, deviceId, deviceName, state, …), stored as the recording's
// metadata. Never dropped.
func (r *Recorder) RecordSession(sessionID, event string, at time.Time, info []byte) {
	r.enqueue(item{session: sessionID, arrival: at, op: opSession, event: event, data: info, must: true})
}

// RecordTraffic records one event of a session's tool traffic (give it to the host as
// tools.Options.OnTraffic). Never dropped. The file of a finished transfer (an artifact)
// is linked at once (see RecordKept), so that the record keeps it even when the command
// that asked for it moves it away.
func (r *Recorder) RecordTraffic(ev wire.TrafficEvent) {
	it := item{session: ev.SessionID, arrival: ev.At, op: opTraffic, traffic: ev, must: true}
	if ev.Kind == wire.TrafficTransfer && ev.Outcome == wire.TrafficOK && ev.Path != "" {
		if link := r.stage(ev.Path); link != "" {
			it.traffic.Path, it.staged = link, true
		}
	}
	r.enqueue(it)
}

// RecordKept records a file the host keeps for a session beside the recording: a crash
// report (kind KindCrash) or an annotated-feedback bundle (KindAnnotation; anything else is
// an artifact). meta is its description as a JSON object (the host's listing entry), text
// a one-line summary and at its time. The file at path becomes the record's file without
// being stored twice: it is hard-linked at once, and copied only where no link can be made
// (another file system). Never dropped.
//
// Linking is one metadata operation on the caller's goroutine, right after the caller
// wrote the file itself; everything else waits for the writer.
func (r *Recorder) RecordKept(sessionID, kind, text string, at time.Time, meta []byte, path string) {
	it := item{session: sessionID, arrival: at, op: opKept, must: true, kind: Kind(kind), text: text, data: meta, path: path}
	switch it.kind {
	case KindCrash:
		it.ext = "json"
	case KindAnnotation:
		it.ext = "zip"
	default:
		it.kind, it.ext = KindArtifact, artifactExt(filepath.Base(path))
	}
	if link := r.stage(path); link != "" {
		it.path, it.staged = link, true
	}
	r.enqueue(it)
}

// stagingDir, under BlobDir, holds the links stage makes until the writer moves them into
// place; Open empties it.
const stagingDir = ".staging"

// stage hard-links the file at path into the staging directory and returns the link, or
// "" when no link can be made (the writer then copies the file from path, if it is still
// there).
func (r *Recorder) stage(path string) string {
	if r.readOnly {
		return ""
	}
	link := filepath.Join(r.dir, BlobDir, stagingDir, strconv.FormatInt(r.staged.Add(1), 10))
	if os.Link(path, link) != nil {
		return ""
	}
	return link
}

// Flush waits until everything queued before the call is stored (and the budgets
// applied), or ctx ends.
func (r *Recorder) Flush(ctx context.Context) error {
	if r.readOnly {
		return nil // nothing is ever queued
	}
	done := make(chan struct{})
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrClosed
	}
	r.queue = append(r.queue, item{op: opBarrier, must: true, barrier: done})
	r.mu.Unlock()
	r.signal()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Recorded reports whether a recording with this id exists (or is being written): a host
// must not give a new session an id that a recording from an earlier run holds.
func (r *Recorder) Recorded(sessionID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.sessions[sessionID]
	return ok
}

// commitInterval is how long the writer lets intake gather before it writes: one batch,
// one transaction and one wake-up of the writer for everything the sessions sent
// meanwhile, rather than one for each message, and short enough that a batch is a
// fraction of a millisecond of work. Under TestRecordingLoad, 5 ms gave tool calls a p99
// of 1.6–2.7 ms where 10 ms gave 3.8 ms and 50 ms 3.8–4.5 ms (for the same CPU): while
// the writer runs a batch, a tool response that has just arrived can wait for it. That is
// also the delay before a record reaches Follow and the queries.
const commitInterval = 5 * time.Millisecond

// enqueue queues it for the writer, dropping telemetry when the queue is full. It wakes
// the writer only when the queue holds a full batch; otherwise the item that finds the
// queue empty arms the writer's tick. A session's reader that woke the writer for each
// message would have the writer run next on its processor (the Go scheduler runs a
// goroutine that was just readied before the others that are waiting), ahead of the
// other sessions' readers and so of their tool responses.
func (r *Recorder) enqueue(it item) {
	n := int64(len(it.data) + len(it.traffic.Payload))
	r.mu.Lock()
	if r.closed || r.readOnly {
		r.mu.Unlock()
		return
	}
	st := r.stats(it.session)
	if !it.must {
		if r.nqueued >= r.opts.QueueMessages || r.queued+n > r.opts.QueueBytes {
			st.dropped++
			r.dropped++
			r.mu.Unlock()
			return
		}
		r.nqueued++
		r.queued += n
	}
	if len(r.queue) == 0 {
		r.tick.Reset(commitInterval)
	}
	r.queue = append(r.queue, it)
	full := r.backlog()
	r.mu.Unlock()
	if full {
		r.signal()
	}
}

// backlog reports whether the queue holds a full batch; r.mu is held.
func (r *Recorder) backlog() bool {
	return len(r.queue) >= maxBatchItems || r.queued >= maxBatchBytes
}

func (r *Recorder) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Usage describes the recordings' use of their budgets, for `host status`.
type Usage struct {
	Dir string `json:"dir"`
	// Bytes is what the records count against MaxBytes; DiskBytes what the directory
	// holds (database, its log, blobs), measured when Usage is called.
	Bytes           int64 `json:"bytes"`
	DiskBytes       int64 `json:"diskBytes"`
	MaxBytes        int64 `json:"maxBytes"`
	MaxSessionBytes int64 `json:"maxSessionBytes"`
	Sessions        int   `json:"sessions"`
	Records         int64 `json:"records"`
	// Dropped counts telemetry messages refused because the intake buffer was full,
	// Thinned live frames skipped by MinFrameInterval, Evicted records removed for the
	// budgets — all since Open.
	Dropped int64 `json:"dropped"`
	Thinned int64 `json:"thinned"`
	Evicted int64 `json:"evicted"`
	// MaskedFrames and MaskedTouches count frames boxed or blacked out and touches not
	// kept by Options.MaskSensitive, since Open.
	MaskedFrames  int64 `json:"maskedFrames,omitzero"`
	MaskedTouches int64 `json:"maskedTouches,omitzero"`
	// MaskedTyped counts typed values of ui.perform_action replaced by
	// Options.MaskSensitive, since Open.
	MaskedTyped int64 `json:"maskedTyped,omitzero"`
	// Queued and QueuedBytes are waiting to be written.
	Queued      int   `json:"queued"`
	QueuedBytes int64 `json:"queuedBytes"`
}

// Usage returns the current figures.
func (r *Recorder) Usage() Usage {
	r.mu.Lock()
	u := Usage{Dir: r.dir, Bytes: r.total, MaxBytes: r.opts.MaxBytes, MaxSessionBytes: r.opts.MaxSessionBytes,
		Sessions: len(r.sessions), Records: r.records, Dropped: r.dropped, Thinned: r.thinned, Evicted: r.evicted,
		Queued: len(r.queue), QueuedBytes: r.queued, MaskedFrames: r.maskedFrames.Load(), MaskedTouches: r.maskedTouches.Load(),
		MaskedTyped: r.maskedTyped.Load()}
	r.mu.Unlock()
	u.DiskBytes = diskUsage(r.dir)
	return u
}

// diskUsage sums the sizes of the files under dir.
func diskUsage(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// Changed returns a channel that is closed after the next commit of new records (or when
// the recorder closes): wait on it, then query from the last seq seen.
func (r *Recorder) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// infoJSON validates a session's description: an object, else none.
func infoJSON(b []byte) []byte {
	if len(b) == 0 || len(b) > maxVerbatim || !jsontext.Value(b).IsValid() || jsontext.Value(b).Kind() != '{' {
		return nil
	}
	return b
}
