package data

import (
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/internal/flatargs"
)

// columnMeta describes a result column as the official SDKs do. Database/sql does not tell
// a column's source database, table or column: those are null.
type columnMeta struct {
	Index          int     `json:"index"`
	Name           string  `json:"name"`
	Key            string  `json:"key" jsonschema:"the column's unique key in rows (name, then name_2, name_3 for repeated names)"`
	DeclaredType   *string `json:"declaredType"`
	SourceDatabase *string `json:"sourceDatabase"`
	SourceTable    *string `json:"sourceTable"`
	SourceColumn   *string `json:"sourceColumn"`
}

// cell is one value of a row in rowValues: with its storage type (integer, real, text,
// blob, null or unknown).
type cell struct {
	ColumnKey   string         `json:"columnKey"`
	ColumnName  string         `json:"columnName"`
	StorageType string         `json:"storageType"`
	Value       jsontext.Value `json:"value" jsonschema:"a number, a string, null, or a blob as {type:blob, base64, byteLength}"`
}

type queryResult struct {
	DatabasePath   string           `json:"databasePath" jsonschema:"the database's file, or its name when it has none"`
	SQL            string           `json:"sql"`
	Columns        []string         `json:"columns"`
	ColumnMetadata []columnMeta     `json:"columnMetadata"`
	Rows           []jsontext.Value `json:"rows" jsonschema:"each row as an object keyed by the columns' keys, in column order"`
	RowValues      [][]cell         `json:"rowValues"`
	Truncated      bool             `json:"truncated" jsonschema:"more rows follow: nextRequest reads them"`
	CapturedAtUtc  time.Time        `json:"capturedAtUtc"`
	// Not in the official SDKs:
	Database    string     `json:"database" jsonschema:"the database's name"`
	OffsetRows  int64      `json:"offsetRows" jsonschema:"rows of the result skipped before these"`
	NextRequest *nextQuery `json:"nextRequest" jsonschema:"the call that reads the next rows, or null at the end"`
}

// nextQuery is a ready data.query call for the next rows; integers as strings, as
// flattened-string tools write them.
type nextQuery struct {
	ToolID    string `json:"toolId"`
	Arguments struct {
		Path       string `json:"path"`
		SQL        string `json:"sql"`
		MaxRows    string `json:"maxRows"`
		OffsetRows string `json:"offsetRows"`
	} `json:"arguments"`
}

// query runs data.query: one read-only statement on a read-only connection, maxRows rows
// from offsetRows, within the time and size bounds. Paging runs the statement again and
// skips the rows before the page, so pages of a result that changes meanwhile may overlap
// or skip rows: give an ORDER BY.
func (s *set) query(ctx context.Context, c *app.Call, in map[string]string) (*queryResult, error) {
	a, err := flatargs.New(in)
	if err != nil {
		return nil, toolFailure(CodeQueryFailed, "", err)
	}
	d, err := s.lookup(ctx, a)
	if err != nil {
		return nil, toolFailure(CodeQueryFailed, "", err)
	}
	res, err := s.run(ctx, c, d, a)
	if err != nil {
		return nil, toolFailure(CodeQueryFailed, d.Name, err)
	}
	return res, nil
}

