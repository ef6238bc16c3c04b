package sqlitetest_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"modernc.org/sqlite" // the tests' driver; the package itself imports none

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/data"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var pinnedNow = time.Date(2026, 8, 25, 9, 30, 0, 0, time.UTC)

// notesDB creates the test database: a file with a notes table (every storage type), an
// index, a view and a numbers table of n rows, opened read-write as an app opens it.
func notesDB(t testing.TB, dir string, n int) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "notes.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, stmt := range []string{
		`CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT, data BLOB, score REAL)`,
		`CREATE INDEX notes_title ON notes (title)`,
		`CREATE VIEW titles AS SELECT id, title FROM notes`,
		`INSERT INTO notes VALUES (1, 'Groceries', 'milk, eggs', x'00ff10', 4.5), (2, 'Ideas', NULL, NULL, NULL), (3, 'Todo', 'ship it', x'', -1e300)`,
		`CREATE TABLE n (i INTEGER)`,
		fmt.Sprintf(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < %d) INSERT INTO n SELECT x FROM c`, n),
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return db
}

// harness registers the data tools. A statement runs as long as the machine takes unless a
// test sets QueryTimeout: no test but those of the timeout depends on a wall-clock bound.
func harness(t *testing.T, opts data.Options) *apptest.Harness {
	t.Helper()
	if opts.QueryTimeout == 0 {
		opts.QueryTimeout = time.Hour
	}
	a := app.New(app.Options{Clock: func() time.Time { return pinnedNow }, Guard: catalog.GuardFullAccess})
	if err := data.Register(a, opts); err != nil {
		t.Fatal(err)
	}
	return apptest.New(t, a)
}

type queryResult struct {
	Columns        []string           `json:"columns"`
	ColumnMetadata []map[string]any   `json:"columnMetadata"`
	Rows           []jsontext.Value   `json:"rows"`
	RowValues      [][]map[string]any `json:"rowValues"`
	Truncated      bool               `json:"truncated"`
	OffsetRows     int64              `json:"offsetRows"`
	NextRequest    *struct {
		ToolID    string            `json:"toolId"`
		Arguments map[string]string `json:"arguments"`
	} `json:"nextRequest"`
}

func query(t *testing.T, h *apptest.Harness, args string) queryResult {
	t.Helper()
	v, _ := h.Call(data.QueryToolID, args)
	var r queryResult
	if err := wire.Unmarshal(v, &r); err != nil {
		t.Fatalf("%v: %s", err, v)
	}
	return r
}

func reason(t *testing.T, e *wire.Error) string {
	t.Helper()
	var d struct {
		Reason string `json:"reason"`
	}
	if err := wire.Unmarshal(e.Details, &d); err != nil {
		t.Fatalf("details %s of %v: %v", e.Details, e, err)
	}
	return d.Reason
}

func TestQuery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := harness(t, data.Options{Databases: []data.Database{{Name: "notes", DB: notesDB(t, dir, 10)}}})
	r := query(t, h, `{"path":"notes","sql":"SELECT id, title, data, score, body, id FROM notes ORDER BY id"}`)
	if strings.Join(r.Columns, ",") != "id,title,data,score,body,id" || r.Truncated || r.NextRequest != nil || len(r.Rows) != 3 {
		t.Fatalf("result = %+v", r)
	}
	// Rows keep the column order; a repeated name gets a key of its own.
	if got := string(r.Rows[0]); got != `{"id":1,"title":"Groceries","data":{"type":"blob","base64":"AP8Q","byteLength":3},"score":4.5,"body":"milk, eggs","id_2":1}` {
		t.Errorf("row 1 = %s", got)
	}
	if got := string(r.Rows[2]); got != `{"id":3,"title":"Todo","data":{"type":"blob","base64":"","byteLength":0},"score":-1e+300,"body":"ship it","id_2":3}` {
		t.Errorf("row 3 = %s", got)
	}
	var storage []string
	for _, c := range r.RowValues[1] {
		storage = append(storage, c["storageType"].(string))
	}
	if strings.Join(storage, ",") != "integer,text,null,null,null,integer" {
		t.Errorf("storage types of row 2 = %v", storage)
	}
	if r.ColumnMetadata[1]["declaredType"] != "TEXT" || r.ColumnMetadata[5]["key"] != "id_2" {
		t.Errorf("column metadata = %v", r.ColumnMetadata)
	}
	// The database is named by its name, its file or the file's name; database is another
	// name for path.
	for _, args := range []string{`{"path":"NOTES","sql":"SELECT 1"}`, `{"path":"notes.db","sql":"VALUES (1)"}`,
		`{"path":"` + filepath.Join(dir, "notes.db") + `","sql":"SELECT 1;"}`, `{"database":"notes","sql":"WITH x AS (SELECT 1) SELECT * FROM x"}`,
		`{"path":"notes","sql":"EXPLAIN QUERY PLAN SELECT * FROM notes WHERE title = 'x' -- why not"}`} {
		if r := query(t, h, args); len(r.Rows) == 0 {
			t.Errorf("%s: no rows", args)
		}
	}
}

// TestQueryPaged follows each nextRequest as it is until there is none.
func TestQueryPaged(t *testing.T) {
	t.Parallel()
	h := harness(t, data.Options{Databases: []data.Database{{Name: "notes", DB: notesDB(t, t.TempDir(), 25)}}})
	req := `{"toolId":"data.query","arguments":{"path":"notes","sql":"SELECT i FROM n ORDER BY i","maxRows":10}}`
	var got []string
	pages := 0
	for {
		pages++
		r := h.Send(wire.TypeCall, req)
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		var res queryResult
		if err := wire.Unmarshal(r.Result.Result, &res); err != nil {
			t.Fatal(err)
		}
		for _, row := range res.Rows {
			got = append(got, string(row))
		}
		if res.NextRequest == nil {
			break
		}
		if res.NextRequest.Arguments["offsetRows"] != fmt.Sprint(res.OffsetRows+10) || res.NextRequest.Arguments["maxRows"] != "10" {
			t.Fatalf("nextRequest = %+v", res.NextRequest)
		}
		b, _ := wire.Marshal(res.NextRequest)
		req = string(b)
	}
	if pages != 3 || len(got) != 25 || got[0] != `{"i":1}` || got[24] != `{"i":25}` {
		t.Errorf("%d pages, %d rows: %v", pages, len(got), got)
	}
}

// TestHostileQueries: writes, several statements, ATTACH, PRAGMA, load_extension, a
// cartesian product and a statement that would run for ever are refused or bounded, and
// the database is as it was; the app's own connections still write. Writes that pass the
// text check (behind a WITH) are refused by the database; ATTACH and the PRAGMAs run on a
// query_only connection, so for them the text check is what holds.
func TestHostileQueries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := notesDB(t, dir, 200)
	db.SetMaxOpenConns(1) // the tools' connection is the app's: it must come back writable
	h := harness(t, data.Options{Databases: []data.Database{{Name: "notes", DB: db}}})
	// The statements that never end meet a short timeout; the others none that a busy
	// machine could reach.
	short := harness(t, data.Options{QueryTimeout: 200 * time.Millisecond, Databases: []data.Database{{Name: "notes", DB: db}}})
	for _, tc := range []struct{ name, sql, reason, says string }{
		{"insert", `INSERT INTO notes (title) VALUES ('pwned')`, "not_a_query", ""},
		{"a write behind WITH", `WITH x AS (SELECT 1) DELETE FROM notes`, "database_error", "readonly"},
		{"a write behind WITH, commented", `/* hi */ WITH x(a) AS (VALUES (1)) UPDATE notes SET title = 'pwned'`, "database_error", "readonly"},
		{"commit then delete", `COMMIT; DELETE FROM notes`, "multiple_statements", ""},
		{"a select then a delete", `SELECT 1; DELETE FROM notes`, "multiple_statements", ""},
		{"a delete behind a comment and a string", "SELECT ';' -- ;\n; DELETE FROM notes", "multiple_statements", ""},
		{"attach", `ATTACH DATABASE '` + filepath.Join(dir, "other.db") + `' AS other`, "not_a_query", ""},
		{"pragma off", `PRAGMA query_only = 0`, "not_a_query", ""},
		{"pragma writable schema", `PRAGMA writable_schema = ON`, "not_a_query", ""},
		{"create", `CREATE TABLE pwned (x)`, "not_a_query", ""},
		{"drop", `DROP TABLE notes`, "not_a_query", ""},
		{"vacuum into", `VACUUM INTO '` + filepath.Join(dir, "copy.db") + `'`, "not_a_query", ""},
		{"a select that reads a pragma", `SELECT * FROM notes WHERE 1 = (SELECT count(*) FROM pragma_query_only)`, "", ""},
		{"a DELETE inside a WITH", `WITH x AS (DELETE FROM notes RETURNING *) SELECT * FROM x`, "database_error", "syntax error"}, // SQLite has no such CTE
		{"load_extension", `SELECT load_extension('` + filepath.Join(dir, "evil.so") + `')`, "database_error", "not authorized"},
		{"a comment after the one statement", "SELECT 1; -- DELETE FROM notes", "", ""},
		{"a statement hidden after a block comment", "SELECT 1 /* ; */; /* */ DELETE FROM notes", "multiple_statements", ""},
		{"a recursive CTE without a bound", `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c`, "", ""},
		{"an empty text", `  -- nothing`, "invalid_sql", ""},
		{"counts for ever", `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c`, "timeout", ""},
		{"a count over a cartesian product", `SELECT count(*) FROM n a, n b, n c, n d`, "timeout", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, _ := wire.Marshal(map[string]string{"path": "notes", "sql": tc.sql})
			on := h
			if tc.reason == "timeout" {
				on = short
			}
			r := on.Send(wire.TypeCall, `{"toolId":"data.query","arguments":`+string(args)+`}`)
			switch {
			case tc.reason == "" && r.Err != nil:
				t.Errorf("%s: %v", tc.sql, r.Err)
			case tc.reason != "" && (r.Err == nil || r.Err.Code != data.CodeQueryFailed || reason(t, r.Err) != tc.reason):
				t.Errorf("%s = %v %s, want %s (%s)", tc.sql, r.Err, r.Payload, data.CodeQueryFailed, tc.reason)
			case tc.says != "" && !strings.Contains(r.Err.Message, tc.says):
				t.Errorf("%s: %v; want the database's refusal (%s)", tc.sql, r.Err, tc.says)
			}
		})
	}
	// A cartesian product of 1.6e9 rows is cut at maxRows.
	if r := query(t, h, `{"path":"notes","sql":"SELECT * FROM n a, n b, n c, n d","maxRows":"7"}`); len(r.Rows) != 7 || !r.Truncated {
		t.Errorf("cartesian product: %d rows, truncated %v", len(r.Rows), r.Truncated)
	}
	var count int
	var title string
	if err := db.QueryRow(`SELECT count(*), min(title) FROM notes`).Scan(&count, &title); err != nil || count != 3 || title != "Groceries" {
		t.Errorf("the notes changed: %d rows, %q, %v", count, title, err)
	}
	var dbs int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_database_list`).Scan(&dbs); err != nil || dbs != 1 {
		t.Errorf("%d databases attached, %v", dbs, err)
	}
	if _, err := db.Exec(`INSERT INTO notes (title) VALUES ('still writable')`); err != nil {
		t.Errorf("the app's own connection no longer writes: %v", err)
	}
}

