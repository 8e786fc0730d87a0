package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// UsageBreakdown sums the usage rollups of migration 00032 (kept by triggers as runs end, never
// read from the executions) per key of one dimension over a window, the costliest first, at
// most f.Limit groups; the second result counts every group of the window.
func (s *Store) UsageBreakdown(ctx context.Context, ws string, f domain.UsageFilter) ([]*domain.UsageGroup, int, error) {
	period := f.Period.Milliseconds()
	if period != time.Hour.Milliseconds() && period != 24*time.Hour.Milliseconds() {
		return nil, 0, fmt.Errorf("usage breakdown: period %v is neither an hour nor a day", f.Period)
	}
	args := []any{ws, f.Dimension, period, f.From.UnixMilli() / period * period, f.To}
	where := "workspace_id = $1 AND dimension = $2 AND period = $3 AND period_start >= $4 AND period_start < $5"
	if f.AgentID != "" {
		args = append(args, f.AgentID)
		where += " AND agent_id = $6"
	}
	groups := []*domain.UsageGroup{}
	err := s.rollupRows(ctx, `SELECT key, CAST(sum(runs) AS BIGINT), CAST(sum(errors) AS BIGINT), CAST(sum(prompt_tokens) AS BIGINT),
		CAST(sum(completion_tokens) AS BIGINT), sum(cost)
		FROM usage_rollups WHERE `+where+` GROUP BY key HAVING sum(runs) > 0 ORDER BY sum(cost) DESC, sum(runs) DESC, key`, args,
		func(r *sql.Rows) error {
			g := &domain.UsageGroup{}
			var pt, ct int64
			if err := r.Scan(&g.Key, &g.Runs, &g.Errors, &pt, &ct, &g.Cost); err != nil {
				return err
			}
			g.TokenUsage = domain.TokenUsage{PromptTokens: int(pt), CompletionTokens: int(ct), TotalTokens: int(pt + ct)}
			groups = append(groups, g)
			return nil
		})
	if err != nil {
		return nil, 0, fmt.Errorf("usage breakdown: %w", err)
	}
	total := len(groups)
	if f.Limit > 0 && total > f.Limit {
		groups = groups[:f.Limit]
	}
	return groups, total, nil
}
