package data

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/internal/flatargs"
)

// databaseEntry is a database as data.list_databases reports it: the official members
// (name, path, relativePath, rootAlias, sizeBytes, lastModifiedUtc) and ours.
type databaseEntry struct {
	Name         string    `json:"name"`
	Path         string    `json:"path" jsonschema:"the database's file, or its name when it has none: what path takes in the other data tools"`
	RelativePath string    `json:"relativePath" jsonschema:"the file's name"`
	RootAlias    string    `json:"rootAlias" jsonschema:"app: a Go app's databases are its own, not in a sandbox root"`
	SizeBytes    int64     `json:"sizeBytes" jsonschema:"the file's size, 0 without one"`
	LastModified time.Time `json:"lastModifiedUtc" jsonschema:"the file's last modification, the time of the listing without one"`
	// Not in the official SDKs:
	Driver      string `json:"driver" jsonschema:"the Go type of the database/sql driver"`
	ReadOnly    string `json:"readOnly" jsonschema:"how the database refuses writes: query_only, opened_read_only, read_only_transaction or unprotected"`
	Description string `json:"description,omitzero"`
}

type listResult struct {
	Databases     []databaseEntry `json:"databases"`
	Truncated     bool            `json:"truncated"`
	CapturedAtUtc time.Time       `json:"capturedAtUtc"`
}

// list runs data.list_databases.
func (s *set) list(ctx context.Context, c *app.Call, in map[string]string) (*listResult, error) {
	a, err := flatargs.New(in)
	if err == nil {
		_, err = a.Bool("includeSystemStores", false)
	}
	max := 0
	if err == nil {
		max, err = a.Int("maxResults", defaultMaxDatabases, 1, maxMaxRows)
	}
	if err != nil {
		return nil, toolFailure(CodeListFailed, "", err)
	}
	now := c.Now().UTC()
	res := &listResult{Databases: []databaseEntry{}, CapturedAtUtc: now}
	for _, d := range s.dbs {
		if len(res.Databases) == max {
			res.Truncated = true
			break
		}
		e := databaseEntry{Name: d.Name, Path: d.Name, RelativePath: d.Name, RootAlias: "app", LastModified: now,
			Driver: strings.TrimPrefix(typeName(d.DB), "*"), ReadOnly: d.ReadOnly.String(), Description: d.Description}
		if p := d.file(ctx); p != "" {
			e.Path, e.RelativePath = p, filepath.Base(p)
			if fi, err := os.Stat(p); err == nil {
				e.SizeBytes, e.LastModified = fi.Size(), fi.ModTime().UTC()
			}
		}
		res.Databases = append(res.Databases, e)
	}
	return res, nil
}

type describeResult struct {
	DatabasePath  string    `json:"databasePath"`
	Tables        []Table   `json:"tables"`
	CapturedAtUtc time.Time `json:"capturedAtUtc"`
	Database      string    `json:"database" jsonschema:"the database's name (not in the official SDKs)"`
}

// describe runs data.describe_schema: the tables and views of a database with their
// columns and indexes, read on the read-only connection.
func (s *set) describe(ctx context.Context, c *app.Call, in map[string]string) (*describeResult, error) {
	a, err := flatargs.New(in)
	if err != nil {
		return nil, toolFailure(CodeSchemaFailed, "", err)
	}
	d, err := s.lookup(ctx, a)
	if err != nil {
		return nil, toolFailure(CodeSchemaFailed, "", err)
	}
	var tables []Table
	err = s.readOnly(ctx, d, func(ctx context.Context, q Querier) error {
		switch {
		case d.Describe != nil:
			tables, err = d.Describe(ctx, q)
		case d.sqlite:
			tables, err = describeSQLite(ctx, q)
		default:
			err = problem(reasonSchemaUnsupported, "database %q (driver %s) is not SQLite and its app gave no Describe", d.Name, typeName(d.DB))
		}
		return err
	})
	if err != nil {
		return nil, toolFailure(CodeSchemaFailed, d.Name, err)
	}
	res := &describeResult{DatabasePath: d.file(ctx), Tables: []Table{}, CapturedAtUtc: c.Now().UTC(), Database: d.Name}
	if res.DatabasePath == "" {
		res.DatabasePath = d.Name
	}
	table := a.Str("table")
	for _, t := range tables {
		if table == "" || strings.EqualFold(t.Name, table) {
			if t.Columns == nil {
				t.Columns = []jsontext.Value{}
			}
			if t.Indexes == nil {
				t.Indexes = []jsontext.Value{}
			}
			res.Tables = append(res.Tables, t)
		}
	}
	return res, nil
}

// describeSQLite reads SQLite's schema as the official SDKs do: the tables and views of
// sqlite_master (not its own sqlite_ ones) by name, each with PRAGMA table_xinfo and PRAGMA
// index_list, at most 512 of each.
func describeSQLite(ctx context.Context, q Querier) ([]Table, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var tables []Table
	for rows.Next() && len(tables) < maxSchemaRows {
		var t Table
		if err := rows.Scan(&t.Name, &t.Type, &t.SQL); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, t)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, err
	}
	rows.Close()
	for i := range tables {
		quoted := "'" + strings.ReplaceAll(tables[i].Name, "'", "''") + "'"
		if tables[i].Columns, err = objects(ctx, q, "PRAGMA table_xinfo("+quoted+")"); err != nil {
			return nil, err
		}
		if tables[i].Indexes, err = objects(ctx, q, "PRAGMA index_list("+quoted+")"); err != nil {
			return nil, err
		}
	}
	return tables, nil
}

// objects returns the rows of a statement as objects keyed by column name.
func objects(ctx context.Context, q Querier, stmt string) ([]jsontext.Value, error) {
	rows, err := q.QueryContext(ctx, stmt)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := columns(rows)
	if err != nil {
		return nil, err
	}
	var out []jsontext.Value
	for rows.Next() && len(out) < maxSchemaRows {
		obj, _, _, err := readRow(rows, cols, math.MaxInt)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, rows.Err()
}

// typeName is the Go type of db's driver.
func typeName(db *sql.DB) string { return fmt.Sprintf("%T", db.Driver()) }