// TestValuesBounded: with the driver's Limit, a statement that makes a value larger than a
// result may hold fails at once, by SQLite's own length limit, before the value is in the
// app's memory (without it, SELECT zeroblob(900000000) took the demo to 9 GB); the
// connection comes back to the app with SQLite's limit, in both read-only modes.
func TestValuesBounded(t *testing.T) {
	t.Parallel()
	for _, mode := range []data.ReadOnly{data.QueryOnly, data.Opened} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			db := notesDB(t, t.TempDir(), 1)
			db.SetMaxOpenConns(1) // the tools' connection is the app's
			h := harness(t, data.Options{Databases: []data.Database{{Name: "notes", DB: db, ReadOnly: mode, Limit: sqlite.Limit}}})
			for _, stmt := range []string{
				`SELECT zeroblob(900000000)`,
				`SELECT length(printf('%.*c', 500000000, 'x'))`,
				`SELECT length(replace(printf('%.*c', 4000, 'x'), 'x', printf('%.*c', 4000, 'y')))`, // 16 MB from 4 KB
			} {
				args, _ := wire.Marshal(map[string]string{"path": "notes", "sql": stmt})
				if e := h.Fail(data.QueryToolID, string(args)); reason(t, e) != "database_error" || !strings.Contains(e.Message, "too big") {
					t.Errorf("%s: %v, want SQLite's refusal of a value too big", stmt, e)
				}
			}
			// A value within the bound is read.
			if r := query(t, h, `{"path":"notes","sql":"SELECT length(zeroblob(1000000)) AS n"}`); string(r.Rows[0]) != `{"n":1000000}` {
				t.Errorf("a value of 1 MB: %s", r.Rows[0])
			}
			var n int64
			if err := db.QueryRow(`SELECT length(zeroblob(100000000))`).Scan(&n); err != nil || n != 1e8 {
				t.Errorf("the app's connection kept the tools' limit: %d, %v", n, err)
			}
		})
	}
}

