package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// cond is one optional filter: SQL with a %d (or %[1]d) verb for the placeholder number, and
// its argument; an empty string argument leaves the filter out.
type cond struct {
	sql string
	arg string
}

// whereClause builds "WHERE alias.workspace_id = $1 AND …" from the filters that are set.
func whereClause(alias, ws string, conds []cond) (string, []any) {
	var b strings.Builder
	b.WriteString(" WHERE ")
	if alias != "" {
		b.WriteString(alias + ".")
	}
	b.WriteString("workspace_id = $1")
	args := []any{ws}
	for _, c := range conds {
		if c.arg == "" {
			continue
		}
		args = append(args, c.arg)
		b.WriteString(" AND ")
		b.WriteString(fmt.Sprintf(c.sql, len(args)))
	}
	return b.String(), args
}

// partialCond is the condition of a filter on column, whose index (migration 00036) holds only
// the rows whose value is not common (most runs complete, most come from the API): a filter on
// another value says so beside it, so that the planner may use that index in a generic plan
// too (it cannot read the value off a parameter); a filter on common reads the index of all the
// workspace's rows, newest first, where most rows match.
func partialCond(column, value, common string) cond {
	if value == common {
		return cond{column + " = $%d", value}
	}
	return cond{column + " = $%d AND " + column + " <> '" + common + "'", value}
}

// likeEscaper escapes the LIKE wildcards (and the escape character itself) of user input so
// it matches literally; every LIKE built from input says ESCAPE '\' (both dialects).
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// likePattern is a case-insensitive substring pattern for a free-text filter (lowercase: use it
// against lower(column)); "" for no filter.
func likePattern(q string) string {
	q = strings.TrimSpace(q)
	if q == "" {
		return ""
	}
	return "%" + strings.ToLower(likeEscaper.Replace(q)) + "%"
}

// jsonElementPattern matches a column holding a JSON array of strings (written by
// json.Marshal) that has v as one element; "" for no filter.
func jsonElementPattern(v string) string {
	if v == "" {
		return ""
	}
	b, _ := json.Marshal(v)
	return "%" + likeEscaper.Replace(string(b)) + "%"
}

// likeBoth matches a LIKE pattern against either of two columns, case-insensitively.
func likeBoth(col1, col2 string) string {
	return "(lower(" + col1 + `) LIKE $%[1]d ESCAPE '\' OR lower(` + col2 + `) LIKE $%[1]d ESCAPE '\')`
}

// pageClause ends a list query that orders newest first (id breaks ties) and limits it to the
// page; its WHERE clause is already written, and args are its arguments. A page that follows
// a cursor (p.After) starts after the cursor's row, read off the index like the first page;
// otherwise it skips the rows of the pages before it. LIMIT and OFFSET are written as integer
// literals: SQLite re-prepares a statement whose LIMIT is a bound parameter on every
// execution, which costs more than the whole query.
func pageClause(alias string, p domain.Page, args []any) (string, []any) {
	if alias != "" {
		alias += "."
	}
	var after string
	if p.After != nil {
		args = append(args, p.After.CreatedAt, p.After.ID)
		after = fmt.Sprintf(" AND (%[1]screated_at, %[1]sid) < ($%[2]d, $%[3]d)", alias, len(args)-1, len(args))
		p.Page = 1
	}
	return after + fmt.Sprintf(" ORDER BY %[1]screated_at DESC, %[1]sid DESC", alias) + limitClause(p), args
}

// pagedSelect is the query of one page of table (newest first, see pageClause). A page deep
// in the list finds its ids on the index alone, then reads just those rows: skipping 100,000
// rows costs an index walk, not 100,000 row reads (BenchmarkHistory, page 5,000).
func pagedSelect(cols, table, where string, args []any, p domain.Page) (string, []any) {
	if p.After != nil {
		page, args := pageClause("", p, args)
		return "SELECT " + cols + " FROM " + table + where + page, args
	}
	return offsetSelect(cols, table, where, p.Limit, pageOffset(p)), args
}

// offsetSelect is the query of limit rows of table (newest first) after the first offset
// rows that where selects; see pagedSelect.
func offsetSelect(cols, table, where string, limit, offset int) string {
	page := newestFirst + limitAt(limit, offset)
	if offset <= 0 {
		return "SELECT " + cols + " FROM " + table + where + page
	}
	return "SELECT " + cols + " FROM " + table + " WHERE workspace_id = $1 AND id IN (SELECT id FROM " + table + where + page + ")" + newestFirst
}

func limitClause(p domain.Page) string { return limitAt(p.Limit, pageOffset(p)) }

func limitAt(limit, offset int) string {
	return fmt.Sprintf(" LIMIT %d OFFSET %d", max(limit, 0), max(offset, 0))
}

