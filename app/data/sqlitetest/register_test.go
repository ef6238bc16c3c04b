package sqlitetest_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/data"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// otherDriver is a driver that is not SQLite: its one query reports whether it runs in a
// read-only transaction, so that a test sees what the tools ask of the driver.
type otherDriver struct{}

func (otherDriver) Open(string) (driver.Conn, error) { return &otherConn{}, nil }

type otherConn struct{ readOnly bool }

func (c *otherConn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (c *otherConn) Close() error                        { return nil }
func (c *otherConn) Begin() (driver.Tx, error)           { return c, nil }
func (c *otherConn) BeginTx(_ context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.readOnly = opts.ReadOnly
	return c, nil
}
func (c *otherConn) Commit() error   { c.readOnly = false; return nil }
func (c *otherConn) Rollback() error { c.readOnly = false; return nil }
func (c *otherConn) QueryContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Rows, error) {
	if strings.Contains(q, "sqlite_version") {
		return nil, errors.New("no such function: sqlite_version")
	}
	return &otherRows{readOnly: c.readOnly}, nil
}

type otherRows struct {
	readOnly bool
	done     bool
}

func (r *otherRows) Columns() []string { return []string{"readOnly"} }
func (r *otherRows) Close() error      { return nil }
func (r *otherRows) Next(dest []driver.Value) error {
	if r.done {
		return io.EOF
	}
	r.done = true
	dest[0] = r.readOnly
	return nil
}

var registerOther sync.Once

func otherDB(t *testing.T) *sql.DB {
	registerOther.Do(func() { sql.Register("ansight-test-other", otherDriver{}) })
	db, err := sql.Open("ansight-test-other", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	lite := notesDB(t, t.TempDir(), 1)
	other := otherDB(t)
	for name, dbs := range map[string][]data.Database{
		"no databases":                      nil,
		"no DB":                             {{Name: "a"}},
		"a name that is not plain":          {{Name: "my notes", DB: lite}},
		"two names":                         {{Name: "a", DB: lite}, {Name: "A", DB: lite}},
		"a driver that says nothing":        {{Name: "a", DB: other}},
		"SQLite in a read-only transaction": {{Name: "a", DB: lite, ReadOnly: data.Transaction}},
		"query_only for another driver":     {{Name: "a", DB: other, ReadOnly: data.QueryOnly}},
		"an unknown mode":                   {{Name: "a", DB: lite, ReadOnly: 99}},
	} {
		err := data.Register(app.New(app.Options{}), data.Options{Databases: dbs})
		if err == nil {
			t.Errorf("%s: registered", name)
		}
		if name == "a driver that says nothing" && !strings.Contains(err.Error(), "Unprotected") {
			t.Errorf("the refusal does not say how to opt in: %v", err)
		}
	}
}

// TestReadOnlyTransaction: a driver that honours sql.TxOptions.ReadOnly gets every
// statement in such a transaction.
func TestReadOnlyTransaction(t *testing.T) {
	t.Parallel()
	h := harness(t, data.Options{Databases: []data.Database{{Name: "pg", DB: otherDB(t), ReadOnly: data.Transaction}}})
	if r := query(t, h, `{"path":"pg","sql":"SELECT current_setting('transaction_read_only')"}`); string(r.Rows[0]) != `{"readOnly":1}` {
		t.Errorf("the statement ran outside a read-only transaction: %s", r.Rows[0])
	}
	// Another driver has no schema reader of its own.
	if e := h.Fail(data.DescribeSchemaToolID, `{"path":"pg"}`); reason(t, e) != "schema_unsupported" {
		t.Errorf("describe another driver: %v", e)
	}
}

// TestUnprotected: a database with no read-only mode makes data.query critical: hidden and
// refused unless the app exposes critical tools.
func TestUnprotected(t *testing.T) {
	t.Parallel()
	a := app.New(app.Options{})
	if err := data.Register(a, data.Options{Databases: []data.Database{{Name: "x", DB: otherDB(t), ReadOnly: data.Unprotected}}}); err != nil {
		t.Fatal(err)
	}
	h := apptest.New(t, a)
	r := h.Send(wire.TypeQuery, `{"detail":"index"}`)
	for _, e := range r.Catalog.Tools {
		if e.ID == data.QueryToolID {
			t.Errorf("data.query is published under the default guard (policy %s)", e.Policy)
		}
	}
	if e := h.Fail(data.QueryToolID, `{"path":"x","sql":"SELECT 1"}`); e.Code != wire.CodeExecutionDenied {
		t.Errorf("data.query under the default guard: %v", e)
	}
	if err := a.SetGuard(catalog.GuardFullAccess); err != nil {
		t.Fatal(err)
	}
	if r := query(t, h, `{"path":"x","sql":"SELECT 1"}`); len(r.Rows) != 1 {
		t.Errorf("data.query under full access: %+v", r)
	}
}
