package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
)

// MoveTo returns the status a move leads an execution to, or the *TransitionError refusing
// it from the execution's status.
func MoveTo(e *domain.Execution, m domain.ExecutionMove) (string, error) {
	if to, ok := domain.NextStatus(e.Status, m); ok {
		return to, nil
	}
	return "", &TransitionError{ID: e.ID, From: e.Status, To: m.Status()}
}

// TransitionError says the lifecycle forbids a status change; the API answers 409.
type TransitionError struct {
	ID, From, To string
	// Fenced says the status allowed the move but the row belongs to another pass or node now
	// (see ExecutionPatch.Owner).
	Fenced bool
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("execution %s is %s and cannot become %s", e.ID, e.From, e.To)
}

const executionColumns = `id, workspace_id, agent_id, agent_version_id, parent_id, root_id, session_id, source, user_id,
	end_user_id, status, input, output, error, metadata, config, state, prompt_tokens, completion_tokens, cost, duration_ms,
	trace_id, timeout_ms, created_at, started_at, completed_at, updated_at, owner_node, lease_expires_at, attempt, model_called, seq_reserved, model`

func scanExecution(row interface{ Scan(...any) error }) (*domain.Execution, error) {
	var e domain.Execution
	var output, config, state, errText sql.NullString
	var started, completed domain.Time
	var duration sql.NullInt64
	if err := row.Scan(&e.ID, &e.WorkspaceID, &e.AgentID, &e.AgentVersionID, &e.ParentID, &e.RootID, &e.SessionID, &e.Source,
		&e.UserID, &e.EndUserID, &e.Status, &e.Input, &output, &errText, &e.Metadata, &config, &state, &e.TokenUsage.PromptTokens,
		&e.TokenUsage.CompletionTokens, &e.Cost, &duration, &e.TraceID, &e.TimeoutMS,
		&e.CreatedAt, &started, &completed, &e.UpdatedAt, &e.OwnerNode, &e.LeaseExpiresAt, &e.Attempt, &e.ModelCalled, &e.SeqReserved, &e.Model); err != nil {
		return nil, err
	}
	e.TokenUsage.TotalTokens = e.TokenUsage.PromptTokens + e.TokenUsage.CompletionTokens
	if e.RootID == "" {
		e.RootID = e.ID // a top execution's root is itself (see ExecutionCreate)
	}
	if output.Valid {
		e.Output = json.RawMessage(output.String)
	}
	if errText.Valid {
		e.Error = &errText.String
	}
	if config.Valid {
		e.Config = new(domain.AgentConfig)
		if err := json.Unmarshal([]byte(config.String), e.Config); err != nil {
			return nil, fmt.Errorf("decode config of execution %s: %w", e.ID, err)
		}
	}
	if state.Valid {
		e.State = json.RawMessage(state.String)
	}
	if duration.Valid {
		e.DurationMS = &duration.Int64
	}
	if !started.IsZero() {
		e.StartedAt = &started
	}
	if !completed.IsZero() {
		e.CompletedAt = &completed
	}
	return &e, nil
}