// claimDue takes up to limit pending rows of table (an outbox: webhook deliveries,
// judgments) due at now for one attempt by node: each gets its attempt counted and a lease of
// the given length (on the database's clock), during which no other node takes it. It
// returns the columns ret of the rows, scanned by scan; what names the rows in errors.
func claimDue[T any](ctx context.Context, s *Store, table, what, ret string, node string, now time.Time, lease time.Duration, limit int,
	scan func(interface{ Scan(...any) error }) (*T, error)) ([]*T, error) {
	// Most polls find nothing due: a read says so without a write (which would also move
	// the store's Generation, and with it the emulator's read cache, every poll).
	var one int
	err := s.r.QueryRowContext(ctx, "SELECT 1 FROM "+table+" WHERE status = 'pending' AND next_attempt_at <= $1 LIMIT 1",
		now.UnixMilli()).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look for due %s: %w", what, err)
	}
	free := "(lease_expires_at IS NULL OR lease_expires_at < " + s.nowMS() + ")"
	pick := fmt.Sprintf(`SELECT id FROM %s WHERE status = 'pending' AND next_attempt_at <= $1 AND %s
		ORDER BY next_attempt_at, id LIMIT %d`, table, free, max(limit, 1))
	if s.dialect == Postgres {
		pick += " FOR UPDATE SKIP LOCKED"
	}
	// The conditions are checked again on the row itself: under READ COMMITTED a row another
	// node claimed between the pick and the update is skipped, not taken twice.
	ctx = context.WithoutCancel(ctx) // a claim is never left half done
	rows, err := s.w.QueryContext(ctx, `UPDATE `+table+` SET attempts = attempts + 1, lease_owner = $2,
		lease_expires_at = `+s.nowMS()+` + $3, updated_at = $4
		WHERE id IN (`+pick+`) AND status = 'pending' AND next_attempt_at <= $1 AND `+free+`
		RETURNING `+ret, now.UnixMilli(), node, lease.Milliseconds(), domain.Now())
	if err != nil {
		return nil, fmt.Errorf("claim %s: %w", what, err)
	}
	return collect(rows, scan)
}

// getByID returns the row id of the workspace's table, scanned by scan; none is a
// *NotFoundError naming resource.
func getByID[T any](ctx context.Context, s *Store, resource, table, cols, ws, id string,
	scan func(interface{ Scan(...any) error }) (*T, error)) (*T, error) {
	v, err := scan(s.r.QueryRowContext(ctx, "SELECT "+cols+" FROM "+table+" WHERE workspace_id = $1 AND id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(resource, id)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s %s: %w", resource, id, err)
	}
	return v, nil
}

// listPage returns one page of the rows of table that match where (with args), newest
// first, scanned by scan, and the list's total (see listCount). countOrder follows where in
// the count: newestFirst on the history tables, else "".
func listPage[T any](ctx context.Context, s *Store, table, cols, where string, args []any, countOrder string, p domain.Page,
	scan func(interface{ Scan(...any) error }) (*T, error)) ([]*T, int, error) {
	q, qargs := pagedSelect(cols, table, where, args, p)
	return listQuery(ctx, s, table, q, qargs, table+where+countOrder, args, p, scan)
}

// listQuery runs q (with qargs), one page of a list of table, and counts the list's rows of
// from (a table, its WHERE clause and order, with args; see listCount).
func listQuery[T any](ctx context.Context, s *Store, table, q string, qargs []any, from string, args []any, p domain.Page,
	scan func(interface{ Scan(...any) error }) (*T, error)) ([]*T, int, error) {
	rows, err := s.r.QueryContext(ctx, q, qargs...)
	if err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", table, err)
	}
	items, err := collect(rows, scan)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), from, args)
	return items, total, err
}

// newestFirst is the order of most lists. Given to listCount after a history table's WHERE
// clause, it makes PostgreSQL count along the index that serves the list (the planner
// otherwise reads the table from its start until it has seen enough of the workspace's rows,
// which on a shared table can be most of the table: TestHistoryReadsUseIndexes).
const newestFirst = " ORDER BY created_at DESC, id DESC"

// listCount returns the total for a list whose page holds n items of the rows of from (a
// table, its joins and its WHERE clause, with args): when the page is the last one (not full)
// the total is known without counting; otherwise the rows are counted up to TotalCap + 1, on
// the list's index alone where its columns cover the filter (TestHistoryReadsUseIndexes).
func (s *Store) listCount(ctx context.Context, p domain.Page, n int, from string, args []any) (int, error) {
	if n < p.Limit && (n > 0 || p.Page == 1) {
		return pageOffset(p) + n, nil
	}
	c, err := s.count(ctx, fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM %s LIMIT %d) c", from, domain.TotalCap+1), args)
	if err != nil || c <= domain.TotalCap {
		return c, err
	}
	return max(c, pageOffset(p)+n), nil
}

