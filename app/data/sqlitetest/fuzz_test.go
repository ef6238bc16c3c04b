package sqlitetest_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app/data"
	"github.com/ansight-go/ansight/wire"
)

// FuzzQuery sends arbitrary SQL to data.query over a SQLite database (the text a host sends
// is the input that matters). Whatever the text, the database is unchanged, no other file
// is attached, the app's connection comes back writable, the tool never panics and a
// failure is the tool's own.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{
		`SELECT * FROM notes`,
		`SELECT 1; DELETE FROM notes`,
		"SELECT ';' -- ;\n; DROP TABLE notes",
		`WITH x AS (SELECT 1) DELETE FROM notes`,
		`ATTACH 'x.db' AS x`,
		`PRAGMA query_only = 0`,
		`SELECT "a;b", [c;d], ` + "`e;f`" + ` FROM notes /* ; */`,
		`EXPLAIN DELETE FROM notes`,
		`VALUES (1), (2); `,
		`SELECT * FROM n a, n b, n c`,
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	db := notesDB(f, dir, 50)
	db.SetMaxOpenConns(1)
	f.Fuzz(func(t *testing.T, text string) {
		h := harness(t, data.Options{QueryTimeout: 50 * time.Millisecond, Databases: []data.Database{{Name: "notes", DB: db}}})
		args, err := wire.Marshal(map[string]string{"path": "notes", "sql": text, "maxRows": "5"})
		if err != nil {
			t.Skip("not valid UTF-8: a host cannot send it")
		}
		r := h.Send(wire.TypeCall, `{"toolId":"data.query","arguments":`+string(args)+`}`)
		if r.Err != nil && r.Err.Code != data.CodeQueryFailed {
			t.Fatalf("%q: %v", text, r.Err)
		}
		checkUnchanged(t, db, dir)
	})
}

// checkUnchanged fails unless the notes database is as notesDB made it and writable.
func checkUnchanged(t *testing.T, db *sql.DB, dir string) {
	t.Helper()
	var count, n, dbs int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM notes), (SELECT count(*) FROM n), (SELECT count(*) FROM pragma_database_list)`).Scan(&count, &n, &dbs); err != nil ||
		count != 3 || n != 50 || dbs != 1 {
		t.Fatalf("the database changed: %d notes, %d numbers, %d databases (%v)", count, n, dbs, err)
	}
	if _, err := db.Exec(`UPDATE notes SET score = score WHERE id = 1`); err != nil {
		t.Fatalf("the app's connection no longer writes: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) > 3 { // notes.db, its -wal and -shm at most
		t.Fatalf("files appeared: %v", m)
	}
}
