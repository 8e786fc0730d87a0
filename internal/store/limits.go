package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
)

// AgentCount returns how many agents the workspace holds (for plan limits).
func (s *Store) AgentCount(ctx context.Context, ws string) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM agents WHERE workspace_id = $1", ws).Scan(&n); err != nil {
		return 0, fmt.Errorf("count agents of workspace %s: %w", ws, err)
	}
	return n, nil
}

// ExecutionCount returns how many executions of the workspace were created at or after since
// (all of them when since is zero) and, when statuses is not empty, are in one of them.
func (s *Store) ExecutionCount(ctx context.Context, ws string, since domain.Time, statuses []string) (int, error) {
	var b strings.Builder
	b.WriteString("SELECT count(*) FROM executions WHERE workspace_id = $1")
	args := []any{ws}
	if !since.IsZero() {
		args = append(args, since)
		b.WriteString(" AND created_at >= $" + strconv.Itoa(len(args)))
	}
	if len(statuses) > 0 {
		b.WriteString(" AND status IN (")
		for i, st := range statuses {
			args = append(args, st)
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("$" + strconv.Itoa(len(args)))
		}
		b.WriteString(")")
		if !slices.Contains(statuses, domain.StatusCompleted) {
			// The partial index of the statuses but completed (migration 00036), in a generic
			// plan too: the planner cannot read the statuses off the parameters.
			b.WriteString(" AND status <> 'completed'")
		}
	}
	var n int
	if err := s.r.QueryRowContext(ctx, b.String(), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count executions of workspace %s: %w", ws, err)
	}
	return n, nil
}

// PlanLock serializes the plan checks of workspace ws until the caller's transaction ends, so
// that a count and the insert it allows are one atomic step and simultaneous requests never
// overshoot a limit. PostgreSQL takes a transaction-scoped advisory lock on the workspace;
// SQLite needs none, its write transactions (BEGIN IMMEDIATE) already running one at a time.
func (s *Store) PlanLock(ctx context.Context, ws string) error {
	if !s.inTx {
		return errors.New("plan lock: must be called inside InTx")
	}
	if s.dialect != Postgres {
		return nil
	}
	if _, err := s.exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "agentplane plan "+ws); err != nil {
		return fmt.Errorf("lock plan of workspace %s: %w", ws, err)
	}
	return nil
}