// ExecutionCreate records a new execution (pending, or running when the caller runs it at
// once) together with its trace: on PostgreSQL in one statement (a CTE), so that outside a
// transaction it needs none; on SQLite in one transaction.
func (s *Store) ExecutionCreate(ctx context.Context, e *domain.Execution, tr *domain.Trace) error {
	if e.ID == "" {
		e.ID = NewID()
	}
	if e.RootID == "" {
		e.RootID = e.ID
	}
	now := domain.Now()
	e.CreatedAt, e.UpdatedAt = now, now
	if e.Status == domain.StatusRunning {
		e.StartedAt = &now
	}
	// A version's configuration is immutable, so a run of a version refers to it; only an
	// unsaved (playground) configuration is copied into the row.
	var config any
	if e.AgentVersionID == nil && e.Config != nil {
		text, err := jsonValue(e.Config)
		if err != nil {
			return err
		}
		config = text
	}
	// A running execution is owned from its first statement: its lease, its first pass and
	// that pass's block of frame ids are written with the row.
	var owner, leaseMS any
	attempt, reserved, called := 0, 0, false
	if c := e.Claim; c != nil && e.Status == domain.StatusRunning {
		owner, leaseMS, attempt, reserved, called = c.Node, c.Lease.Milliseconds(), 1, c.SeqBlock, c.ModelCalled
		e.OwnerNode, e.Attempt, e.SeqReserved, e.ModelCalled = &c.Node, 1, c.SeqBlock, c.ModelCalled
	}
	if tr.EndUserID == nil {
		tr.EndUserID = e.EndUserID
	}
	tr.ExecutionID = &e.ID // its spans may read what they share with it (SpansShareExecution)
	traceSQL, traceArgs := traceInsert(tr, now)
	e.TraceID = tr.ID
	// The execution's parameters follow the trace's ($13 on).
	execSQL := `INSERT INTO executions (id, workspace_id, agent_id, agent_version_id, parent_id, root_id, session_id,
		source, status, input, metadata, config, trace_id, timeout_ms, created_at, started_at, updated_at, state, user_id, end_user_id,
		owner_node, lease_expires_at, attempt, seq_reserved, model_called)
		VALUES ($13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $27, $29, $30, $31,
		$32, ` + s.nowMS() + ` + $33, $34, $35, $36)`
	// A top execution's root_id is stored empty: its own id, written once (every read of
	// root_id by the database is of a child's, parent_id IS NOT NULL).
	root := e.RootID
	if root == e.ID {
		root = ""
	}
	args := append(traceArgs, e.ID, e.WorkspaceID, e.AgentID, e.AgentVersionID, e.ParentID, root, e.SessionID, e.Source, e.Status,
		e.Input, e.Metadata, config, e.TraceID, e.TimeoutMS, now, optTime(e.StartedAt), nullJSON(e.State), e.UserID, e.EndUserID,
		owner, leaseMS, attempt, reserved, called)
	if s.dialect == Postgres {
		if _, err := s.exec(ctx, "WITH trace AS ("+traceSQL+") "+execSQL, args...); err != nil {
			return fmt.Errorf("insert execution: %w", err)
		}
		return nil
	}
	return s.InTx(ctx, func(tx *Store) error {
		if _, err := tx.exec(ctx, traceSQL, traceArgs...); err != nil {
			return fmt.Errorf("insert trace: %w", err)
		}
		// modernc binds $n to the nth argument: the trace's twelve are passed and not read.
		if _, err := tx.exec(ctx, execSQL, args...); err != nil {
			return fmt.Errorf("insert execution: %w", err)
		}
		return nil
	})
}

func optTime(t *domain.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

// ExecutionGet returns one execution of the workspace.
func (s *Store) ExecutionGet(ctx context.Context, ws, id string) (*domain.Execution, error) {
	return getByID(ctx, s, "execution", "executions", executionColumns, ws, id, scanExecution)
}

// experimentExecutions is the condition on the executions of an experiment: its items' (the
// last of each) and those its interrupted items ran before (experiment_item_retries).
const experimentExecutions = `id IN (SELECT execution_id FROM experiment_items WHERE experiment_id = $%[1]d
	UNION ALL SELECT execution_id FROM experiment_item_retries WHERE experiment_id = $%[1]d)`

// ExecutionList returns one page of executions, newest first.
func (s *Store) ExecutionList(ctx context.Context, ws string, f domain.ExecutionFilter, p domain.Page) ([]*domain.Execution, int, error) {
	where, args := whereClause("", ws, []cond{
		{"agent_id = $%d", f.AgentID}, partialCond("status", f.Status, domain.StatusCompleted), {"session_id = $%d", f.SessionID},
		partialCond("source", f.Source, "api"),
		{"end_user_id = $%d", f.EndUserID}, {experimentExecutions, f.ExperimentID},
	})
	if !f.CreatedAfter.IsZero() {
		args = append(args, f.CreatedAfter)
		where += fmt.Sprintf(" AND created_at > $%d", len(args))
	}
	if !f.CreatedBefore.IsZero() {
		args = append(args, f.CreatedBefore)
		where += fmt.Sprintf(" AND created_at < $%d", len(args))
	}
	if f != (domain.ExecutionFilter{}) || p.After != nil || pageOffset(p) == 0 {
		return listPage(ctx, s, "executions", executionColumns, where, args, newestFirst, p, scanExecution)
	}
	// A page past the first of the whole list skips whole hours by their counts (a filtered
	// list has no counts to skip by, and keeps OFFSET).
	before, rest, err := s.executionsSkip(ctx, ws, pageOffset(p))
	if err != nil {
		return nil, 0, err
	}
	q := offsetSelect(executionColumns, "executions", where+" AND created_at < $2", p.Limit, rest)
	return listQuery(ctx, s, "executions", q, []any{ws, before}, "executions"+where+newestFirst, args, p, scanExecution)
}

// hourMS is the length of the hours execution_hours counts the runs of (migration 00037).
const hourMS = 3_600_000

// executionsSkip finds where the whole list of ws, newest first, resumes after its first
// offset runs, from the counts of runs per hour (execution_hours), newest hour first: the
// runs created before `before` (Unix ms: the end of the hour holding run offset + 1), of
// which the first rest are skipped. The page then reads at most that hour's runs besides its
// own, whatever the offset. Every row counts at least one run (a row falling to 0 is
// deleted), so offset + 1 rows always reach that hour: the rows read are at most the offset
// (a page near the top stays as cheap as OFFSET) and at most the workspace's hours (times 8
// shards on PostgreSQL). Past the last run, the page is empty: before is 0.
func (s *Store) executionsSkip(ctx context.Context, ws string, offset int) (before int64, rest int, err error) {
	rows, err := s.r.QueryContext(ctx, fmt.Sprintf("SELECT hour, n FROM execution_hours WHERE workspace_id = $1 ORDER BY hour DESC LIMIT %d", offset+1), ws)
	if err != nil {
		return 0, 0, fmt.Errorf("count executions per hour: %w", err)
	}
	defer rows.Close()
	// seen counts the runs of the rows read so far; newer, those of the hours before the
	// current row's (a PostgreSQL hour has a row per shard).
	var seen, newer int
	hour := int64(-1)
	for rows.Next() {
		var h int64
		var n int
		if err := rows.Scan(&h, &n); err != nil {
			return 0, 0, fmt.Errorf("count executions per hour: %w", err)
		}
		if h != hour {
			hour, newer = h, seen
		}
		if seen += n; seen > offset {
			return hour + hourMS, offset - newer, nil
		}
	}
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("count executions per hour: %w", err)
	}
	return 0, 0, nil
}