// TestQueryOnlyPutBack: a connection the app made read-only stays read-only.
func TestQueryOnlyPutBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notesDB(t, dir, 1)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "notes.db")+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	h := harness(t, data.Options{Databases: []data.Database{{Name: "notes", DB: db}}})
	query(t, h, `{"path":"notes","sql":"SELECT 1"}`)
	if _, err := db.Exec(`DELETE FROM notes`); err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Errorf("the app's read-only connection came back writable: %v", err)
	}
}

// TestOpenedReadOnly: a database the app opened read-only refuses writes by itself.
func TestOpenedReadOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notesDB(t, dir, 1)
	ro, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "notes.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	h := harness(t, data.Options{Databases: []data.Database{{Name: "notes", DB: ro, ReadOnly: data.Opened}}})
	if e := h.Fail(data.QueryToolID, `{"path":"notes","sql":"WITH x AS (SELECT 1) DELETE FROM notes"}`); reason(t, e) != "database_error" || !strings.Contains(e.Message, "readonly") {
		t.Errorf("a write on a read-only database: %v", e)
	}
	if r := query(t, h, `{"path":"notes","sql":"SELECT count(*) AS n FROM notes"}`); string(r.Rows[0]) != `{"n":3}` {
		t.Errorf("count = %s", r.Rows[0])
	}
}

