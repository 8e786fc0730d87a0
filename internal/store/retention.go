package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// idChunk bounds the ids one statement names, well under both dialects' parameter limits.
const idChunk = 500

// terminalStatuses are the statuses a purge may delete: a run in any other is still going.
const terminalStatuses = "('completed', 'failed', 'cancelled', 'rejected')"

// ExecutionsPurge deletes, in one transaction, up to limit execution trees of workspace ws
// whose top execution was created before `before`, oldest first, with everything that hangs
// off them: frames, traces and their spans, approvals, scores of the executions or their
// traces, webhook deliveries and chat-platform replies. A tree is taken only when every
// execution in it has ended (completed, failed, cancelled, rejected): a pending, running or
// awaiting_approval run is never deleted, however old, and neither is its parent. Chat sessions
// and messages are kept (a message may then name an execution that is gone), and so are assets
// (they are deleted through the API, or with their workspace).
func (s *Store) ExecutionsPurge(ctx context.Context, ws string, before time.Time, limit int) (domain.PurgeCounts, error) {
	var c domain.PurgeCounts
	err := s.InTx(ctx, func(tx *Store) error {
		roots, err := tx.strings(ctx, fmt.Sprintf(`SELECT x.id FROM executions x WHERE x.workspace_id = $1 AND x.created_at < $2
			AND x.parent_id IS NULL AND x.status IN %s
			AND NOT EXISTS (SELECT 1 FROM executions c WHERE c.root_id = x.id AND c.parent_id IS NOT NULL AND c.status NOT IN %s)
			ORDER BY x.created_at, x.id LIMIT %d`, terminalStatuses, terminalStatuses, max(limit, 1)), ws, before.UnixMilli())
		if err != nil || len(roots) == 0 {
			return err
		}
		var ids []string
		for chunk := range slices.Chunk(roots, idChunk) {
			in, args := inList(2, chunk)
			more, err := tx.strings(ctx, "SELECT id FROM executions WHERE workspace_id = $1 AND (id IN "+in+" OR (root_id IN "+in+
				" AND parent_id IS NOT NULL))", append([]any{ws}, args...)...)
			if err != nil {
				return err
			}
			ids = append(ids, more...)
		}
		for chunk := range slices.Chunk(ids, idChunk) {
			n, err := tx.executionsDelete(ctx, ws, chunk)
			if err != nil {
				return err
			}
			c.Add(n)
		}
		return nil
	})
	if err != nil {
		return domain.PurgeCounts{}, fmt.Errorf("purge executions of workspace %s: %w", ws, err)
	}
	return c, nil
}

// purgeStep is one DELETE of a purge, and the count it adds to.
type purgeStep struct {
	n    *int
	q    string
	args []any
}

// runPurgeSteps executes the steps in order, adding what each deleted to its count.
func (s *Store) runPurgeSteps(ctx context.Context, steps []purgeStep) error {
	for _, st := range steps {
		res, err := s.exec(ctx, st.q, st.args...)
		if err != nil {
			return err
		}
		if st.n != nil {
			n, _ := res.RowsAffected()
			*st.n += int(n)
		}
	}
	return nil
}