// ExecutionTree returns an execution with all its descendants nested under it.
func (s *Store) ExecutionTree(ctx context.Context, ws, id string) (*domain.ExecutionNode, error) {
	top, err := s.ExecutionGet(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+executionColumns+` FROM executions WHERE workspace_id = $1
		AND (id = $2 OR (root_id = $2 AND parent_id IS NOT NULL)) ORDER BY created_at, id`, ws, top.RootID)
	if err != nil {
		return nil, fmt.Errorf("load execution tree: %w", err)
	}
	all, err := collect(rows, scanExecution)
	if err != nil {
		return nil, err
	}
	nodes := map[string]*domain.ExecutionNode{}
	for _, e := range all {
		nodes[e.ID] = &domain.ExecutionNode{Execution: e, Children: []*domain.ExecutionNode{}}
	}
	for _, e := range all {
		if e.ParentID != nil && nodes[*e.ParentID] != nil {
			parent := nodes[*e.ParentID]
			parent.Children = append(parent.Children, nodes[e.ID])
		}
	}
	root := nodes[top.ID]
	if root == nil {
		root = &domain.ExecutionNode{Execution: top, Children: []*domain.ExecutionNode{}}
	}
	return root, nil
}

// ExecutionTransition moves an execution to status `to` if the lifecycle allows it from its
// current status, writing patch in the same statement. A forbidden move is a *TransitionError;
// a concurrent change between the read and the write is detected and reported the same way.
func (s *Store) ExecutionTransition(ctx context.Context, ws, id, to string, p domain.ExecutionPatch) (*domain.Execution, error) {
	// The statuses the move is allowed from. (Built here: Go keeps a small appended slice on
	// the stack only in the function that declares it, BenchmarkExecuteSyncAllocs in bench/.)
	var from []string
	for _, f := range domain.ExecutionStatuses {
		if movesTo(f, to, p.Move) {
			from = append(from, f)
		}
	}
	if p.From != "" {
		if !slices.Contains(from, p.From) {
			return nil, &TransitionError{ID: id, From: p.From, To: to}
		}
		from = []string{p.From}
	}
	sets := []string{"status = $1", "updated_at = $2"}
	args := []any{to, domain.Now()}
	add := func(col string, v any) {
		args = append(args, v)
		sets = append(sets, fmt.Sprintf("%s = $%d", col, len(args)))
	}
	if p.Output != nil {
		add("output", string(p.Output))
	}
	if p.Error != nil {
		add("error", *p.Error)
	}
	if p.Usage != nil {
		add("prompt_tokens", p.Usage.PromptTokens)
		add("completion_tokens", p.Usage.CompletionTokens)
	}
	if p.Cost != nil {
		add("cost", *p.Cost)
	}
	if p.Model != nil {
		add("model", *p.Model)
	}
	if p.StartedAt != nil {
		add("started_at", *p.StartedAt)
	}
	if p.CompletedAt != nil {
		add("completed_at", *p.CompletedAt)
	}
	if p.DurationMS != nil {
		add("duration_ms", *p.DurationMS)
	}
	if p.State != nil {
		add("state", string(p.State))
	} else if p.ClearState {
		sets = append(sets, "state = NULL")
	}
	if c := p.Claim; c != nil && to == domain.StatusRunning {
		add("owner_node", c.Node)
		args = append(args, c.Lease.Milliseconds())
		sets = append(sets, fmt.Sprintf("lease_expires_at = %s + $%d", s.nowMS(), len(args)),
			"attempt = attempt + 1", "model_called = FALSE")
		args = append(args, c.SeqBlock)
		sets = append(sets, fmt.Sprintf("seq_reserved = seq_reserved + $%d", len(args)))
	} else if to != domain.StatusRunning {
		sets = append(sets, "owner_node = NULL", "lease_expires_at = NULL")
	}
	if p.SeqUsed != nil {
		add("seq_reserved", *p.SeqUsed)
	}
	var guards []string
	guard := func(cond string, v any) {
		args = append(args, v)
		guards = append(guards, fmt.Sprintf(cond, len(args)))
	}
	if o := p.Owner; o != nil {
		guard("owner_node = $%d", o.Node)
		guard("attempt = $%d", o.Attempt)
	}
	if p.Attempt != nil {
		guard("attempt = $%d", *p.Attempt)
	}
	if p.LeaseExpired {
		guards = append(guards, "lease_expires_at < "+s.nowMS())
	}
	args = append(args, ws, id)
	n := len(args)
	in := make([]string, len(from))
	for i, f := range from {
		in[i] = "'" + f + "'" // statuses are constants of this package
	}
	where := ""
	for _, g := range guards {
		where += " AND " + g
	}
	// One statement checks the lifecycle and writes: only rows in an allowed status change.
	q := fmt.Sprintf("UPDATE executions SET %s WHERE workspace_id = $%d AND id = $%d AND status IN (%s)%s RETURNING %s",
		strings.Join(sets, ", "), n-1, n, strings.Join(in, ", "), where, executionColumns)
	traceWith := p.Trace != nil && s.dialect == Postgres
	if traceWith {
		// The trace is ended by the same statement, and only if the move happened.
		t := p.Trace
		args = append(args, t.Usage.PromptTokens, t.Usage.CompletionTokens, t.Cost, t.EndedAt, t.DurationMS)
		m := len(args)
		q = fmt.Sprintf(`WITH x AS (%s), t AS (UPDATE traces SET status = $1, prompt_tokens = $%d, completion_tokens = $%d, cost = $%d,
			ended_at = $%d, duration_ms = $%d FROM x WHERE traces.workspace_id = x.workspace_id AND traces.id = x.trace_id)
			SELECT %s FROM x`, q, m-4, m-3, m-2, m-1, m, executionColumns)
	}
	var out *domain.Execution
	err := s.InTx(ctx, func(tx *Store) error {
		var err error
		out, err = scanExecution(tx.w.QueryRowContext(ctx, q, args...))
		if errors.Is(err, sql.ErrNoRows) {
			var cur string
			switch err := tx.w.QueryRowContext(ctx, "SELECT status FROM executions WHERE workspace_id = $1 AND id = $2", ws, id).Scan(&cur); {
			case errors.Is(err, sql.ErrNoRows):
				return notFound("execution", id)
			case err != nil:
				return fmt.Errorf("read execution %s: %w", id, err)
			}
			// The status allowed the move but a guard did not: another pass or node holds it
			// now; reported like a status that moved meanwhile.
			return &TransitionError{ID: id, From: cur, To: to, Fenced: len(guards) > 0 && slices.Contains(from, cur)}
		}
		if err != nil {
			return fmt.Errorf("update execution %s: %w", id, err)
		}
		if t := p.Trace; t != nil && !traceWith {
			if err := tx.TraceFinish(ctx, ws, out.TraceID, to, t.Usage, t.Cost, t.EndedAt, t.DurationMS); err != nil {
				return err
			}
		}
		if domain.IsTerminal(to) {
			return tx.runTerminalHook(ctx, out)
		}
		return nil
	})
	return out, err
}