func TestResultBytesBounded(t *testing.T) {
	t.Parallel()
	h := harness(t, data.Options{MaxResultBytes: 2000, Databases: []data.Database{{Name: "notes", DB: notesDB(t, t.TempDir(), 100)}}})
	r := query(t, h, `{"path":"notes","sql":"SELECT i, printf('%.50c', 'x') AS pad FROM n","maxRows":1000}`)
	if !r.Truncated || len(r.Rows) == 0 || len(r.Rows) >= 100 || r.NextRequest == nil {
		t.Errorf("%d rows, truncated %v", len(r.Rows), r.Truncated)
	}
	if e := h.Fail(data.QueryToolID, `{"path":"notes","sql":"SELECT zeroblob(5000)"}`); reason(t, e) != "too_large" {
		t.Errorf("one row larger than the bound: %v", e)
	}
}

func TestListAndDescribe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mem, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	h := harness(t, data.Options{Databases: []data.Database{{Name: "notes", DB: notesDB(t, dir, 1), Description: "the app's notes"},
		{Name: "cache", DB: mem}}})
	v, _ := h.Call(data.ListDatabasesToolID, `{"includeSystemStores":"1"}`)
	var list struct {
		Databases []struct {
			Name         string `json:"name"`
			Path         string `json:"path"`
			RelativePath string `json:"relativePath"`
			RootAlias    string `json:"rootAlias"`
			ReadOnly     string `json:"readOnly"`
			Description  string `json:"description"`
			SizeBytes    int64  `json:"sizeBytes"`
		} `json:"databases"`
		Truncated bool `json:"truncated"`
	}
	if err := wire.Unmarshal(v, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Databases) != 2 || list.Truncated {
		t.Fatalf("list = %s", v)
	}
	if n := list.Databases[0]; n.Name != "notes" || n.Path != filepath.Join(dir, "notes.db") || n.RelativePath != "notes.db" ||
		n.RootAlias != "app" || n.SizeBytes == 0 || n.ReadOnly != "query_only" || n.Description != "the app's notes" {
		t.Errorf("notes = %+v", n)
	}
	if c := list.Databases[1]; c.Path != "cache" || c.SizeBytes != 0 {
		t.Errorf("an in-memory database = %+v", c)
	}
	if v, _ := h.Call(data.ListDatabasesToolID, `{"maxResults":1}`); !strings.Contains(string(v), `"truncated":true`) {
		t.Errorf("maxResults 1 = %s", v)
	}

	v, _ = h.Call(data.DescribeSchemaToolID, `{"path":"notes"}`)
	var schema struct {
		DatabasePath string `json:"databasePath"`
		Tables       []struct {
			Name    string           `json:"name"`
			Type    *string          `json:"type"`
			SQL     *string          `json:"sql"`
			Columns []map[string]any `json:"columns"`
			Indexes []map[string]any `json:"indexes"`
		} `json:"tables"`
	}
	if err := wire.Unmarshal(v, &schema); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range schema.Tables {
		names = append(names, tb.Name+":"+*tb.Type)
	}
	if strings.Join(names, ",") != "n:table,notes:table,titles:view" || schema.DatabasePath != filepath.Join(dir, "notes.db") {
		t.Fatalf("tables = %v (%s)", names, schema.DatabasePath)
	}
	notes := schema.Tables[1]
	if len(notes.Columns) != 5 || notes.Columns[1]["name"] != "title" || notes.Columns[1]["type"] != "TEXT" || notes.Columns[1]["notnull"] != float64(1) ||
		len(notes.Indexes) != 1 || notes.Indexes[0]["name"] != "notes_title" || !strings.HasPrefix(*notes.SQL, "CREATE TABLE notes") {
		t.Errorf("notes = %+v", notes)
	}
	if v, _ := h.Call(data.DescribeSchemaToolID, `{"database":"notes","table":"TITLES"}`); strings.Count(string(v), `"name":"titles"`) != 1 || strings.Contains(string(v), `"name":"notes"`) {
		t.Errorf("one table = %s", v)
	}
	for tool, code := range map[string]wire.Code{data.QueryToolID: data.CodeQueryFailed, data.DescribeSchemaToolID: data.CodeSchemaFailed} {
		if e := h.Fail(tool, `{"path":"nope","sql":"SELECT 1"}`); e.Code != code || reason(t, e) != "database_unknown" {
			t.Errorf("%s of an unknown database: %v", tool, e)
		}
		if e := h.Fail(tool, `{"sql":"SELECT 1"}`); e.Code != code || reason(t, e) != "invalid_argument" {
			t.Errorf("%s without a path: %v", tool, e)
		}
	}
	if e := h.Fail(data.ListDatabasesToolID, `{"maxResults":"all"}`); e.Code != data.CodeListFailed {
		t.Errorf("list with maxResults all: %v", e)
	}
}

