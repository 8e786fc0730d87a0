package datasource

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// Executor runs read-only queries against a workspace's data sources. It is the seam between
// the API (and, later, the engine's data-source tools) and the data: Live connects to the real
// databases and HTTP APIs on `serve`; seed.Sample answers the emulator from generated sample tables.
type Executor interface {
	// Query runs req against the active version of data source id of workspace ws. A
	// *domain.FieldError names the request field at fault, a *QueryError carries the database's (or
	// the HTTP API's) refusal, a *SourceError says the data source cannot be queried as it is
	// configured, and a *store.NotFoundError that it does not exist.
	Query(ctx context.Context, ws, id string, req Request) (*Result, error)
	// Describe lists the tables and columns of a SQL data source as its catalog has them
	// (information_schema, sqlite_master), cached until its version or credential changes.
	// An http data source has none.
	Describe(ctx context.Context, ws, id string) ([]Table, error)
	// Close releases every connection; queries after it fail.
	Close() error
}

var _ Executor = (*Live)(nil)

// Request is one query against a data source.
type Request struct {
	// Query is one SQL statement, or for http sources a path relative to base_url.
	Query string
	// Params are bound, never interpolated: nil, []any (positional: $1… on PostgreSQL, ? on
	// MySQL, ? / ?NNN / $NNN on SQLite) or map[string]any (named, SQLite's :name and
	// @name; for http sources the query string or JSON body). Numbers may be json.Number.
	Params any
	// Limit is the most rows to return, at most the config's max_rows; 0 means max_rows.
	Limit int
}

// Column names and types one column of a result set.
type Column struct {
	Name string
	Type string
}

// Result is a query's result set, cut to the row and byte bounds.
type Result struct {
	Columns []Column
	// Rows hold JSON-ready values in column order (see the package's value mapping).
	Rows [][]any
	// Truncated says rows were left out: more matched than the row bound, or the next row
	// would have taken the result past max_bytes.
	Truncated bool
}

// QueryError is a query the data source ran and refused or failed: a write in the read-only
// transaction, a syntax error, a missing table, a timeout, an HTTP API's 4xx. Message is the
// data source's own message; the API answers 422 naming query.
type QueryError struct {
	Message string
	// Timeout says the query ran out of time (max_execution_ms or timeout_ms).
	Timeout bool
}

func (e *QueryError) Error() string { return "query: " + e.Message }

// SourceError says the data source cannot be queried as it is: no usable credential or
// connection settings (the API answers 409), or, with Unreachable, the database or API could
// not be reached or failed on its side (502).
type SourceError struct {
	Message     string
	Unreachable bool
}

func (e *SourceError) Error() string { return e.Message }

func sourceErr(format string, args ...any) *SourceError {
	return &SourceError{Message: fmt.Sprintf(format, args...)}
}

func unreachable(ds *domain.DataSource, err error) *SourceError {
	return &SourceError{Message: fmt.Sprintf("data source %s could not be reached: %v", ds.ID, err), Unreachable: true}
}

// RowBound returns how many rows a query may return: the request's limit, which must not
// exceed the config's max_rows, or max_rows itself.
func RowBound(cfg *Config, limit int) (int, error) {
	switch {
	case limit < 0 || limit > cfg.MaxRows:
		return 0, domain.Invalid("limit", "must be from 1 to %d (the data source's max_rows)", cfg.MaxRows)
	case limit == 0:
		return cfg.MaxRows, nil
	}
	return limit, nil
}

// Load reads the data source and parses its active version's config.
func Load(ctx context.Context, st *store.Store, ws, id string) (*domain.DataSource, *Config, error) {
	ds, err := st.DataSourceGet(ctx, ws, id)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := ParseConfig(ds.Type, ds.Config)
	if err != nil {
		return nil, nil, sourceErr("the active version of data source %s has an invalid config (%v); create and promote a corrected version", ds.ID, err)
	}
	return ds, cfg, nil
}

// Prepare checks a request against its data source before anything runs.
func Prepare(cfg *Config, req Request) (int, error) {
	bound, err := RowBound(cfg, req.Limit)
	if err != nil {
		return 0, err
	}
	if strings.TrimSpace(req.Query) == "" {
		if cfg.Type == "http" {
			return 0, domain.Invalid("query", "is required: give a path such as /items?limit=10")
		}
		return 0, domain.Invalid("query", "is required: give one SQL statement")
	}
	if len(req.Query) > maxQueryBytes {
		return 0, domain.Invalid("query", "must be at most %d bytes", maxQueryBytes)
	}
	return bound, nil
}

const (
	maxQueryBytes = 100000
	maxParams     = 1000
)

// bindArgs turns a request's params into driver arguments for a SQL dialect. PostgreSQL gets
// every scalar as text, which it converts to the type the query needs ($1 compared with an
// integer column, LIMIT $1, …); MySQL and SQLite get numbers as int64 or float64. Objects and
// arrays inside params are bound as their JSON text.
func bindArgs(dialect string, params any) ([]any, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case []any:
		if len(p) > maxParams {
			return nil, domain.Invalid("params", "must hold at most %d values", maxParams)
		}
		out := make([]any, len(p))
		for i, v := range p {
			a, err := bindValue(dialect, v)
			if err != nil {
				return nil, domain.Invalid(fmt.Sprintf("params[%d]", i), "%s", err.Error())
			}
			out[i] = a
		}
		return out, nil
	case map[string]any:
		if dialect != "sqlite" {
			return nil, domain.Invalid("params", "must be an array: %s binds parameters by position (%s)", dialect, placeholders(dialect))
		}
		if len(p) > maxParams {
			return nil, domain.Invalid("params", "must hold at most %d values", maxParams)
		}
		out := make([]any, 0, len(p))
		for k, v := range p {
			name := strings.TrimLeft(k, ":@$")
			if name == "" || strings.ContainsFunc(name, func(r rune) bool {
				return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
			}) {
				return nil, domain.Invalid("params."+k, "is not a parameter name (letters, digits and _)")
			}
			a, err := bindValue(dialect, v)
			if err != nil {
				return nil, domain.Invalid("params."+k, "%s", err.Error())
			}
			out = append(out, sql.Named(name, a))
		}
		return out, nil
	}
	return nil, domain.Invalid("params", "must be an array or an object")
}

func placeholders(dialect string) string {
	if dialect == "postgres" {
		return "$1, $2, …"
	}
	return "?"
}

func bindValue(dialect string, v any) (any, error) {
	switch x := v.(type) {
	case nil, string:
		return x, nil
	case bool:
		if dialect == "postgres" {
			return strconv.FormatBool(x), nil
		}
		return x, nil
	case json.Number:
		if dialect == "postgres" {
			return x.String(), nil
		}
		if n, err := x.Int64(); err == nil {
			return n, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, errors.New("is not a number")
		}
		return f, nil
	case float64:
		if dialect == "postgres" {
			return strconv.FormatFloat(x, 'f', -1, 64), nil
		}
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), nil
		}
		return x, nil
	case int:
		return bindValue(dialect, json.Number(strconv.Itoa(x)))
	case int64:
		return bindValue(dialect, json.Number(strconv.FormatInt(x, 10)))
	case map[string]any, []any:
		b, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		return string(b), nil
	}
	return nil, fmt.Errorf("cannot bind a %T", v)
}
