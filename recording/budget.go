package recording

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
)

// evictChunk is how many records one eviction step reads.
const evictChunk = 1000

// enforceBudgets evicts the oldest records of each session over MaxSessionBytes, then the
// oldest of all sessions while the total is over MaxBytes, each down to 90% of its budget
// so that eviction runs in steps rather than on every commit. r.writeMu is held.
func (r *Recorder) enforceBudgets(ctx context.Context) {
	r.mu.Lock()
	over := map[string]int64{}
	for id, st := range r.sessions {
		if st.bytes > r.opts.MaxSessionBytes {
			over[id] = st.bytes - r.opts.MaxSessionBytes*9/10
		}
	}
	r.mu.Unlock()
	for id, need := range over {
		if err := r.evict(ctx, id, need); err != nil {
			r.log.Error("recording: eviction failed", "session", id, "err", err)
		}
	}
	r.mu.Lock()
	need := r.total - r.opts.MaxBytes*9/10
	overTotal := r.total > r.opts.MaxBytes
	r.mu.Unlock()
	if overTotal {
		if err := r.evict(ctx, "", need); err != nil {
			r.log.Error("recording: eviction failed", "err", err)
		}
	}
}

// evict removes the oldest records (of session, or of all sessions when it is "") until
// need bytes are freed.
func (r *Recorder) evict(ctx context.Context, session string, need int64) error {
	for need > 0 {
		var rows *sql.Rows
		var err error
		if session == "" {
			rows, err = r.db.QueryContext(ctx, `SELECT seq, session, kind, size, blob, pack FROM records ORDER BY seq LIMIT ?`, evictChunk)
		} else {
			rows, err = r.db.QueryContext(ctx, `SELECT seq, session, kind, size, blob, pack FROM records WHERE session = ? ORDER BY seq LIMIT ?`, session, evictChunk)
		}
		if err != nil {
			return err
		}
		var last int64
		freed := map[string][2]int64{} // session → bytes, records
		var files []string
		packs := map[string]string{} // packs the records were in, and their packKeys
		var total int64
		for rows.Next() && total < need {
			var seq, size int64
			var sess, kind, blob, pack string
			if err := rows.Scan(&seq, &sess, &kind, &size, &blob, &pack); err != nil {
				rows.Close()
				return err
			}
			last = seq
			f := freed[sess]
			f[0] += size
			f[1]++
			freed[sess] = f
			total += size
			switch {
			case pack != "":
				packs[pack] = packKey(sess, Kind(kind))
			case blob != "":
				files = append(files, filepath.Join(r.dir, filepath.FromSlash(blob)))
			}
		}
		rows.Close()
		if last == 0 {
			return nil
		}
		tx, err := r.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if session == "" {
			_, err = tx.ExecContext(ctx, `DELETE FROM records WHERE seq <= ?`, last)
		} else {
			_, err = tx.ExecContext(ctx, `DELETE FROM records WHERE session = ? AND seq <= ?`, session, last)
		}
		for id, f := range freed {
			if err == nil {
				_, err = tx.ExecContext(ctx, `UPDATE sessions SET evicted = evicted + ? WHERE id = ?`, f[1], id)
			}
		}
		if err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		for _, f := range files {
			os.Remove(f)
		}
		if err := r.removeUnusedPacks(packs); err != nil {
			return err
		}
		r.mu.Lock()
		for id, f := range freed {
			st := r.stats(id)
			st.bytes -= f[0]
			st.records -= f[1]
			st.evicted += f[1]
			r.total -= f[0]
			r.records -= f[1]
			r.evicted += f[1]
		}
		r.mu.Unlock()
		need -= total
	}
	return nil
}

// Delete removes a recording: its records, its files and its session row. A live session
// keeps recording into a new recording of the same id.
func (r *Recorder) Delete(ctx context.Context, sessionID string) error {
	if r.readOnly {
		return ErrReadOnly
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	return r.deleteLocked(ctx, sessionID)
}

// deleteLocked is Delete; r.writeMu is held.
func (r *Recorder) deleteLocked(ctx context.Context, sessionID string) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	var n, size int64
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM records WHERE session = ?`, sessionID).Scan(&n, &size); err != nil {
		tx.Rollback()
		return err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, sessionID)
	if err == nil {
		_, err = tx.ExecContext(ctx, `DELETE FROM records WHERE session = ?`, sessionID)
	}
	if err != nil {
		tx.Rollback()
		return err
	}
	if k, _ := res.RowsAffected(); k == 0 {
		tx.Rollback()
		return fmt.Errorf("%w: %s", ErrNotFound, sessionID)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	r.forgetPacks(sessionID)
	delete(r.lastAt, sessionID)
	os.RemoveAll(filepath.Join(r.dir, BlobDir, sessionDir(sessionID)))
	r.mu.Lock()
	delete(r.sessions, sessionID)
	r.total -= size
	r.records -= n
	r.mu.Unlock()
	return nil
}
