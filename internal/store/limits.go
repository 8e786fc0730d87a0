package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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
func (s *Store) ExecutionCount(ctx context.Context, ws string, since Time, statuses []string) (int, error) {
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
	}
	var n int
	if err := s.r.QueryRowContext(ctx, b.String(), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count executions of workspace %s: %w", ws, err)
	}
	return n, nil
}
