package recording

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"time"

	"github.com/ansight-go/ansight/transport"
)

// A batch is what one transaction writes: at most this many queued items or bytes, so
// that a commit stays short and queries are not held off long.
const (
	maxBatchItems = 2000
	maxBatchBytes = 32 << 20
)

// writer is the recorder's only intake goroutine: it takes queued items in batches,
// parses them, writes their files and commits their rows, then applies the budgets. It
// runs when the tick that the first queued item armed fires (or at once for a barrier, a
// backlog or Close) and writes everything queued by then, in as many batches as it takes.
// It runs on a thread of its own at a lower priority (lowerWriterPriority) and ends on it.
func (r *Recorder) writer() {
	defer close(r.done)
	lowerWriterPriority()
	for {
		select {
		case <-r.wake:
		case <-r.tick.C:
		}
		for {
			batch, more, shared, closed := r.take()
			// Even an empty batch: the tick may be the one armLastAt set for the last_at
			// values that are due.
			r.writeBatch(batch, closed)
			if len(batch) > 0 {
				r.recycle(batch, shared)
			}
			if more {
				continue
			}
			if closed {
				r.tick.Stop()
				r.mu.Lock()
				close(r.changed)
				r.mu.Unlock()
				return
			}
			r.armLastAt()
			break
		}
	}
}

// lastAtInterval is how often live batches write the last_at of sessions whose rows exist
// (their first records, their changes and Flush write it at once). Writing it with every
// batch made each 5 ms commit dirty the sessions table's pages beside the records' and
// run an upsert per session of the batch; a session's last_at, which orders the listing
// of recordings, is at most this much behind its records.
const lastAtInterval = time.Second

// armLastAt arms the writer's tick for the last_at values still to write, unless items
// are queued (their tick comes sooner). Under r.mu, as enqueue arms it, so that neither
// undoes the other's.
func (r *Recorder) armLastAt() {
	r.writeMu.Lock()
	pending, due := len(r.lastAt) > 0, time.Until(r.lastAtWritten.Add(lastAtInterval))
	r.writeMu.Unlock()
	if !pending {
		return
	}
	r.mu.Lock()
	if len(r.queue) == 0 {
		r.tick.Reset(max(commitInterval, due))
	}
	r.mu.Unlock()
}

// take removes the next batch from the queue. more says that what was queued did not fit
// in one batch: the writer takes the rest at once. shared says that the batch is part of
// a larger array (the queue's rest, or earlier batches, are or were in it), not to be
// recycled. closed says that the recorder is closing.
func (r *Recorder) take() (batch []item, more, shared, closed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, bytes := 0, 0
	for n < len(r.queue) && n < maxBatchItems && bytes < maxBatchBytes {
		it := &r.queue[n]
		size := len(it.data) + len(it.traffic.Payload)
		bytes += size
		if !it.must {
			r.nqueued--
			r.queued -= int64(size)
		}
		n++
	}
	shared = r.queueSliced
	if n == len(r.queue) {
		batch = r.queue
		r.queue, r.spare, r.queueSliced = r.spare, nil, false
	} else {
		// The rest stays where it is, after the batch (which cannot grow into it): copying
		// it here (up to QueueMessages items, once per batch of a backlog) held the lock
		// every session's reader takes to queue — the readers', and so the calls', wait.
		batch = r.queue[:n:n]
		r.queue, r.queueSliced, shared = r.queue[n:], true, true
	}
	more = len(r.queue) > 0
	return batch, more, shared, r.closed
}

// yieldEvery is how many items or rows the writer handles between two yields of its
// processor (runtime.Gosched), which it also yields after each file it creates. The
// writer is background work: without yields, the sessions' readers queued on the same
// processor (and the tool responses they carry) would wait for all of a batch; the Go
// scheduler preempts a goroutine only after 10 ms.
const yieldEvery = 32

// recycle keeps a written batch's array for the queue to fill again, unless it is larger
// than a batch of the usual size or shared (the queue's rest is in it, take): the queue
// then grows without a new array every time.
func (r *Recorder) recycle(batch []item, shared bool) {
	clear(batch) // the messages are written: let them go
	if shared || cap(batch) > maxSpareItems {
		return
	}
	r.mu.Lock()
	r.spare = batch[:0]
	r.mu.Unlock()
}

// maxSpareItems bounds the queue array recycle keeps (an item is half a KiB).
const maxSpareItems = 4096

// pendingEntry is an entry with the session it belongs to.
type pendingEntry struct {
	session string
	arrival time.Time
	entry
}

