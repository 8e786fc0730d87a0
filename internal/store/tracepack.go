package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
)

// rollupGroup is the key of a packed row of trace_rollup_sketches: the bin rows of one
// workspace, period, period start, agent and model.
type rollupGroup struct {
	ws            string
	period, start int64
	agent, model  string
}

func (g rollupGroup) args() []any { return []any{g.ws, g.period, g.start, g.agent, g.model} }

// groupWhere selects the rows of one rollupGroup (its args are $1 to $5).
const groupWhere = "workspace_id = $1 AND period = $2 AND period_start = $3 AND agent_id = $4 AND model = $5"

// TraceRollupPack moves the bin rows the traces' triggers write (trace_rollup_bins) into the
// packed rows the trace summary reads (trace_rollup_sketches, migration 00038): every group
// (workspace, period, period start, agent and model) that has bin rows when the pass reaches
// it, the current hour's included, one short transaction per group, listing batch groups at a
// time in key order, and writes the percentiles of each packed row it writes (migration 00041),
// then of any packed row that has none yet. It returns how many packed rows it wrote and how
// many bin rows it packed. Bin rows written while it runs are left for the next pass; groups of
// deleted workspaces for their purge (the cascade of the workspace row). The leader runs it
// (internal/rollup).
func (s *Store) TraceRollupPack(ctx context.Context, batch int) (groups, bins int, err error) {
	batch = max(batch, 1)
	after := rollupGroup{}
	for {
		list, err := s.rollupGroupsWithBins(ctx, after, batch)
		if err != nil {
			return groups, bins, err
		}
		for _, g := range list {
			n, err := s.rollupGroupPack(ctx, g)
			if err != nil {
				return groups, bins, fmt.Errorf("pack trace rollup bins of workspace %s: %w", g.ws, err)
			}
			if n > 0 {
				groups++
				bins += n
			}
		}
		if len(list) < batch {
			filled, err := s.rollupLatencyFill(ctx, batch)
			return groups + filled, bins, err
		}
		after = list[len(list)-1]
	}
}

// rollupGroupsWithBins lists up to limit groups that have bin rows, in key order after the
// group after (the zero group: from the first), read off the bins' primary key.
func (s *Store) rollupGroupsWithBins(ctx context.Context, after rollupGroup, limit int) ([]rollupGroup, error) {
	rows, err := s.r.QueryContext(ctx, fmt.Sprintf(`SELECT DISTINCT workspace_id, period, period_start, agent_id, model FROM trace_rollup_bins
		WHERE (workspace_id, period, period_start, agent_id, model) > ($1, $2, $3, $4, $5)
			AND workspace_id NOT IN (SELECT id FROM workspaces WHERE deleted_at IS NOT NULL)
		ORDER BY workspace_id, period, period_start, agent_id, model LIMIT %d`, limit), after.args()...)
	if err != nil {
		return nil, fmt.Errorf("list trace rollup bins to pack: %w", err)
	}
	return scanGroups(rows)
}

