package data

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/internal/flatargs"
	"github.com/ansight-go/ansight/wire"
)

// Ids of the data tools.
const (
	ListDatabasesToolID  = "data.list_databases"
	DescribeSchemaToolID = "data.describe_schema"
	QueryToolID          = "data.query"
)

// ReadOnly says how a database refuses the writes of data.query: the tools never rely on
// the SQL text alone (see Database).
type ReadOnly int

const (
	// Detect (the zero value) is QueryOnly for a SQLite database (one that answers
	// SELECT sqlite_version() when the tools are registered: modernc.org/sqlite,
	// mattn/go-sqlite3…) and refused for any other, which must say how it is read-only.
	Detect ReadOnly = iota
	// QueryOnly (SQLite): each statement runs on a connection of its own, taken from the
	// app's pool, with PRAGMA query_only switched on for it and back to what it was before
	// the connection returns to the pool. The app's own connections keep writing.
	QueryOnly
	// Opened: the app opened the *sql.DB read-only and hands it to the tools only (SQLite
	// "file:notes.db?mode=ro", a PostgreSQL role with SELECT only…): the database refuses
	// writes by itself.
	Opened
	// Transaction: each statement runs in a transaction begun with sql.TxOptions{ReadOnly:
	// true} and rolled back, for drivers that honour it (pgx, lib/pq, go-sql-driver/mysql).
	// Refused for SQLite drivers: modernc.org/sqlite ignores TxOptions.ReadOnly.
	Transaction
	// Unprotected: the database has no read-only mode. data.query then only runs when the
	// app exposes critical tools (the tool becomes critical): the SQL text check (one
	// SELECT, WITH, VALUES or EXPLAIN statement) is all that stands between the caller and
	// a write. An explicit opt-in, never a default.
	Unprotected
)

// String returns the mode's name, as results report it.
func (r ReadOnly) String() string {
	switch r {
	case QueryOnly:
		return "query_only"
	case Opened:
		return "opened_read_only"
	case Transaction:
		return "read_only_transaction"
	case Unprotected:
		return "unprotected"
	}
	return "detect"
}

// Database is a database the data tools inspect.
type Database struct {
	// Name identifies the database in requests ("notes"): a plain name, unique (any case)
	// among the databases. The official tools name a database by its file: a request's
	// path (or database) matches the name, the file's absolute path or its base name.
	Name string
	// DB is the app's database. The tools never close it.
	DB *sql.DB
	// ReadOnly says how the database refuses writes (Detect when zero).
	ReadOnly ReadOnly
	// Description is shown in data.list_databases.
	Description string
	// Path is the database's file, when it has one. For SQLite it is found by itself
	// (PRAGMA database_list) when empty.
	Path string
	// Describe, when set, answers data.describe_schema for a database that is not SQLite
	// (the tools describe SQLite by themselves). Nil: describe_schema refuses such a
	// database (reason schema_unsupported).
	Describe func(ctx context.Context, q Querier) ([]Table, error)
	// Limit is the SQLite driver's sqlite3_limit for one connection, returning the limit's
	// value before: modernc.org/sqlite's sqlite.Limit as it is. With it, the tools run
	// each statement on a connection whose values (strings and blobs, what the statement
	// reads or makes) are at most Options.MaxResultBytes long (SQLITE_LIMIT_LENGTH, put
	// back afterwards), so that SELECT zeroblob(1e9) fails at once ("string or blob too
	// big") instead of making a value of a gigabyte in the app's memory before the result
	// bound applies. Without it, one value can reach SQLite's own limit (1e9 bytes). For
	// mattn/go-sqlite3, a function that calls (*sqlite3.SQLiteConn).SetLimit through
	// sql.Conn.Raw. SQLite only.
	Limit func(c *sql.Conn, id, value int) (before int, err error)
}

// Querier runs a read-only statement: what Describe gets, on the tools' read-only
// connection.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Table is a table or view as data.describe_schema reports it: columns and indexes are
// objects of the database's own description (for SQLite, the rows of PRAGMA table_xinfo
// and PRAGMA index_list).
type Table struct {
	Name    string           `json:"name"`
	Type    *string          `json:"type" jsonschema:"table or view, as the database says"`
	SQL     *string          `json:"sql" jsonschema:"the statement that created it, when the database keeps it"`
	Columns []jsontext.Value `json:"columns"`
	Indexes []jsontext.Value `json:"indexes"`
}

