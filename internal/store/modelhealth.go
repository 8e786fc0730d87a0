package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// HealthRead returns the state of those of keys that have one, and the database's clock.
func (s *Store) HealthRead(ctx context.Context, keys []string) (map[string]domain.HealthState, time.Time, error) {
	args := make([]any, len(keys))
	marks := make([]string, len(keys))
	for i, k := range keys {
		args[i], marks[i] = k, fmt.Sprintf("$%d", i+1)
	}
	q := "SELECT " + s.nowMS() + ", '', 0, 0"
	if len(keys) > 0 {
		q += " UNION ALL SELECT 0, key, failures, until_ms FROM model_health WHERE key IN (" + strings.Join(marks, ", ") + ")"
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read model health: %w", err)
	}
	defer rows.Close()
	out := map[string]domain.HealthState{}
	var now time.Time
	for rows.Next() {
		var nowMS, untilMS int64
		var key string
		var failures int
		if err := rows.Scan(&nowMS, &key, &failures, &untilMS); err != nil {
			return nil, time.Time{}, fmt.Errorf("read model health: %w", err)
		}
		if key == "" {
			now = time.UnixMilli(nowMS)
			continue
		}
		st := domain.HealthState{Failures: failures}
		if untilMS > 0 {
			st.Until = time.UnixMilli(untilMS)
		}
		out[key] = st
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, fmt.Errorf("read model health: %w", err)
	}
	return out, now, nil
}

// HealthFail counts a failure of key (see HealthFailure) and returns its new state, in one
// statement: nodes failing together each count.
func (s *Store) HealthFail(ctx context.Context, key string, f domain.HealthFailure) (domain.HealthState, error) {
	now := s.nowMS()
	// The next wait: Base at the threshold, then double the last one, at most Max.
	next := "CASE WHEN h.failures + 1 < CAST($2 AS BIGINT) THEN 0 WHEN h.backoff_ms = 0 THEN CAST($3 AS BIGINT) WHEN h.backoff_ms * 2 > CAST($4 AS BIGINT) THEN CAST($4 AS BIGINT) ELSE h.backoff_ms * 2 END"
	q := `INSERT INTO model_health AS h (key, failures, backoff_ms, until_ms)
		VALUES ($1, 1, CASE WHEN 1 < CAST($2 AS BIGINT) THEN 0 ELSE CAST($3 AS BIGINT) END, CASE WHEN 1 < CAST($2 AS BIGINT) THEN 0 WHEN CAST($5 AS BIGINT) > 0 THEN ` + now + ` + CAST($5 AS BIGINT) ELSE ` + now + ` + CAST($3 AS BIGINT) END)
		ON CONFLICT (key) DO UPDATE SET failures = h.failures + 1, backoff_ms = ` + next + `,
		until_ms = CASE WHEN h.failures + 1 < CAST($2 AS BIGINT) THEN h.until_ms WHEN CAST($5 AS BIGINT) > 0 THEN ` + now + ` + CAST($5 AS BIGINT) ELSE ` + now + ` + ` + next + ` END
		RETURNING failures, until_ms`
	var st domain.HealthState
	var untilMS int64
	err := s.w.QueryRowContext(ctx, q, key, int64(f.Threshold), f.Base.Milliseconds(), f.Max.Milliseconds(), f.RetryAfter.Milliseconds()).Scan(&st.Failures, &untilMS)
	if err != nil {
		return domain.HealthState{}, fmt.Errorf("record failure of %s: %w", key, err)
	}
	if untilMS > 0 {
		st.Until = time.UnixMilli(untilMS)
	}
	return st, nil
}

// HealthProbe claims the one probe of a key held off until a time now past: it holds the
// key off for lease more (other nodes keep skipping it) and reports true to the one caller
// that claimed it.
func (s *Store) HealthProbe(ctx context.Context, key string, threshold int, lease time.Duration) (bool, error) {
	now := s.nowMS()
	res, err := s.exec(ctx, `UPDATE model_health SET until_ms = `+now+` + CAST($1 AS BIGINT)
		WHERE key = $2 AND failures >= CAST($3 AS BIGINT) AND until_ms > 0 AND until_ms <= `+now, lease.Milliseconds(), key, int64(threshold))
	if err != nil {
		return false, fmt.Errorf("claim the probe of %s: %w", key, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// HealthClear forgets a key's failures (it answered).
func (s *Store) HealthClear(ctx context.Context, key string) error {
	if _, err := s.exec(ctx, "DELETE FROM model_health WHERE key = $1", key); err != nil {
		return fmt.Errorf("clear failures of %s: %w", key, err)
	}
	return nil
}
