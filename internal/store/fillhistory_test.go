package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"
)

// TestFillHistorySkipTriggers: on PostgreSQL, the bulk load with the row triggers off writes
// exactly the rows the triggers derive (runs per hour, usage rollups, trace rollups and their
// bins, score counts), so that a benchmark loaded that way reads what a server would.
func TestFillHistorySkipTriggers(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	derived := func(skip bool) map[string][]string {
		s := openTestPostgres(t)
		ws := mustWorkspace(t, s, "w")
		if _, err := s.exec(ctx, "UPDATE workspaces SET id = 'W' WHERE id = $1", ws); err != nil { // the same id in both databases
			t.Fatal(err)
		}
		for _, h := range []dbtest.History{
			{Workspace: "W", Agents: []string{"a1", "a2", "a3"}, Runs: 3000, IDPrefix: "a", ScoreEvery: 7, SkipTriggers: skip, Start: now.Add(-72 * time.Hour), End: now},
			// A second load over some of the same hours adds to the rows of the first.
			{Workspace: "W", Agents: []string{"a1"}, Runs: 500, IDPrefix: "b", SkipTriggers: skip, Start: now.Add(-5 * time.Hour), End: now.Add(-time.Hour)},
		} {
			if err := dbtest.FillHistory(ctx, s.db, "postgres", h); err != nil {
				t.Fatal(err)
			}
		}
		out := map[string][]string{}
		for table, cols := range map[string]string{
			"execution_hours":   "hour, shard, n",
			"usage_rollups":     "dimension, period, period_start, agent_id, key, shard, runs, errors, prompt_tokens, completion_tokens, round(cost::numeric, 9)",
			"trace_rollups":     "period, period_start, agent_id, model, shard, runs, errors, prompt_tokens, completion_tokens, round(cost::numeric, 9)",
			"trace_rollup_bins": "period, period_start, agent_id, model, bin, count",
			"score_values":      "name, data_type, has_value, value_key, string_value, n",
		} {
			rows, err := s.r.QueryContext(ctx, "SELECT concat_ws(' ', "+cols+") FROM "+table+" WHERE workspace_id = 'W'")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var r string
				must(t, rows.Scan(&r))
				out[table] = append(out[table], r)
			}
			must(t, rows.Err())
			rows.Close()
			slices.Sort(out[table])
			if len(out[table]) == 0 {
				t.Fatalf("%s: no rows", table)
			}
		}
		return out
	}
	want, got := derived(false), derived(true)
	for table, rows := range want {
		if !slices.Equal(got[table], rows) {
			t.Errorf("%s: %d rows loaded without triggers, %d with them", table, len(got[table]), len(rows))
			for i := range min(len(rows), len(got[table])) {
				if got[table][i] != rows[i] {
					t.Errorf("first difference: %q, want %q", got[table][i], rows[i])
					break
				}
			}
		}
	}
}
