package data

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"time"
)

// restoreTimeout bounds putting a connection back as the app had it (PRAGMA query_only).
const restoreTimeout = 5 * time.Second

// readOnly runs f on a connection of d that refuses writes, the way d's ReadOnly mode says,
// within the query timeout (f's context ends with it). Everything f reads must be read
// before it returns.
func (s *set) readOnly(ctx context.Context, d *database, f func(ctx context.Context, q Querier) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	switch {
	case d.ReadOnly == Transaction:
		tx, err := d.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer tx.Rollback() // a read-only transaction has nothing to keep
		return f(ctx, tx)
	case d.ReadOnly == QueryOnly || d.Limit != nil:
		// A connection of the tools' own while they change its settings: the app's
		// statements never run on it meanwhile.
		conn, err := d.DB.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if d.Limit != nil {
			before, err := d.Limit(conn, sqliteLimitLength, s.opts.MaxResultBytes)
			if err != nil {
				return err
			}
			defer func() {
				// Put back as it was, or never returned to the app's pool with the tools' limit.
				if _, err := d.Limit(conn, sqliteLimitLength, before); err != nil {
					discard(conn)
				}
			}()
		}
		if d.ReadOnly == QueryOnly {
			return queryOnly(ctx, conn, f)
		}
		return f(ctx, conn)
	}
	return f(ctx, d.DB) // Opened (the database refuses writes) or Unprotected (critical)
}

// sqliteLimitLength is SQLITE_LIMIT_LENGTH: the id of sqlite3_limit's bound on the length
// of a string or blob.
const sqliteLimitLength = 0

// queryOnly runs f on conn with PRAGMA query_only switched on, then switches it back to
// what it was before the connection returns to the app's pool; a connection that cannot
// be put back so is discarded, never returned writable-when-it-was-not or read-only to an
// app that writes through it.
func queryOnly(ctx context.Context, conn *sql.Conn, f func(ctx context.Context, q Querier) error) (err error) {
	var was int
	if err := conn.QueryRowContext(ctx, "PRAGMA query_only").Scan(&was); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA query_only = 1"); err != nil {
		// The switch may have taken effect all the same (the call's context ending as the
		// statement completes reports an error for it): a connection in a state not known
		// never returns to the pool.
		discard(conn)
		return err
	}
	defer func() {
		// The call's context may have ended: the restore gets one of its own.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
		defer cancel()
		restore := "PRAGMA query_only = 0"
		if was != 0 {
			restore = "PRAGMA query_only = 1"
		}
		if _, rerr := conn.ExecContext(rctx, restore); rerr != nil {
			discard(conn)
		}
	}()
	return f(ctx, conn)
}

// discard marks conn broken: database/sql closes it on Close instead of returning it to
// the pool.
func discard(conn *sql.Conn) { _ = conn.Raw(func(any) error { return driver.ErrBadConn }) }
