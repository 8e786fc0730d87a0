package datasource

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// Read-only is enforced by the database, never by reading the SQL: every query runs in a
// read-only transaction with a statement timeout, on a connection of the data source's pool.
//   - PostgreSQL: BEGIN READ ONLY, then SET LOCAL statement_timeout (and search_path when
//     config.schema is set).
//   - MySQL and MariaDB: the session is made read-only (so that DDL, which commits the
//     transaction it is in, is refused too) with the statement timeout of the server's kind
//     (MySQL's max_execution_time in ms, MariaDB's max_statement_time in seconds), then START
//     TRANSACTION READ ONLY.
//   - SQLite: the file is opened read-only (mode=ro) with PRAGMA query_only, ATTACH is
//     disabled, and the query runs in a transaction; the timeout interrupts it.
// Rows are read up to the row and byte bounds; the statement is then cancelled and the
// transaction rolled back.

// SQLDB is one database/sql pool and how to run a query on it: Live's pools, and the
// emulator's sample databases (seed.Sample).
type SQLDB struct {
	db      *sql.DB
	dialect string // postgres, mysql, sqlite

	mu      sync.Mutex
	mariadb *bool   // mysql: which server this is, found on first use
	tables  []Table // Describe's answer, cached for the pool's life
}

// NewSQLDB runs queries of dialect on db, at most poolMaxOpen connections of it at a time.
func NewSQLDB(db *sql.DB, dialect string) *SQLDB {
	db.SetMaxOpenConns(poolMaxOpen)
	db.SetMaxIdleConns(poolMaxIdle)
	return &SQLDB{db: db, dialect: dialect}
}

// Close closes the pool.
func (p *SQLDB) Close() error { return p.db.Close() }

// Run executes req on the pool within the config's bounds.
func (p *SQLDB) Run(ctx context.Context, cfg *Config, req Request, bound int) (*Result, error) {
	args, err := bindArgs(p.dialect, req.Params)
	if err != nil {
		return nil, err
	}
	var res *Result
	err = p.inReadOnlyTx(ctx, cfg, func(ctx context.Context, tx *sql.Tx) error {
		qctx, cancel := context.WithCancel(ctx)
		defer cancel()
		rows, err := tx.QueryContext(qctx, req.Query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		res, err = readRows(rows, bound, cfg.MaxBytes, cancel)
		return err
	})
	return res, err
}

// inReadOnlyTx runs fn in a read-only transaction with the config's timeouts, and maps the
// errors: failing to connect or to set the transaction up is an unreachable *SourceError; an
// error of fn (the user's statement) a *QueryError with the database's message; running out
// of time a *QueryError saying so.
func (p *SQLDB) inReadOnlyTx(parent context.Context, cfg *Config, fn func(context.Context, *sql.Tx) error) error {
	ctx, cancel := context.WithTimeout(parent, timeoutFor(p.dialect, cfg))
	defer cancel()
	stage := "connect"
	err := func() error {
		conn, err := p.db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		stage = "begin"
		tx, err := p.begin(ctx, conn, cfg)
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep, and a cancelled query leaves nothing to roll back
		stage = "query"
		return fn(ctx, tx)
	}()
	switch {
	case err == nil:
		return nil
	case parent.Err() != nil:
		return parent.Err()
	case stage == "query" && ctx.Err() != nil:
		return &QueryError{Message: timeoutMessage(p.dialect, cfg), Timeout: true}
	case stage == "query":
		if qe := p.refusal(err, cfg); qe != nil {
			return qe
		}
		return &QueryError{Message: err.Error()}
	case ctx.Err() != nil:
		return &SourceError{Message: fmt.Sprintf("could not connect within %d ms", int(timeoutFor(p.dialect, cfg)/time.Millisecond)), Unreachable: true}
	case stage == "connect":
		return &SourceError{Message: "could not connect: " + err.Error(), Unreachable: true}
	}
	return &SourceError{Message: "could not start a read-only transaction: " + err.Error(), Unreachable: true}
}

// timeoutFor bounds a whole query. PostgreSQL and MySQL enforce max_execution_ms themselves
// (a clear message, and the server stops working), so the call gets a grace period beyond it;
// SQLite has no statement timeout, so its context is the timeout.
func timeoutFor(dialect string, cfg *Config) time.Duration {
	if dialect == "sqlite" && cfg.TimeoutMS == 0 {
		return time.Duration(cfg.MaxExecutionMS) * time.Millisecond
	}
	return time.Duration(cfg.Timeout()) * time.Millisecond
}

// timeoutMessage says which bound a query whose context ran out hit.
func timeoutMessage(dialect string, cfg *Config) string {
	if dialect == "sqlite" && cfg.TimeoutMS == 0 {
		return fmt.Sprintf("timed out after %d ms (config.max_execution_ms)", cfg.MaxExecutionMS)
	}
	return fmt.Sprintf("timed out after %d ms (config.timeout_ms)", cfg.Timeout())
}

// begin opens the read-only transaction with the statement timeout.
func (p *SQLDB) begin(ctx context.Context, conn *sql.Conn, cfg *Config) (*sql.Tx, error) {
	switch p.dialect {
	case "postgres":
		tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return nil, err
		}
		q := "SELECT set_config('statement_timeout', $1, true)"
		args := []any{strconv.Itoa(cfg.MaxExecutionMS)}
		if cfg.Schema != "" {
			q += ", set_config('search_path', $2, true)"
			args = append(args, QuoteIdent(cfg.Schema))
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			tx.Rollback() //nolint:errcheck
			return nil, err
		}
		return tx, nil
	case "mysql":
		mariadb, err := p.isMariaDB(ctx, conn)
		if err != nil {
			return nil, err
		}
		set := fmt.Sprintf("SET SESSION transaction_read_only = 1, max_execution_time = %d", cfg.MaxExecutionMS)
		if mariadb {
			set = fmt.Sprintf("SET SESSION tx_read_only = 1, max_statement_time = %.3f", float64(cfg.MaxExecutionMS)/1000)
		}
		if _, err := conn.ExecContext(ctx, set); err != nil {
			return nil, err
		}
		return conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	}
	// sqlite: the file is read-only and query_only is set on every connection (see openSQLite).
	if _, err := sqlite.Limit(conn, sqliteLimitAttached, 0); err != nil {
		return nil, err
	}
	return conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
}