// rateTakeSQL is, per dialect, one statement that refills a token bucket by the time elapsed
// on the database's clock and takes from it, so every node sees one bucket and no two takes
// interleave. $1 is the bucket, $2 the rate (tokens per second), $3 the burst (the bucket's
// size), $4 the tokens wanted (negative: given back). A new bucket starts full. In ON CONFLICT
// … DO UPDATE every expression reads the row as it was, and excluded.updated_at is now; the
// refilled level ("avail") is written out where it is needed, as SQL has no local variables.
var rateTakeSQL = map[Dialect]string{
	Postgres: `INSERT INTO rate_buckets AS b (key, tokens, granted, updated_at, full_at)
VALUES ($1, $3::float8 - GREATEST(0, LEAST($4::bigint, $3::float8)), LEAST($4::bigint, $3::float8),
	extract(epoch from clock_timestamp()), extract(epoch from clock_timestamp()) + GREATEST(0, LEAST($4::bigint, $3::float8)) / $2::float8)
ON CONFLICT (key) DO UPDATE SET
	granted = CASE WHEN $4::bigint < 0 THEN $4::bigint
		ELSE LEAST($4::bigint, floor(LEAST($3::float8, b.tokens + GREATEST(0, excluded.updated_at - b.updated_at) * $2::float8))::bigint) END,
	tokens = LEAST($3::float8, LEAST($3::float8, b.tokens + GREATEST(0, excluded.updated_at - b.updated_at) * $2::float8)
		- CASE WHEN $4::bigint < 0 THEN $4::bigint
		ELSE LEAST($4::bigint, floor(LEAST($3::float8, b.tokens + GREATEST(0, excluded.updated_at - b.updated_at) * $2::float8))::bigint) END),
	updated_at = GREATEST(b.updated_at, excluded.updated_at),
	full_at = GREATEST(b.updated_at, excluded.updated_at) + ($3::float8 - LEAST($3::float8,
		LEAST($3::float8, b.tokens + GREATEST(0, excluded.updated_at - b.updated_at) * $2::float8)
		- CASE WHEN $4::bigint < 0 THEN $4::bigint
		ELSE LEAST($4::bigint, floor(LEAST($3::float8, b.tokens + GREATEST(0, excluded.updated_at - b.updated_at) * $2::float8))::bigint) END)) / $2::float8
RETURNING granted, tokens`,
	// SQLite: min/max for LEAST/GREATEST, and CAST AS INTEGER for floor (the level is never
	// negative, and truncation is floor there).
	SQLite: `INSERT INTO rate_buckets AS b (key, tokens, granted, updated_at, full_at)
VALUES ($1, $3 - max(0, min($4, $3)), min($4, $3),
	(julianday('now') - 2440587.5) * 86400.0, (julianday('now') - 2440587.5) * 86400.0 + max(0, min($4, $3)) / CAST($2 AS REAL))
ON CONFLICT (key) DO UPDATE SET
	granted = CASE WHEN $4 < 0 THEN $4
		ELSE min($4, CAST(min($3, b.tokens + max(0, excluded.updated_at - b.updated_at) * $2) AS INTEGER)) END,
	tokens = min($3, min($3, b.tokens + max(0, excluded.updated_at - b.updated_at) * $2)
		- CASE WHEN $4 < 0 THEN $4
		ELSE min($4, CAST(min($3, b.tokens + max(0, excluded.updated_at - b.updated_at) * $2) AS INTEGER)) END),
	updated_at = max(b.updated_at, excluded.updated_at),
	full_at = max(b.updated_at, excluded.updated_at) + ($3 - min($3,
		min($3, b.tokens + max(0, excluded.updated_at - b.updated_at) * $2)
		- CASE WHEN $4 < 0 THEN $4
		ELSE min($4, CAST(min($3, b.tokens + max(0, excluded.updated_at - b.updated_at) * $2) AS INTEGER)) END)) / CAST($2 AS REAL)
RETURNING granted, tokens`,
}

// RateTake takes up to n tokens from the shared token bucket key, which holds at most burst
// tokens and refills at rate per second by the database's clock (a bucket not seen before
// is full); a negative n gives -n tokens back. It returns how many tokens it got (0 when the
// bucket is empty) and how many are left. rate must be positive.
func (s *Store) RateTake(ctx context.Context, key string, rate float64, burst, n int) (int, float64, error) {
	if rate <= 0 || burst < 1 {
		return 0, 0, fmt.Errorf("rate bucket %s: rate %v and burst %d must be positive", key, rate, burst)
	}
	var granted int64
	var left float64
	if err := s.w.QueryRowContext(ctx, rateTakeSQL[s.dialect], key, rate, burst, n).Scan(&granted, &left); err != nil {
		return 0, 0, fmt.Errorf("take from rate bucket %s: %w", key, err)
	}
	return int(max(granted, 0)), left, nil
}

// RateSweep deletes the buckets that are full again: a missing bucket is a full one, so
// this loses nothing and keeps the table to the buckets in use.
func (s *Store) RateSweep(ctx context.Context) (int64, error) {
	now := "extract(epoch from clock_timestamp())"
	if s.dialect == SQLite {
		now = "(julianday('now') - 2440587.5) * 86400.0"
	}
	res, err := s.exec(ctx, "DELETE FROM rate_buckets WHERE full_at <= "+now)
	if err != nil {
		return 0, fmt.Errorf("sweep rate buckets: %w", err)
	}
	return res.RowsAffected()
}