// movesTo reports whether the lifecycle allows a move from one status to another: by move m,
// or by any move when m is empty.
func movesTo(from, to string, m domain.ExecutionMove) bool {
	next, ok := domain.NextStatus(from, m)
	return m == "" && domain.CanTransition(from, to) || ok && next == to
}

// ExecutionClaim takes the oldest pending execution for a worker and marks it running, owned
// by c's node with a fresh lease, a new attempt and a block of frame ids above every id an
// earlier pass may have sent. It returns nil when none is pending.
func (s *Store) ExecutionClaim(ctx context.Context, c domain.Claim) (*domain.Execution, error) {
	now := domain.Now()
	pick := "SELECT id FROM executions WHERE status = 'pending' ORDER BY created_at, id LIMIT 1"
	if s.dialect == Postgres {
		pick += " FOR UPDATE SKIP LOCKED"
	}
	// One statement (its own transaction) claims and reads the row, and it is not
	// cancellable: a claim is never left half done (running, with no worker that knows it).
	ctx = context.WithoutCancel(ctx)
	x, err := scanExecution(s.w.QueryRowContext(ctx, `UPDATE executions SET status = 'running', started_at = $1, updated_at = $1,
		owner_node = $2, lease_expires_at = `+s.nowMS()+` + $3, attempt = attempt + 1, model_called = FALSE, seq_reserved = seq_reserved + $4
		WHERE id = (`+pick+`) AND status = 'pending' RETURNING `+executionColumns, now, c.Node, c.Lease.Milliseconds(), c.SeqBlock))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claim execution: %w", err)
	}
	return x, nil
}

