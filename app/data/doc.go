// Package data lets a host inspect a Go app's databases — the tables of its SQLite file, a
// query on them — with the official SDKs' data tools, over the app's own *sql.DB:
//
//	data.list_databases   read  the databases the app registered
//	data.describe_schema  read  their tables and views, with columns and indexes
//	data.query            read  one read-only statement, bounded in rows, bytes and time, paged
//
//	err := data.Register(a, data.Options{Databases: []data.Database{{Name: "notes", DB: db, Limit: sqlite.Limit}}})
//
// The package imports no driver: the app brings its *sql.DB and its driver, so an app that
// has no database compiles no SQLite.
//
// # Read-only, by the database
//
// data.query never relies on the SQL text to leave the database unchanged. Each statement
// runs on a connection that refuses writes, as Database.ReadOnly says: for SQLite (a
// database that answers SELECT sqlite_version()) a connection of its own with PRAGMA
// query_only on, put back as it was before it returns to the app's pool (QueryOnly, the
// default for SQLite; modernc.org/sqlite
// ignores sql.TxOptions.ReadOnly, so a read-only transaction would not do); a database the
// app opened read-only (Opened: SQLite "mode=ro", a role with SELECT only); a read-only
// transaction for drivers that honour it (Transaction: pgx, lib/pq, MySQL). A driver with
// none of these is accepted only with the explicit Unprotected, which makes data.query a
// critical tool, hidden unless the app exposes critical tools. On top of that the text
// must be one statement (modernc.org/sqlite runs every statement of a text, so
// "SELECT 1; DELETE FROM t" would delete) beginning with SELECT, WITH, VALUES or EXPLAIN:
// that keeps out what a read-only connection still runs — ATTACH of another file, PRAGMA
// that switch query_only off. (The official SDKs also run read-only PRAGMAs such as
// table_info; here their table-valued forms do: SELECT * FROM pragma_table_info('notes').) Each statement runs for at most Options.QueryTimeout (5 s by
// default; the driver interrupts it) and returns at most maxRows rows (100 by default, at
// most 1000) and Options.MaxResultBytes (4 MiB): a cartesian product ends truncated, a
// count over one ends in a timeout. A value is measured before it is encoded, and with
// Database.Limit (modernc.org/sqlite's sqlite.Limit) SQLite itself refuses to make one
// longer than MaxResultBytes on the tools' connection: SELECT zeroblob(900000000) fails at
// once instead of holding a gigabyte in the app's memory (it took the demo app to 9 GB).
// What remains is a row of many values each within the bound (SQLite allows 2000 columns),
// for at most QueryTimeout.
//
// # The official shapes, and ours
//
// Arguments, results and codes (database_list_failed, database_schema_failed,
// database_query_failed, with a details.reason) follow the official .NET SDK
// (Ansight.Tools.Database): flattened-string arguments, rows both as objects keyed by column
// key and as rowValues cells with their storage type, blobs as {type:"blob", base64,
// byteLength}. Where the official tools assume a SQLite file in an app sandbox and a Go app
// has none, this package defines its own meaning, and says so in the schemas: a database
// is named by Database.Name (path also matches its file's absolute path or base name, so a
// path from data.list_databases works); list entries have rootAlias "app", and a database
// without a file gets its name as path, size 0 and the listing's time. The official
// data.query has no paging; here a result that stops early (truncated) carries a
// nextRequest with offsetRows (a row offset into the result, also an argument), like
// files.download_file's. Also ours: each result's database name, list entries' driver and
// read-only mode. describe_schema reads SQLite's own catalog (sqlite_master, PRAGMA
// table_xinfo and index_list); for other databases the app gives Database.Describe.
package data