func (s *Store) count(ctx context.Context, q string, args []any) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	return n, nil
}

// collect scans every row and closes rows.
func collect[T any](rows *sql.Rows, scan func(interface{ Scan(...any) error }) (*T, error)) ([]*T, error) {
	defer rows.Close()
	out := []*T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// set is one column of an update. val is a pointer; nil leaves the column out. A pointer to
// jsonArg stores its value as JSON text.
type set struct {
	col string
	val any
}

// jsonArg stores a value as JSON text in an update.
type jsonArg struct{ v any }

func setClause(sets []set) ([]string, []any, error) {
	var cols []string
	var args []any
	for _, s := range sets {
		rv := reflect.ValueOf(s.val)
		if rv.Kind() != reflect.Pointer {
			panic("store: set value must be a pointer")
		}
		if rv.IsNil() {
			continue
		}
		v := rv.Elem().Interface()
		if j, ok := v.(jsonArg); ok {
			text, err := jsonValue(j.v)
			if err != nil {
				return nil, nil, fmt.Errorf("encode %s: %w", s.col, err)
			}
			v = text
		}
		args = append(args, v)
		cols = append(cols, fmt.Sprintf("%s = $%d", s.col, len(args)))
	}
	return cols, args, nil
}

// update writes the given columns (plus updated_at) of one row of the workspace.
func (s *Store) update(ctx context.Context, resource, table, ws, id string, sets []set) error {
	cols, args, err := setClause(sets)
	if err != nil {
		return err
	}
	args = append(args, domain.Now(), ws, id)
	cols = append(cols, fmt.Sprintf("updated_at = $%d", len(args)-2))
	q := fmt.Sprintf("UPDATE %s SET %s WHERE workspace_id = $%d AND id = $%d", table, strings.Join(cols, ", "), len(args)-1, len(args))
	res, err := s.exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("update %s %s: %w", resource, id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(resource, id)
	}
	return nil
}

func (s *Store) deleteRow(ctx context.Context, resource, table, ws, id string) error {
	res, err := s.exec(ctx, "DELETE FROM "+table+" WHERE workspace_id = $1 AND id = $2", ws, id)
	if err != nil {
		return fmt.Errorf("delete %s %s: %w", resource, id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(resource, id)
	}
	return nil
}

// deleteAsWas deletes the row id of table in one transaction and returns it as get read it
// first. before, when given, runs between the two: a check that refuses the delete (a
// *ConflictError naming what still uses the row) or the delete of rows that go with it.
func deleteAsWas[T any](ctx context.Context, s *Store, resource, table, ws, id string,
	get func(tx *Store, ctx context.Context, ws, id string) (T, error), before func(tx *Store, v T) error) (T, error) {
	var v T
	err := s.InTx(ctx, func(tx *Store) error {
		var err error
		if v, err = get(tx, ctx, ws, id); err != nil {
			return err
		}
		if before != nil {
			if err := before(tx, v); err != nil {
				return err
			}
		}
		return tx.deleteRow(ctx, resource, table, ws, id)
	})
	return v, err
}

// nextVersion advances the parent's version counter and returns the new number, in one
// statement so concurrent creators never get the same number. A wanted number (from seed
// data or fixtures) is used when it is past the counter.
func (s *Store) nextVersion(ctx context.Context, resource, table, ws, id string, wanted int) (int, error) {
	var n int
	err := s.w.QueryRowContext(ctx, "UPDATE "+table+` SET version_seq = CASE WHEN $1 > version_seq THEN $1 ELSE version_seq + 1 END,
		updated_at = $2 WHERE workspace_id = $3 AND id = $4 RETURNING version_seq`, wanted, domain.Now(), ws, id).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, notFound(resource, id)
	}
	if err != nil {
		return 0, fmt.Errorf("advance version counter of %s %s: %w", resource, id, err)
	}
	return n, nil
}

// missingIDs returns those of ids that are not rows of table in the workspace, in order.
func (s *Store) missingIDs(ctx context.Context, table, ws string, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := []any{ws}
	ph := make([]string, len(ids))
	for i, id := range ids {
		args = append(args, id)
		ph[i] = fmt.Sprintf("$%d", i+2)
	}
	rows, err := s.r.QueryContext(ctx, "SELECT id FROM "+table+" WHERE workspace_id = $1 AND id IN ("+strings.Join(ph, ", ")+")", args...)
	if err != nil {
		return nil, fmt.Errorf("check %s ids: %w", table, err)
	}
	defer rows.Close()
	found := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		found[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var missing []string
	for _, id := range ids {
		if !found[id] {
			missing = append(missing, id)
		}
	}
	return missing, nil
}