// Bounds of the data tools unless Options say otherwise.
const (
	DefaultQueryTimeout = 5 * time.Second
	// DefaultMaxResultBytes bounds the rows of one data.query result (the row limit of
	// 1000 still applies): a query of large text or blobs ends early, truncated.
	DefaultMaxResultBytes = 4 << 20
	defaultMaxRows        = 100 // data.query's maxRows default (official)
	maxMaxRows            = 1000
	defaultMaxDatabases   = 200 // data.list_databases's maxResults default (official)
	maxSchemaRows         = 512 // tables, columns and indexes described (official)
)

// Options configures the data tools.
type Options struct {
	// Databases are the databases the tools inspect; at least one.
	Databases []Database
	// QueryTimeout bounds one statement (DefaultQueryTimeout when ≤ 0): a longer one is
	// interrupted (SQLite drivers stop it through the context) and fails with reason
	// timeout.
	QueryTimeout time.Duration
	// MaxResultBytes bounds the rows of one data.query (DefaultMaxResultBytes when ≤ 0).
	MaxResultBytes int
}

// Register adds data.list_databases, data.describe_schema and data.query (read; data.query
// critical when a database is Unprotected) over opts.Databases to a. Call it once, before
// serving.
func Register(a *app.App, opts Options) error {
	s, err := newSet(opts)
	if err != nil {
		return err
	}
	queryPolicy := wire.PolicyRead
	for _, d := range s.dbs {
		if d.ReadOnly == Unprotected {
			queryPolicy = wire.PolicyCritical
		}
	}
	def := func(id, name, keywords, description string, policy wire.Policy, schema string) catalog.Definition {
		return catalog.Definition{ID: id, Name: name, Category: "data", Policy: policy, Keywords: keywords,
			Description: description + " Databases: " + s.names() + ".", ArgumentEncoding: wire.ArgumentEncodingFlattenedString,
			ArgumentsSchema: jsontext.Value(schema)}
	}
	regs := []func() error{
		func() error {
			return app.Register(a, def(ListDatabasesToolID, "List databases", "database sqlite storage schema",
				"Lists the app's databases that the data tools inspect.", wire.PolicyRead, listSchema), s.list)
		},
		func() error {
			return app.Register(a, def(DescribeSchemaToolID, "Describe schema", "database schema tables columns indexes sqlite",
				"Describes the tables and views of a database (one, with table), their columns and indexes.", wire.PolicyRead, describeSchema), s.describe)
		},
		func() error {
			return app.Register(a, def(QueryToolID, "Query database", "database sql query select read sqlite",
				"Runs one read-only statement (SELECT, WITH, VALUES or EXPLAIN) on a database, bounded in rows and time, "+
					"on a connection that refuses writes; the result carries the request for the next rows.", queryPolicy, querySchema), s.query)
		},
	}
	for _, r := range regs {
		if err := r(); err != nil {
			return fmt.Errorf("data: %w", err)
		}
	}
	return nil
}

// set is the configured databases, checked.
type set struct {
	dbs  []*database
	opts Options
}

// database is a registered database with what the tools learnt of it.
type database struct {
	Database
	sqlite bool
}