// executionsDelete deletes the executions ids (at most idChunk) of ws and what hangs off them.
func (s *Store) executionsDelete(ctx context.Context, ws string, ids []string) (domain.PurgeCounts, error) {
	var c domain.PurgeCounts
	in, args := inList(2, ids)
	args = append([]any{ws}, args...)
	// An execution's trace is the one it names (its row's trace_id, read by its key).
	traces, err := s.strings(ctx, "SELECT trace_id FROM executions WHERE workspace_id = $1 AND id IN "+in, args...)
	if err != nil {
		return c, err
	}
	evIn, evArgs := inList(1, ids)
	steps := []purgeStep{
		{&c.Events, "DELETE FROM execution_events WHERE execution_id IN " + evIn, evArgs},
		{&c.Approvals, "DELETE FROM approvals WHERE workspace_id = $1 AND execution_id IN " + in, args},
		{&c.Scores, "DELETE FROM scores WHERE workspace_id = $1 AND execution_id IN " + in, args},
		{&c.Deliveries, "DELETE FROM webhook_deliveries WHERE workspace_id = $1 AND execution_id IN " + in, args},
		{nil, "DELETE FROM trigger_replies WHERE execution_id IN " + evIn, evArgs},
	}
	if len(traces) > 0 {
		tin, targs := inList(2, traces)
		targs = append([]any{ws}, targs...)
		steps = append(steps,
			purgeStep{&c.Scores, "DELETE FROM scores WHERE workspace_id = $1 AND trace_id IN " + tin, targs},
			purgeStep{&c.Spans, "DELETE FROM spans WHERE workspace_id = $1 AND trace_id IN " + tin, targs},
			purgeStep{&c.Traces, "DELETE FROM traces WHERE workspace_id = $1 AND id IN " + tin, targs})
	}
	steps = append(steps, purgeStep{&c.Executions, "DELETE FROM executions WHERE workspace_id = $1 AND id IN " + in, args})
	return c, s.runPurgeSteps(ctx, steps)
}