// sessionUpdate is a session change to apply to its row.
type sessionUpdate struct {
	info  []byte
	state string
	label string // set when not empty (an import's label, checked by CheckLabel)
}

// writeBatch parses and stores one batch. A failure is logged and the batch lost: the
// intake must go on. closing (and a barrier in the batch) writes the sessions' pending
// last_at too.
func (r *Recorder) writeBatch(batch []item, closing bool) {
	var entries []pendingEntry
	var barriers []chan struct{}
	defer func() {
		for _, b := range barriers {
			close(b)
		}
	}()
	updates := map[string]*sessionUpdate{}
	for i := range batch {
		if i%yieldEvery == yieldEvery-1 {
			runtime.Gosched()
		}
		it := &batch[i]
		var es []entry
		switch it.op {
		case opBarrier:
			barriers = append(barriers, it.barrier)
			continue
		case opMessage:
			if it.typ == transport.MessageBinary {
				es = r.parser.binary(it.data, it.arrival)
			} else {
				es = r.parser.text(it.data, it.arrival)
			}
		case opControl:
			es = r.parser.control(it.action, it.data, it.ok, it.message, it.arrival)
		case opTraffic:
			es = trafficEntries(it.traffic, it.staged)
		case opKept:
			es = []entry{keptEntry(it)}
		case opSession:
			u := updates[it.session]
			if u == nil {
				u = &sessionUpdate{}
				updates[it.session] = u
			}
			if info := infoJSON(it.data); info != nil {
				u.info = info
			}
			switch it.event {
			case "updated", "removed":
			default:
				u.state = it.event
				es = []entry{{kind: KindState, at: it.arrival, text: it.event, data: infoJSON(it.data)}}
			}
		}
		if r.opts.MaskSensitive && len(es) > 0 {
			es = r.mask(it.session, es)
		}
		for _, e := range es {
			entries = append(entries, pendingEntry{session: it.session, arrival: it.arrival, entry: e})
		}
	}
	ctx := context.Background()
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	if _, err := r.commit(ctx, entries, updates, originLive, closing || len(barriers) > 0); err != nil {
		r.log.Error("recording: write failed; records lost", "records", len(entries), "err", err)
	}
	r.enforceBudgets(ctx)
}

// originLive is the origin of the intake's recordings (imports have their own).
const originLive = "live"