// TestCallerLeaves: a query whose caller goes away stops (no goroutine left, the
// connection back in the pool).
func TestCallerLeaves(t *testing.T) {
	t.Parallel()
	db := notesDB(t, t.TempDir(), 1)
	db.SetMaxOpenConns(1)
	h := harness(t, data.Options{QueryTimeout: time.Hour, Databases: []data.Database{{Name: "notes", DB: db}}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan apptest.Response, 1)
	go func() {
		done <- h.SendContext(ctx, wire.TypeCall, `{"toolId":"data.query","arguments":{"path":"notes","sql":"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"}}`)
	}()
	// The query holds the only connection while it runs.
	for db.Stats().InUse == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if _, err := db.Exec(`INSERT INTO notes (title) VALUES ('after')`); err != nil {
		t.Errorf("the connection did not come back writable: %v", err)
	}
}

// TestNoTransfers: the data tools answer in JSON only; they send no ASFT transfer, which
// the official host would have to register (apptest.OfficialHostTransfers).
func TestNoTransfers(t *testing.T) {
	t.Parallel()
	h := harness(t, data.Options{Databases: []data.Database{{Name: "notes", DB: notesDB(t, t.TempDir(), 1)}}})
	for _, call := range []string{
		`{"toolId":"data.list_databases","arguments":{}}`,
		`{"toolId":"data.describe_schema","arguments":{"path":"notes"}}`,
		`{"toolId":"data.query","arguments":{"path":"notes","sql":"SELECT * FROM notes"}}`,
	} {
		if r := h.Send(wire.TypeCall, call); r.Err != nil || len(r.Artifacts) != 0 || len(r.OfficialHost) != 0 {
			t.Errorf("%s: %v, %d transfers", call, r.Err, len(r.Artifacts))
		}
	}
}
