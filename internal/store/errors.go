package store

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentplane/agentplane/internal/domain"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// NotFoundError says that a resource of the caller's workspace does not exist. Resources of
// other workspaces are reported the same way, so their existence is never revealed.
type NotFoundError struct {
	Resource string // "agent", "prompt version", …
	ID       string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %s not found", e.Resource, e.ID) }

// ConflictError says that a write would break a uniqueness or state rule.
type ConflictError struct{ Message string }

func (e *ConflictError) Error() string { return e.Message }

// ReferenceError says that a write names another resource that does not exist.
type ReferenceError struct {
	Field    string // the request field holding the reference, e.g. "config.tools[1]"
	Resource string
	ID       string
}

func (e *ReferenceError) Error() string {
	return fmt.Sprintf("%s: %s %s does not exist", e.Field, e.Resource, e.ID)
}

// IsNotFound reports whether err is or wraps a *NotFoundError.
func IsNotFound(err error) bool {
	var nf *NotFoundError
	return errors.As(err, &nf)
}

func notFound(resource, id string) error { return &NotFoundError{Resource: resource, ID: id} }

// pgUniqueViolation is PostgreSQL's SQLSTATE for a unique (or primary key) violation.
const pgUniqueViolation = "23505"

// isUniqueViolation recognises a unique-constraint failure on either dialect by its error
// code: SQLSTATE 23505 on PostgreSQL; on SQLite the extended result codes of a UNIQUE or
// PRIMARY KEY constraint (modernc's driver turns extended codes on for every connection).
func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == pgUniqueViolation
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		c := lite.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// isDeadlock recognises PostgreSQL's deadlock_detected (SQLSTATE 40P01): the transaction was
// aborted to break a cycle of lock waits and may be run again.
func isDeadlock(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "40P01"
}

// ValidationError says a well-formed value is not acceptable; Field names it. It is the one
// field-error type of the code base, domain.FieldError, under the name the store's callers know.
type ValidationError = domain.FieldError