// commit stores entries and session updates in one transaction and returns the records
// written. A live batch defers the last_at of sessions whose rows exist (r.lastAt,
// lastAtInterval) and writes all that are deferred when they are due or flush is set.
// r.writeMu is held.
func (r *Recorder) commit(ctx context.Context, entries []pendingEntry, updates map[string]*sessionUpdate, origin string, flush bool) ([]Record, error) {
	// Session rows first: every record's session exists, spans cover the batch.
	spans := map[string][2]time.Time{}
	for _, e := range entries {
		if e.session == "" {
			continue
		}
		s, ok := spans[e.session]
		if !ok || e.arrival.Before(s[0]) {
			s[0] = e.arrival
		}
		if e.arrival.After(s[1]) {
			s[1] = e.arrival
		}
		spans[e.session] = s
	}
	now := r.opts.Clock()
	for id := range updates {
		if _, ok := spans[id]; !ok {
			spans[id] = [2]time.Time{now, now}
		}
	}
	var deferred map[string]bool // live sessions whose row exists: last_at waits (lastAtInterval)
	if origin == originLive {
		r.mu.Lock()
		for id, s := range spans {
			if st := r.sessions[id]; st != nil && st.stored && updates[id] == nil {
				if deferred == nil {
					deferred = map[string]bool{}
				}
				deferred[id] = true
				r.lastAt[id] = max(r.lastAt[id], micros(s[1]))
			}
		}
		r.mu.Unlock()
	}
	flush = len(r.lastAt) > 0 && (flush || time.Since(r.lastAtWritten) >= lastAtInterval)
	if len(entries) == 0 && len(updates) == 0 && !flush {
		return nil, nil
	}
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	var files []string
	packs := packWriter{r: r}
	fail := func(err error) ([]Record, error) {
		tx.Rollback()
		for _, f := range files {
			os.Remove(f)
		}
		packs.finish(false)
		return nil, err
	}
	// The driver parses the SQL of each ExecContext with arguments anew (about 20 µs): the
	// writer's statements are prepared once (r.stmts) and bound to each transaction.
	upsert, err := r.stmts.bind(ctx, r.db, tx, stmtUpsert)
	if err != nil {
		return fail(err)
	}
	for id, s := range spans {
		if deferred[id] {
			continue
		}
		if _, err := upsert.ExecContext(ctx, id, origin, micros(s[0]), micros(s[1])); err != nil {
			return fail(err)
		}
	}
	if flush {
		for id, at := range r.lastAt {
			if _, err := upsert.ExecContext(ctx, id, originLive, at, at); err != nil {
				return fail(err)
			}
		}
	}
	for id, u := range updates {
		if u.info != nil {
			obj, _ := members(u.info)
			app, _ := str(obj.get("appId"))
			dev, _ := str(obj.get("deviceId"))
			name, _ := str(obj.get("deviceName"))
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET info = ?, app_id = ?, device_id = ?, device_name = ? WHERE id = ?`,
				u.info, clip(app, 256), clip(dev, 256), clip(name, 256), id); err != nil {
				return fail(err)
			}
		}
		if u.state != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET state = ? WHERE id = ?`, clip(u.state, 64), id); err != nil {
				return fail(err)
			}
		}
		if u.label != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET label = ? WHERE id = ?`, u.label, id); err != nil {
				return fail(err)
			}
		}
	}
	ins, err := r.stmts.bind(ctx, r.db, tx, stmtInsert)
	if err != nil {
		return fail(err)
	}
	seq := r.nextSeq
	out := make([]Record, 0, len(entries))
	for i := range entries {
		if i%yieldEvery == yieldEvery-1 {
			runtime.Gosched()
		}
		e := &entries[i]
		seq++
		rec := Record{Seq: seq, Session: e.session, Kind: e.kind, At: e.at.UTC(), Level: e.level, Text: e.text,
			Value: e.value, Data: e.data}
		if e.hasChan {
			ch := e.channel
			rec.Channel = &ch
		}
		switch {
		case packed(e.kind) && len(e.blob) > 0 && e.link == "":
			rel, _ := r.blobPath(e.session, e.kind, seq, e.ext)
			pack, off, err := packs.append(e.session, e.kind, seq, e.blob)
			if err != nil {
				r.log.Warn("recording: file not kept", "session", e.session, "kind", e.kind, "err", err)
			} else {
				rec.Blob, rec.BlobBytes, rec.pack, rec.packOffset = rel, int64(len(e.blob)), pack, off
			}
		case len(e.blob) > 0 || e.link != "":
			rel, abs := r.blobPath(e.session, e.kind, seq, e.ext)
			n, err := writeBlob(abs, e.blob, e.link, e.owned)
			if err != nil {
				r.log.Warn("recording: file not kept", "session", e.session, "kind", e.kind, "err", err)
			} else {
				files = append(files, abs)
				rec.Blob, rec.BlobBytes = rel, n
			}
			runtime.Gosched() // creating a file can block for a millisecond: let the readers run first
		}
		rec.Size = e.size(rec.BlobBytes)
		var ch any
		if rec.Channel != nil {
			ch = *rec.Channel
		}
		if _, err := ins.ExecContext(ctx, seq, rec.Session, string(rec.Kind), micros(rec.At), int(rec.Level), rec.Text, ch,
			rec.Value, []byte(rec.Data), rec.Blob, rec.BlobBytes, rec.Size, rec.pack, rec.packOffset); err != nil {
			return fail(err)
		}
		out = append(out, rec)
	}
	r.mu.Lock()
	var saveDropped []string
	for id := range spans {
		if st := r.stats(id); st.dropped != st.droppedSaved {
			saveDropped = append(saveDropped, id)
		}
	}
	r.mu.Unlock()
	for _, id := range saveDropped {
		r.mu.Lock()
		n := r.sessions[id].dropped
		r.mu.Unlock()
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET dropped = ? WHERE id = ?`, n, id); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	packs.finish(true)
	r.nextSeq = seq
	if flush {
		clear(r.lastAt)
		r.lastAtWritten = time.Now()
	}
	// Summed first, so that the lock the session readers queue under is held for a
	// session's sums, not for each record.
	type tally struct{ bytes, records int64 }
	sums := make(map[string]tally, len(spans))
	for _, rec := range out {
		t := sums[rec.Session]
		t.bytes += rec.Size
		t.records++
		sums[rec.Session] = t
	}
	r.mu.Lock()
	for id := range spans {
		r.stats(id).stored = true
	}
	for id, t := range sums {
		st := r.stats(id)
		st.bytes += t.bytes
		st.records += t.records
		r.total += t.bytes
		r.records += t.records
	}
	for _, id := range saveDropped {
		st := r.sessions[id]
		st.droppedSaved = st.dropped
	}
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	return out, nil
}