// sqliteLimitAttached is SQLITE_LIMIT_ATTACHED: with 0, ATTACH fails.
const sqliteLimitAttached = 7

func (p *SQLDB) isMariaDB(ctx context.Context, conn *sql.Conn) (bool, error) {
	p.mu.Lock()
	known := p.mariadb
	p.mu.Unlock()
	if known != nil {
		return *known, nil
	}
	var version string
	if err := conn.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return false, err
	}
	mariadb := strings.Contains(strings.ToLower(version), "mariadb")
	p.mu.Lock()
	p.mariadb = &mariadb
	p.mu.Unlock()
	return mariadb, nil
}

// refusal maps the database's own errors to a *QueryError: timeouts by their codes, anything
// else with the database's message.
func (p *SQLDB) refusal(err error, cfg *Config) *QueryError {
	timeout := &QueryError{Message: fmt.Sprintf("timed out after %d ms (config.max_execution_ms)", cfg.MaxExecutionMS), Timeout: true}
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	var se *sqlite.Error
	switch {
	case errors.As(err, &pe):
		if pe.Code == "57014" { // query_canceled: statement_timeout
			return timeout
		}
		msg := pe.Message
		if pe.Detail != "" {
			msg += " (" + pe.Detail + ")"
		}
		return &QueryError{Message: msg + " (SQLSTATE " + pe.Code + ")"}
	case errors.As(err, &me):
		if me.Number == 1969 || me.Number == 3024 { // MariaDB max_statement_time, MySQL max_execution_time
			return timeout
		}
		return &QueryError{Message: me.Message + fmt.Sprintf(" (error %d)", me.Number)}
	case errors.As(err, &se):
		return &QueryError{Message: se.Error()}
	}
	return nil
}

// QuoteIdent quotes a SQL identifier with double quotes.
func QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