// ExecutionIDsByStatus returns the ids (with workspaces) of every execution in a status,
// across workspaces, oldest first; the engine uses it for recovery at start-up.
func (s *Store) ExecutionIDsByStatus(ctx context.Context, status string) ([][2]string, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT workspace_id, id FROM executions WHERE status = $1 ORDER BY created_at, id", status)
	if err != nil {
		return nil, fmt.Errorf("list %s executions: %w", status, err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var ws, id string
		if err := rows.Scan(&ws, &id); err != nil {
			return nil, err
		}
		out = append(out, [2]string{ws, id})
	}
	return out, rows.Err()
}

// EventAppend stores frames of an execution's log, in order, as one batch.
func (s *Store) EventAppend(ctx context.Context, executionID string, events []domain.Event) error {
	return s.EventAppendFinal(ctx, executionID, events, nil)
}

// EventAppendFinal is EventAppend for the batch written as a run completes with output (the
// execution's, byte for byte): its "done" frame's copy of the output is not stored again
// (see storedEvent).
func (s *Store) EventAppendFinal(ctx context.Context, executionID string, events []domain.Event, output json.RawMessage) error {
	if len(events) == 0 {
		return nil
	}
	frames, packed := packFrames(events, output)
	_, err := s.exec(ctx, "INSERT INTO execution_events (execution_id, seq_from, seq_to, frames, packed) VALUES ($1, $2, $3, $4, $5)",
		executionID, events[0].Seq, events[len(events)-1].Seq, frames, packed)
	if err != nil {
		return fmt.Errorf("append events of %s: %w", executionID, err)
	}
	return nil
}

// EventList returns the frames of an execution after seq, in order.
func (s *Store) EventList(ctx context.Context, executionID string, after int) ([]domain.Event, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT seq_from, frames, packed FROM execution_events WHERE execution_id = $1 AND seq_to > $2 ORDER BY seq_from",
		executionID, after)
	if err != nil {
		return nil, fmt.Errorf("list events of %s: %w", executionID, err)
	}
	type batch struct {
		from   int
		frames string
		packed []byte
	}
	var batches []batch
	for rows.Next() {
		var b batch
		if err := rows.Scan(&b.from, &b.frames, &b.packed); err != nil {
			rows.Close()
			return nil, err
		}
		batches = append(batches, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list events of %s: %w", executionID, err)
	}
	// The output is read after the rows are closed: SQLite's reads may hold one connection.
	var output json.RawMessage
	readOutput := func() (json.RawMessage, error) {
		if output == nil {
			o, err := s.executionOutput(ctx, executionID)
			if err != nil {
				return nil, err
			}
			output = o
		}
		return output, nil
	}
	var out []domain.Event
	for _, b := range batches {
		frames, err := unpackFrames(b.from, b.frames, b.packed, readOutput)
		if err != nil {
			return nil, fmt.Errorf("read events of %s: %w", executionID, err)
		}
		for _, ev := range frames {
			if ev.Seq > after {
				out = append(out, ev)
			}
		}
	}
	return out, nil
}

// EventLastSeq returns the highest stored frame number of an execution (0 if none).
func (s *Store) EventLastSeq(ctx context.Context, executionID string) (int, error) {
	var n int
	err := s.w.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq_to), 0) FROM execution_events WHERE execution_id = $1", executionID).Scan(&n)
	return n, err
}