// scanGroups reads rows of workspace_id, period, period_start, agent_id and model, and closes them.
func scanGroups(rows *sql.Rows) ([]rollupGroup, error) {
	defer rows.Close()
	var out []rollupGroup
	for rows.Next() {
		var g rollupGroup
		if err := rows.Scan(&g.ws, &g.period, &g.start, &g.agent, &g.model); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// rollupGroupPack moves the bin rows of one group into its packed row, in one transaction,
// and returns how many it moved. On PostgreSQL it takes only the bin rows no other
// transaction holds (a run ending now keeps its row and the pass waits for no one: it can
// take part in no deadlock); a trigger's upsert of a bin row the pass deleted waits for its
// commit, then inserts a new row, packed by the next pass. Each count is so moved exactly
// once. Two passes at once take turns on the packed row.
func (s *Store) rollupGroupPack(ctx context.Context, g rollupGroup) (int, error) {
	moved := 0
	err := s.InTx(ctx, func(tx *Store) error {
		del := "DELETE FROM trace_rollup_bins WHERE " + groupWhere
		if s.dialect == Postgres {
			del += " AND bin IN (SELECT bin FROM trace_rollup_bins WHERE " + groupWhere + " FOR UPDATE SKIP LOCKED)"
		}
		var sums binSums
		rows, err := tx.w.QueryContext(ctx, del+" RETURNING bin, count", g.args()...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var bin int
			var count int64
			if err := rows.Scan(&bin, &count); err != nil {
				return err
			}
			sums.add(bin, count)
			moved++
		}
		if err := rows.Err(); err != nil || moved == 0 {
			return err
		}
		rows.Close()

		// Add them to the packed row (made first if there is none).
		if _, err := tx.exec(ctx, `INSERT INTO trace_rollup_sketches (workspace_id, period, period_start, agent_id, model, bins)
			VALUES ($1, $2, $3, $4, $5, '') ON CONFLICT (workspace_id, period, period_start, agent_id, model) DO NOTHING`, g.args()...); err != nil {
			return err
		}
		return tx.rollupRowWrite(ctx, g, &sums)
	})
	if err != nil {
		return 0, err
	}
	return moved, nil
}

// rollupRowWrite adds the bins of g's packed row to sums and writes them back, with their
// percentiles (migration 00041), in the transaction of tx. The row is locked first against
// another pass: two leaders for a moment, or the leader and a bulk load's pass.
func (tx *Store) rollupRowWrite(ctx context.Context, g rollupGroup, sums *binSums) error {
	sel := "SELECT bins FROM trace_rollup_sketches WHERE " + groupWhere
	if tx.dialect == Postgres {
		sel += " FOR UPDATE"
	}
	var packed []byte
	if err := tx.w.QueryRowContext(ctx, sel, g.args()...).Scan(&packed); err != nil {
		return err
	}
	if err := eachBin(packed, sums.add); err != nil {
		return err
	}
	lat := sums.latency()
	_, err := tx.exec(ctx, "UPDATE trace_rollup_sketches SET bins = $6, latency_n = $7, p50_ms = $8, p95_ms = $9, p99_ms = $10 WHERE "+groupWhere,
		append(g.args(), string(sums.appendList(nil)), sums.positive(), lat.P50, lat.P95, lat.P99)...)
	return err
}

// rollupLatencyFill writes the percentiles of the packed rows that have none (latency_n NULL:
// rows packed before migration 00041), batch rows at a time listed by its partial index, each
// in a short transaction, and returns how many it wrote.
func (s *Store) rollupLatencyFill(ctx context.Context, batch int) (int, error) {
	filled := 0
	for {
		rows, err := s.r.QueryContext(ctx, fmt.Sprintf(`SELECT workspace_id, period, period_start, agent_id, model FROM trace_rollup_sketches
			WHERE latency_n IS NULL AND workspace_id NOT IN (SELECT id FROM workspaces WHERE deleted_at IS NOT NULL)
			ORDER BY workspace_id, period, period_start, agent_id, model LIMIT %d`, batch))
		if err != nil {
			return filled, fmt.Errorf("list trace rollups without percentiles: %w", err)
		}
		list, err := scanGroups(rows)
		if err != nil {
			return filled, fmt.Errorf("list trace rollups without percentiles: %w", err)
		}
		for _, g := range list {
			if err := s.InTx(ctx, func(tx *Store) error { return tx.rollupRowWrite(ctx, g, &binSums{}) }); err != nil {
				return filled, fmt.Errorf("trace rollup percentiles of workspace %s: %w", g.ws, err)
			}
			filled++
		}
		if len(list) < batch {
			return filled, nil
		}
	}
}

// appendList appends the "bin:count,…" list of the bins whose total is not 0, ascending: the
// form of a packed row.
func (s *binSums) appendList(b []byte) []byte {
	s.each(func(bin int, count int64) {
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(bin), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, count, 10)
	})
	return b
}
