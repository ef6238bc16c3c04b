package recording

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver ("sqlite"); see DEPENDENCIES.md
)

// DBName is the database file inside the recordings directory; blobs live in BlobDir
// beside it.
const (
	DBName  = "recordings.db"
	BlobDir = "blobs"
)

// schemaVersion is the database layout's version, kept in meta. A database of a newer
// version is refused rather than misread; an older one is upgraded (upgrades).
const schemaVersion = 3

// schema creates the tables. Times are Unix microseconds; data is the record's JSON.
//
// records(session, seq) serves every query (one session, in arrival order, optionally
// since a cursor) and per-session eviction; records' primary key serves global eviction,
// oldest first.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS sessions (
		id TEXT PRIMARY KEY,
		app_id TEXT NOT NULL DEFAULT '',
		device_id TEXT NOT NULL DEFAULT '',
		device_name TEXT NOT NULL DEFAULT '',
		state TEXT NOT NULL DEFAULT '',
		origin TEXT NOT NULL DEFAULT 'live',
		first_at INTEGER NOT NULL,
		last_at INTEGER NOT NULL,
		info BLOB,
		dropped INTEGER NOT NULL DEFAULT 0,
		evicted INTEGER NOT NULL DEFAULT 0,
		label TEXT NOT NULL DEFAULT ''
	)`,
	`CREATE TABLE IF NOT EXISTS records (
		seq INTEGER PRIMARY KEY,
		session TEXT NOT NULL,
		kind TEXT NOT NULL,
		at INTEGER NOT NULL,
		level INTEGER NOT NULL DEFAULT 0,
		text TEXT NOT NULL DEFAULT '',
		channel INTEGER,
		value REAL NOT NULL DEFAULT 0,
		data BLOB,
		blob TEXT NOT NULL DEFAULT '',
		blob_bytes INTEGER NOT NULL DEFAULT 0,
		size INTEGER NOT NULL,
		pack TEXT NOT NULL DEFAULT '',
		pack_offset INTEGER NOT NULL DEFAULT 0
	)`,
}

// indexes are created after the upgrades, which add the columns some of them cover.
// records_pack finds whether any record still refers to a frame pack (pack.go).
var indexes = []string{
	`CREATE INDEX IF NOT EXISTS records_session ON records(session, seq)`,
	`CREATE INDEX IF NOT EXISTS records_pack ON records(pack) WHERE pack != ''`,
}

// upgrades[v-1] turns a database of version v into one of version v+1.
var upgrades = [][]string{
	// 2: live frames in packs (a blob file per frame before).
	{`ALTER TABLE records ADD COLUMN pack TEXT NOT NULL DEFAULT ''`, `ALTER TABLE records ADD COLUMN pack_offset INTEGER NOT NULL DEFAULT 0`},
	// 3: a session's label (Recorder.Rename).
	{`ALTER TABLE sessions ADD COLUMN label TEXT NOT NULL DEFAULT ''`},
}

// openDB opens (creating) the database in dir. WAL lets queries run while the writer
// commits; synchronous=NORMAL keeps a commit to one write of the log (a power cut may lose
// the last batch, never corrupt the file).
func openDB(ctx context.Context, dir string) (*sql.DB, error) {
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(0)"} {
		q.Add("_pragma", p)
	}
	dsn := "file:" + filepath.ToSlash(filepath.Join(dir, DBName)) + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("recording: open database: %w", err)
	}
	// Readers run beside the writer (WAL); a small pool is plenty.
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	for _, stmt := range schema {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("recording: create schema: %w", err)
		}
	}
	var v string
	err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&v)
	switch {
	case err == sql.ErrNoRows:
		_, err = db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES('schema', ?)`, strconv.Itoa(schemaVersion))
		if err != nil {
			return fmt.Errorf("recording: write schema version: %w", err)
		}
	case err != nil:
		return fmt.Errorf("recording: read schema version: %w", err)
	default:
		if err := upgrade(ctx, db, v); err != nil {
			return err
		}
	}
	for _, stmt := range indexes {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("recording: create schema: %w", err)
		}
	}
	return nil
}

// upgrade brings a database of version v to schemaVersion, in one transaction.
func upgrade(ctx context.Context, db *sql.DB, v string) error {
	n, _ := strconv.Atoi(v)
	if n < 1 || n > schemaVersion {
		return fmt.Errorf("recording: database schema version %s, this build reads %d", v, schemaVersion)
	}
	if n == schemaVersion {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("recording: upgrade schema: %w", err)
	}
	defer tx.Rollback()
	for _, step := range upgrades[n-1:] {
		for _, stmt := range step {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("recording: upgrade schema from version %d: %w", n, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'schema'`, strconv.Itoa(schemaVersion)); err != nil {
		return fmt.Errorf("recording: upgrade schema: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("recording: upgrade schema: %w", err)
	}
	return nil
}
