package recording

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// ErrReadOnly: the recorder was opened with OpenReadOnly and changes nothing.
var ErrReadOnly = errors.New("recording: the recordings are open read-only (no host is running to change them)")

// readOnlyPoll is how often a read-only recorder's Follow looks for records a host wrote
// meanwhile.
const readOnlyPoll = time.Second

// OpenReadOnly opens the recordings in dir for reading, with no host running: the
// commands that browse, show and export recordings use it to read the store directly. It
// changes nothing — no schema upgrade, no clean-up, no state change (sessions a stopped
// host left connected are reported disconnected); SQLite may create the database's
// shared-memory index and an empty log beside it, as every reader of a WAL database does —
// and SQLite's own locking makes it safe beside a host that starts meanwhile and writes. Intake is ignored; Import and
// Delete fail with ErrReadOnly. A store of an older layout is refused: the host upgrades
// it when it next starts.
func OpenReadOnly(dir string) (*Recorder, error) {
	if _, err := os.Stat(filepath.Join(dir, DBName)); err != nil {
		return nil, fmt.Errorf("recording: no recordings in %s: %w", dir, err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	for _, p := range []string{"busy_timeout(10000)", "query_only(1)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(filepath.Join(dir, DBName))+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("recording: open database: %w", err)
	}
	db.SetMaxOpenConns(4)
	ctx := context.Background()
	var v string
	if err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("recording: read %s: %w", filepath.Join(dir, DBName), err)
	}
	if n, _ := strconv.Atoi(v); n != schemaVersion {
		db.Close()
		return nil, fmt.Errorf("recording: the recordings in %s are of layout %s, this build reads %d read-only; start the host once to upgrade them", dir, v, schemaVersion)
	}
	r := &Recorder{opts: Options{Dir: dir}.withDefaults(), dir: dir, db: db, readOnly: true, sessions: map[string]*sessionStats{},
		changed: make(chan struct{}), done: make(chan struct{}), packs: map[string]*openPack{}}
	r.log = r.opts.Logger
	close(r.done)
	if err := r.load(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return r, nil
}

// OpenArchive opens an archive — any format Import reads — for browsing without
// importing it into the recordings: it is imported into a private temporary store (0700,
// under the system's temporary directory, unbounded by the recordings' budgets but by
// maxBytes), which Close removes. sum describes the archive's recording.
func OpenArchive(ctx context.Context, path string, maxBytes int64, opts ImportOptions) (r *Recorder, sum Summary, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Summary{}, fmt.Errorf("recording: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, Summary{}, fmt.Errorf("recording: %w", err)
	}
	dir, err := os.MkdirTemp("", "ansight-archive-*")
	if err != nil {
		return nil, Summary{}, fmt.Errorf("recording: %w", err)
	}
	r, err = Open(Options{Dir: dir, MaxBytes: maxBytes, MaxSessionBytes: maxBytes, MinFrameInterval: -1})
	if err != nil {
		os.RemoveAll(dir)
		return nil, Summary{}, err
	}
	r.tempDir = dir
	if sum, err = r.Import(ctx, f, info.Size(), opts); err != nil {
		r.Close()
		return nil, Summary{}, err
	}
	return r, sum, nil
}