// The writer's statements: prepared once on the database (writerStmts) and bound to each
// batch's transaction, which reuses what its connection has prepared (Tx.StmtContext).
const (
	stmtUpsert = iota // a session's row, created or its last_at moved on
	stmtInsert        // a record
	numStmts
)

var stmtSQL = [numStmts]string{
	stmtUpsert: `INSERT INTO sessions(id, origin, first_at, last_at) VALUES(?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET last_at = max(last_at, excluded.last_at)`,
	stmtInsert: `INSERT INTO records(seq, session, kind, at, level, text, channel, value, data, blob, blob_bytes, size, pack, pack_offset)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
}

// writerStmts holds the writer's prepared statements; r.writeMu is held to use it.
type writerStmts struct{ s [numStmts]*sql.Stmt }

// bind returns statement which of tx, preparing it on db the first time.
func (w *writerStmts) bind(ctx context.Context, db *sql.DB, tx *sql.Tx, which int) (*sql.Stmt, error) {
	if w.s[which] == nil {
		st, err := db.PrepareContext(ctx, stmtSQL[which])
		if err != nil {
			return nil, err
		}
		w.s[which] = st
	}
	return tx.StmtContext(ctx, w.s[which]), nil
}

// close closes the statements prepared (before the database is closed).
func (w *writerStmts) close() {
	for i, st := range w.s {
		if st != nil {
			st.Close()
			w.s[i] = nil
		}
	}
}

// keptEntry is the record of a file the host keeps (RecordKept): its description as data,
// the file linked.
func keptEntry(it *item) entry {
	return entry{kind: it.kind, at: it.arrival, text: clip(it.text, maxTextBytes), data: infoJSON(it.data),
		link: it.path, owned: it.staged, ext: it.ext}
}

// micros is t as Unix microseconds, the database's time unit.
func micros(t time.Time) int64 { return t.UnixMicro() }

// plainID matches session ids that can name a directory as they are.
var plainID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// sessionDir names a session's blob directory: its id when plain, else a hash of it.
func sessionDir(id string) string {
	if plainID.MatchString(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "s-" + hex.EncodeToString(sum[:12])
}

// blobPath returns a record's file, relative to the recordings directory (with '/') and
// absolute.
func (r *Recorder) blobPath(session string, kind Kind, seq int64, ext string) (rel, abs string) {
	if ext == "" {
		ext = "bin"
	}
	rel = fmt.Sprintf("%s/%s/%s/%d.%s", BlobDir, sessionDir(session), kind, seq, ext)
	return rel, filepath.Join(r.dir, filepath.FromSlash(rel))
}

// writeBlob writes data, or moves (when owned) or links (else copies) the file at link, to
// path and returns its size.
func writeBlob(path string, data []byte, link string, owned bool) (int64, error) {
	if link == "" {
		// The directory exists but for a session's first file of a kind: try the file
		// first, saving a system call on every frame.
		err := os.WriteFile(path, data, 0o600)
		if errors.Is(err, fs.ErrNotExist) {
			if err = os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
				err = os.WriteFile(path, data, 0o600)
			}
		}
		return int64(len(data)), err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, err
	}
	info, err := os.Stat(link)
	if err != nil {
		return 0, err
	}
	if !info.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file", link)
	}
	if owned && os.Rename(link, path) == nil {
		return info.Size(), nil
	}
	if os.Link(link, path) == nil {
		return info.Size(), nil
	}
	src, err := os.Open(link)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return n, err
}

// scanRecord reads one records row (the columns recordColumns lists).
func scanRecord(s interface{ Scan(...any) error }) (Record, error) {
	var rec Record
	var kind string
	var at int64
	var level int
	var ch sql.NullInt64
	var data []byte
	if err := s.Scan(&rec.Seq, &rec.Session, &kind, &at, &level, &rec.Text, &ch, &rec.Value, &data, &rec.Blob, &rec.BlobBytes, &rec.Size,
		&rec.pack, &rec.packOffset); err != nil {
		return rec, err
	}
	rec.Kind, rec.At, rec.Level = Kind(kind), time.UnixMicro(at).UTC(), Level(level)
	if ch.Valid {
		c := int(ch.Int64)
		rec.Channel = &c
	}
	if len(data) > 0 {
		rec.Data = data
	}
	return rec, nil
}

// recordColumns are the columns scanRecord reads, in order.
const recordColumns = `seq, session, kind, at, level, text, channel, value, data, blob, blob_bytes, size, pack, pack_offset`
