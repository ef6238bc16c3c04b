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
	switch d.ReadOnly {
	case QueryOnly:
		return queryOnly(ctx, d.DB, f)
	case Transaction:
		tx, err := d.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer tx.Rollback() // a read-only transaction has nothing to keep
		return f(ctx, tx)
	}
	return f(ctx, d.DB) // Opened (the database refuses writes) or Unprotected (critical)
}

// queryOnly runs f on a connection of db with PRAGMA query_only switched on, then switches
// it back to what it was before the connection returns to the app's pool; a connection
// that cannot be put back so is discarded, never returned writable-when-it-was-not or
// read-only to an app that writes through it.
func queryOnly(ctx context.Context, db *sql.DB, f func(ctx context.Context, q Querier) error) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var was int
	if err := conn.QueryRowContext(ctx, "PRAGMA query_only").Scan(&was); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA query_only = 1"); err != nil {
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
			_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // discarded on Close
		}
	}()
	return f(ctx, conn)
}