func newSet(opts Options) (*set, error) {
	if len(opts.Databases) == 0 {
		return nil, errors.New("data: Options.Databases is empty")
	}
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = DefaultQueryTimeout
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	s := &set{opts: opts}
	seen := map[string]bool{}
	for _, d := range opts.Databases {
		if err := catalog.CheckID(d.Name); err != nil || strings.ContainsAny(d.Name, `/\`) {
			return nil, fmt.Errorf("data: database name %q is not a plain name", d.Name)
		}
		if seen[strings.ToLower(d.Name)] {
			return nil, fmt.Errorf("data: two databases are called %q", d.Name)
		}
		seen[strings.ToLower(d.Name)] = true
		if d.DB == nil {
			return nil, fmt.Errorf("data: database %q has no DB", d.Name)
		}
		db := &database{Database: d, sqlite: isSQLite(d.DB)}
		switch {
		case db.ReadOnly == Detect && db.sqlite:
			db.ReadOnly = QueryOnly
		case db.ReadOnly == Detect:
			return nil, fmt.Errorf("data: database %q (driver %T): say how it refuses writes (ReadOnly Opened, Transaction, or Unprotected to opt in to a database without a read-only mode)", d.Name, d.DB.Driver())
		case db.ReadOnly == QueryOnly && !db.sqlite:
			return nil, fmt.Errorf("data: database %q: QueryOnly is SQLite's PRAGMA query_only, and driver %T is not SQLite", d.Name, d.DB.Driver())
		case db.ReadOnly == Transaction && db.sqlite:
			return nil, fmt.Errorf("data: database %q: SQLite drivers ignore sql.TxOptions.ReadOnly; use QueryOnly (the default) or Opened", d.Name)
		case db.Limit != nil && !db.sqlite:
			return nil, fmt.Errorf("data: database %q: Limit is SQLite's sqlite3_limit, and driver %T is not SQLite", d.Name, d.DB.Driver())
		case db.ReadOnly < Detect || db.ReadOnly > Unprotected:
			return nil, fmt.Errorf("data: database %q: unknown ReadOnly mode %d", d.Name, d.ReadOnly)
		}
		if db.Path != "" {
			abs, err := filepath.Abs(db.Path)
			if err != nil {
				return nil, fmt.Errorf("data: database %q: %w", d.Name, err)
			}
			db.Path = abs
		}
		s.dbs = append(s.dbs, db)
	}
	return s, nil
}

// isSQLite reports whether db is a SQLite database: whether it knows sqlite_version(),
// which no other database has (a driver's name proves nothing: wrappers and tests name
// theirs as they like).
func isSQLite(db *sql.DB) bool {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	var v string
	return db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v) == nil && v != ""
}

// probeTimeout bounds the question isSQLite asks when the tools are registered.
const probeTimeout = 5 * time.Second

func (s *set) names() string {
	names := make([]string, len(s.dbs))
	for i, d := range s.dbs {
		names[i] = d.Name
	}
	return strings.Join(names, ", ")
}

// lookup finds the database a request names with path (or database): by name (any case),
// by the file's absolute path, or by the file's base name.
func (s *set) lookup(ctx context.Context, a flatargs.Args) (*database, error) {
	name := a.Str("path")
	if name == "" {
		name = a.Str("database")
	}
	if name == "" {
		return nil, problem(reasonInvalidArgument, "The data tools require a 'path' argument that names one of the app's databases (%s).", s.names())
	}
	for _, d := range s.dbs {
		if strings.EqualFold(d.Name, name) {
			return d, nil
		}
	}
	for _, d := range s.dbs {
		if p := d.file(ctx); p != "" && (p == filepath.Clean(name) || filepath.Base(p) == name) {
			return d, nil
		}
	}
	return nil, problem(reasonUnknownDatabase, "There is no database %q (databases: %s).", name, s.names())
}

// file returns the database's file: Path, or for SQLite the main database's file, "" when
// it has none (in memory) or it cannot be told.
func (d *database) file(ctx context.Context) string {
	if d.Path != "" || !d.sqlite {
		return d.Path
	}
	var seq int
	var name, file string
	if err := d.DB.QueryRowContext(ctx, "PRAGMA database_list").Scan(&seq, &name, &file); err != nil {
		return ""
	}
	return file
}

// The arguments schemas, as the official SDKs publish them (data.query adds offsetRows).
var (
	listSchema = flatargs.Schema(nil,
		flatargs.Prop("includeSystemStores", `"boolean"`, "accepted for the official SDKs' sake: a Go app has no system stores"),
		flatargs.Prop("maxResults", `"integer"`, "databases to list, 1 to 1000 (default 200)"))
	pathProp       = flatargs.Prop("path", `"string"`, "the database: its name, or its file's path or name")
	databaseProp   = flatargs.Prop("database", `["string","null"]`, "another name for path")
	describeSchema = flatargs.Schema([]string{"path"}, pathProp, databaseProp,
		flatargs.Prop("table", `["string","null"]`, "only this table or view (any case)"))
	querySchema = flatargs.Schema([]string{"path", "sql"}, pathProp, databaseProp,
		flatargs.Prop("sql", `"string"`, "one read-only statement: SELECT, WITH, VALUES or EXPLAIN"),
		flatargs.Prop("maxRows", `"integer"`, "rows to return, 1 to 1000 (default 100)"),
		flatargs.Prop("offsetRows", `"integer"`, "rows of the result to skip first, for the next page (default 0; not in the official SDKs)"))
)
