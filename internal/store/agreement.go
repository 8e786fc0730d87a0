package store

import (
	"context"
	"fmt"
)

// ScorePair is what two score names say of one execution: the latest score of each.
type ScorePair struct {
	ExecutionID            string
	JudgeType, HumanType   string
	JudgeValue, HumanValue *float64
	JudgeLabel, HumanLabel *string
}

// MaxScorePairs bounds the executions ScorePairs reads (the most recently scored first).
const MaxScorePairs = 100_000

// ScorePairs returns, for every execution of the workspace that has scores of both names, the
// latest score of each (a score re-given replaces the one before): the pairs an agreement is
// computed over. judgeSource and humanSource, when set, only take scores of that source.
func (s *Store) ScorePairs(ctx context.Context, ws, judge, judgeSource, human, humanSource string) ([]ScorePair, error) {
	latest := `SELECT execution_id, data_type, value, string_value, created_at FROM (
		SELECT execution_id, data_type, value, string_value, created_at,
			ROW_NUMBER() OVER (PARTITION BY execution_id ORDER BY created_at DESC, id DESC) AS rn
		FROM scores WHERE workspace_id = $1 AND name = $%d AND execution_id IS NOT NULL AND span_id IS NULL AND ($%d = '' OR source = $%d)) x
		WHERE rn = 1`
	q := fmt.Sprintf(`SELECT j.execution_id, j.data_type, j.value, j.string_value, h.data_type, h.value, h.string_value
		FROM (`+latest+`) j JOIN (`+latest+`) h ON h.execution_id = j.execution_id
		ORDER BY j.created_at DESC LIMIT %d`, 2, 3, 3, 4, 5, 5, MaxScorePairs)
	rows, err := s.r.QueryContext(ctx, q, ws, judge, judgeSource, human, humanSource)
	if err != nil {
		return nil, fmt.Errorf("pair scores %s and %s: %w", judge, human, err)
	}
	defer rows.Close()
	var out []ScorePair
	for rows.Next() {
		var p ScorePair
		if err := rows.Scan(&p.ExecutionID, &p.JudgeType, &p.JudgeValue, &p.JudgeLabel, &p.HumanType, &p.HumanValue, &p.HumanLabel); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