func (s *set) run(ctx context.Context, c *app.Call, d *database, a flatargs.Args) (*queryResult, error) {
	text, err := a.Required("sql")
	if err != nil {
		return nil, err
	}
	stmt, err := statement(text)
	if err != nil {
		return nil, err
	}
	maxRows, err := a.Int("maxRows", defaultMaxRows, 1, maxMaxRows)
	if err != nil {
		return nil, err
	}
	offset, err := a.Int64("offsetRows", 0, 0, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	path := d.file(ctx)
	if path == "" {
		path = d.Name
	}
	res := &queryResult{DatabasePath: path, SQL: text, Database: d.Name, OffsetRows: offset, Rows: []jsontext.Value{}, RowValues: [][]cell{}}
	err = s.readOnly(ctx, d, func(ctx context.Context, q Querier) error {
		rows, err := q.QueryContext(ctx, stmt)
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, err := columns(rows)
		if err != nil {
			return err
		}
		for _, col := range cols {
			res.Columns = append(res.Columns, col.Name)
		}
		res.ColumnMetadata = cols
		for skipped := int64(0); skipped < offset && rows.Next(); skipped++ {
		}
		budget := s.opts.MaxResultBytes
		for rows.Next() {
			if len(res.Rows) == maxRows {
				res.Truncated = true
				break
			}
			obj, cells, size, err := readRow(rows, cols, budget)
			if err != nil {
				return err
			}
			if size > budget {
				if len(res.Rows) == 0 {
					return problem(reasonTooLarge, "one row is more than the %d bytes a result of this app holds: select fewer or shorter columns (substr, length)", s.opts.MaxResultBytes)
				}
				res.Truncated = true
				break
			}
			budget -= size
			res.Rows = append(res.Rows, obj)
			res.RowValues = append(res.RowValues, cells)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	if res.Columns == nil {
		res.Columns, res.ColumnMetadata = []string{}, []columnMeta{}
	}
	res.CapturedAtUtc = c.Now().UTC()
	if res.Truncated {
		n := &nextQuery{ToolID: QueryToolID}
		n.Arguments.Path, n.Arguments.SQL = d.Name, text
		n.Arguments.MaxRows = strconv.Itoa(maxRows)
		n.Arguments.OffsetRows = strconv.FormatInt(offset+int64(len(res.Rows)), 10)
		res.NextRequest = n
	}
	return res, nil
}

// columns describes the result's columns, each with a unique key.
func columns(rows *sql.Rows) ([]columnMeta, error) {
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	out := make([]columnMeta, len(types))
	for i, t := range types {
		name := t.Name()
		if name == "" {
			name = "column_" + strconv.Itoa(i)
		}
		key := name
		for n := 2; used[key]; n++ {
			key = name + "_" + strconv.Itoa(n)
		}
		used[key] = true
		out[i] = columnMeta{Index: i, Name: name, Key: key}
		if dt := t.DatabaseTypeName(); dt != "" {
			out[i].DeclaredType = &dt
		}
	}
	return out, nil
}

// readRow reads the current row as the row object, its cells and their size in bytes
// (about what they take in the result). It stops at the first column that takes the size
// beyond budget, before encoding it, and returns a size over budget.
func readRow(rows *sql.Rows, cols []columnMeta, budget int) (jsontext.Value, []cell, int, error) {
	vals := make([]driverValue, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, nil, 0, err
	}
	obj := []byte{'{'}
	cells := make([]cell, len(cols))
	size := 0
	for i, col := range cols {
		least := vals[i].encodedLen()
		if size += 2*least + len(col.Key) + len(col.Name) + 64; size > budget {
			return nil, nil, size, nil
		}
		storage, v := encodeValue(vals[i].v)
		size += 2 * (len(v) - least) // the value is in rows and in rowValues
		if i > 0 {
			obj = append(obj, ',')
		}
		obj, _ = jsontext.AppendQuote(obj, col.Key)
		obj = append(obj, ':')
		obj = append(obj, v...)
		cells[i] = cell{ColumnKey: col.Key, ColumnName: col.Name, StorageType: storage, Value: v}
	}
	return append(obj, '}'), cells, size, nil
}

// driverValue is a scan destination that keeps the driver's value as it is, without the
// copy Scan makes of a []byte into an *any: readRow encodes it before the next row (until
// then the driver's buffer holds), and measures it before encoding it.
type driverValue struct{ v any }

// Scan implements sql.Scanner.
func (d *driverValue) Scan(src any) error { d.v = src; return nil }

// encodedLen is a lower bound of the value's length once encoded: what readRow checks
// against the result's bound before encoding it.
func (d *driverValue) encodedLen() int {
	switch v := d.v.(type) {
	case []byte:
		return base64.StdEncoding.EncodedLen(len(v))
	case string:
		return len(v)
	}
	return 0
}

// encodeValue writes a scanned value as JSON, with its storage type: integers and reals as
// numbers (an infinite real as the string "Infinity" or "-Infinity", which JSON has no
// number for), text as a string (invalid UTF-8 replaced, as the official SDKs decode it),
// a blob as {type:"blob", base64, byteLength}, a time (drivers that parse declared DATETIME
// columns) as RFC 3339 text.
func encodeValue(v any) (string, jsontext.Value) {
	quote := func(s string) jsontext.Value {
		b, _ := jsontext.AppendQuote(nil, strings.ToValidUTF8(s, "\uFFFD"))
		return b
	}
	switch v := v.(type) {
	case nil:
		return "null", jsontext.Value("null")
	case int64:
		return "integer", jsontext.Value(strconv.FormatInt(v, 10))
	case bool:
		if v {
			return "integer", jsontext.Value("1")
		}
		return "integer", jsontext.Value("0")
	case float64:
		switch {
		case math.IsInf(v, 1):
			return "real", quote("Infinity")
		case math.IsInf(v, -1):
			return "real", quote("-Infinity")
		case math.IsNaN(v):
			return "real", jsontext.Value("null")
		}
		return "real", jsontext.Value(strconv.FormatFloat(v, 'g', -1, 64))
	case string:
		return "text", quote(v)
	case []byte:
		return "blob", jsontext.Value(fmt.Sprintf(`{"type":"blob","base64":"%s","byteLength":%d}`, base64.StdEncoding.EncodeToString(v), len(v)))
	case time.Time:
		return "text", quote(v.Format(time.RFC3339Nano))
	}
	return "unknown", quote(fmt.Sprint(v))
}