// TracesPurge deletes, in one transaction, up to limit ingested traces (those of no
// execution) of workspace ws created before `before`, oldest first, with their spans and the
// scores given to them.
func (s *Store) TracesPurge(ctx context.Context, ws string, before time.Time, limit int) (domain.PurgeCounts, error) {
	var c domain.PurgeCounts
	err := s.InTx(ctx, func(tx *Store) error {
		ids, err := tx.strings(ctx, fmt.Sprintf(`SELECT id FROM traces WHERE workspace_id = $1 AND created_at < $2 AND execution_id IS NULL
			ORDER BY created_at LIMIT %d`, max(limit, 1)), ws, before.UnixMilli())
		if err != nil {
			return err
		}
		for chunk := range slices.Chunk(ids, idChunk) {
			in, args := inList(2, chunk)
			args = append([]any{ws}, args...)
			err := tx.runPurgeSteps(ctx, []purgeStep{
				{&c.Scores, "DELETE FROM scores WHERE workspace_id = $1 AND trace_id IN " + in, args},
				{&c.Spans, "DELETE FROM spans WHERE workspace_id = $1 AND trace_id IN " + in, args},
				{&c.Traces, "DELETE FROM traces WHERE workspace_id = $1 AND execution_id IS NULL AND id IN " + in, args},
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return domain.PurgeCounts{}, fmt.Errorf("purge traces of workspace %s: %w", ws, err)
	}
	return c, nil
}

// ExecutionsActiveList returns the ids of up to limit executions of ws that have not ended
// (pending, running, awaiting_approval): what must be cancelled before a deleted workspace's
// rows can go.
func (s *Store) ExecutionsActiveList(ctx context.Context, ws string, limit int) ([]string, error) {
	// status <> 'completed' lets SQLite read the partial index of the other statuses (migration
	// 00036); PostgreSQL proves it from NOT IN.
	return s.strings(ctx, fmt.Sprintf("SELECT id FROM executions WHERE workspace_id = $1 AND status <> 'completed' AND status NOT IN %s ORDER BY created_at, id LIMIT %d",
		terminalStatuses, max(limit, 1)), ws)
}

// workspaceTables are the tables a deleted workspace's purge empties, each with the condition
// that finds the workspace's rows through an index, in an order the foreign keys allow (a row
// before the rows it references). Executions and traces are purged before (ExecutionsPurge,
// TracesPurge), assets with their blobs by the assets service; what is left (asset blob
// records, blob_data) goes with the cascade of the workspace row itself.
var workspaceTables = []struct{ table, where string }{
	{"annotation_items", byWorkspace}, {"annotation_queues", byWorkspace}, {"evaluation_judgments", byWorkspace}, {"evaluation_rules", byWorkspace},
	{"execution_events", "execution_id IN (SELECT id FROM executions WHERE workspace_id = $1)"},
	{"spans", byWorkspace}, {"scores", byWorkspace}, {"approvals", byWorkspace}, {"webhook_deliveries", byWorkspace},
	{"traces", byWorkspace}, {"executions", byWorkspace},
	{"chat_messages", "session_id IN (SELECT id FROM chat_sessions WHERE workspace_id = $1)"}, {"chat_sessions", byWorkspace},
	{"memories", byWorkspace}, {"agent_triggers", byWorkspace},
	{"agent_versions", "agent_id IN (SELECT id FROM agents WHERE workspace_id = $1)"}, {"agents", byWorkspace},
	{"prompt_versions", "prompt_id IN (SELECT id FROM prompts WHERE workspace_id = $1)"}, {"prompts", byWorkspace},
	{"data_source_versions", "data_source_id IN (SELECT id FROM data_sources WHERE workspace_id = $1)"}, {"data_sources", byWorkspace},
	{"experiment_item_retries", "experiment_id IN (SELECT id FROM experiments WHERE workspace_id = $1)"},
	{"experiment_items", "experiment_id IN (SELECT id FROM experiments WHERE workspace_id = $1)"}, {"experiments", byWorkspace},
	{"dataset_items", "dataset_id IN (SELECT id FROM datasets WHERE workspace_id = $1)"}, {"datasets", byWorkspace}, {"evaluators", byWorkspace},
	{"credentials", byWorkspace}, {"mcp_tools", byWorkspace}, {"guardrails", byWorkspace}, {"score_configs", byWorkspace},
	{"idempotency_keys", byWorkspace}, {"workspace_llm_models", byWorkspace}, {"api_keys", byWorkspace}, {"memberships", byWorkspace},
}

const byWorkspace = "workspace_id = $1"

// WorkspacePurge deletes up to limit rows of a deleted workspace, from the first of its tables
// that still has some, and returns how many. Once every table is empty it deletes the
// workspace row and reports done. Assets must be deleted first, with their blobs (the assets
// service): while any is left it is an error. A live workspace is not found.
func (s *Store) WorkspacePurge(ctx context.Context, ws string, limit int) (n int, done bool, err error) {
	if _, err := s.workspaceGet(ctx, s.r, ws, " AND deleted_at IS NOT NULL"); err != nil {
		return 0, false, err
	}
	left, err := s.AssetIDList(ctx, ws, 1)
	if err != nil {
		return 0, false, err
	}
	if len(left) > 0 {
		return 0, false, fmt.Errorf("deleted workspace %s still has assets: delete them (with their blobs) first", ws)
	}
	// A row is named by its rowid (SQLite) or ctid (PostgreSQL, where ctid = ANY(array) is a
	// TID scan: ctid IN (subquery) would scan the table).
	del := "DELETE FROM %[1]s WHERE rowid IN (SELECT rowid FROM %[1]s WHERE %[2]s LIMIT %[3]d)"
	if s.dialect == Postgres {
		del = "DELETE FROM %[1]s WHERE ctid = ANY(ARRAY(SELECT ctid FROM %[1]s WHERE %[2]s LIMIT %[3]d))"
	}
	for _, t := range workspaceTables {
		res, err := s.exec(ctx, fmt.Sprintf(del, t.table, t.where, max(limit, 1)), ws)
		if err != nil {
			return 0, false, fmt.Errorf("purge %s of deleted workspace %s: %w", t.table, ws, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			return int(n), false, nil
		}
	}
	if _, err := s.exec(ctx, "DELETE FROM workspaces WHERE id = $1 AND deleted_at IS NOT NULL", ws); err != nil {
		return 0, false, fmt.Errorf("delete workspace %s: %w", ws, err)
	}
	return 0, true, nil
}

// AssetIDList returns the ids of up to limit assets of ws, oldest first.
func (s *Store) AssetIDList(ctx context.Context, ws string, limit int) ([]string, error) {
	return s.strings(ctx, fmt.Sprintf("SELECT id FROM assets WHERE workspace_id = $1 ORDER BY created_at, id LIMIT %d", max(limit, 1)), ws)
}

// inList is "($from, $from+1, …)" for ids, with ids as arguments.
func inList(from int, ids []string) (string, []any) {
	var b strings.Builder
	args := make([]any, len(ids))
	b.WriteByte('(')
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", from+i)
		args[i] = id
	}
	b.WriteByte(')')
	return b.String(), args
}
