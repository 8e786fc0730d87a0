package dbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// History describes the finished runs FillHistory writes into one workspace.
type History struct {
	Workspace string
	// Agents own the runs in turn (run i belongs to Agents[i % len(Agents)]).
	Agents []string
	// Runs is how many; IDPrefix (one letter or more) keeps the ids of two fills apart.
	Runs     int
	IDPrefix string
	// The runs are spread evenly from Start (the oldest) to End (the newest).
	Start, End time.Time
	// One run in ChatEvery is a chat turn and one in ScoreEvery is scored (default 10 each);
	// a chat session holds the turns of SessionRuns consecutive runs (default 1,000).
	ChatEvery, ScoreEvery, SessionRuns int
	// SkipTriggers loads the executions and traces with PostgreSQL's row triggers off, and
	// writes what those triggers derive from them (runs per hour, usage rollups, trace
	// rollups and their bins) in one grouped statement each, as the triggers would
	// (TestFillHistorySkipTriggers compares the two): the per-row triggers cost 80 % of a load
	// (100,000 runs: 33 s with them, 6.4 s without). SQLite's load keeps its triggers.
	SkipTriggers bool
	// Pack is the elected leader's pass over the trace rollups (store.TraceRollupPack), run
	// after the rows are loaded: the tables are then as a running server's leader keeps them
	// (the trace summary reads the packed rows), not as a bulk load leaves them. nil: none.
	Pack func(ctx context.Context) error
}

// FillHistory bulk-loads finished runs in the shapes the API writes them, a few statements
// in all (rows made by the database, not sent one by one), so that tests and benchmarks can
// look at a long history in minutes: per run an execution (a top one: root_id empty) with its
// trace, five spans (ids of 16 hex digits) and one
// batch of frames; one run in 50 failed; every tenth a chat turn (two messages, in sessions
// of up to 1,000 runs); every tenth scored (see ChatEvery, ScoreEvery and SessionRuns). dialect is "postgres" or "sqlite"; db is the store's
// database, migrated.
func FillHistory(ctx context.Context, db *sql.DB, dialect string, h History) error {
	if h.Runs <= 0 || len(h.Agents) == 0 {
		return fmt.Errorf("fill history: no runs or no agents")
	}
	id := func(kind string) string { // a 27-character id: kind, prefix, zero-padded run number
		width := 26 - len(h.IDPrefix)
		if dialect == "postgres" {
			return fmt.Sprintf("'%s%s' || lpad(i::text, %d, '0')", kind, h.IDPrefix, width)
		}
		return fmt.Sprintf("'%s%s' || printf('%%0%dd', i)", kind, h.IDPrefix, width)
	}
	session := func() string { // the chat session of run i
		if dialect == "postgres" {
			return fmt.Sprintf("'C%s' || lpad(((i - 1) / %d)::text, %d, '0')", h.IDPrefix, h.SessionRuns, 26-len(h.IDPrefix))
		}
		return fmt.Sprintf("'C%s' || printf('%%0%dd', (i - 1) / %d)", h.IDPrefix, 26-len(h.IDPrefix), h.SessionRuns)
	}
	spanID := func(j string) string { // 16 hex digits, as the runtime's span ids
		if dialect == "postgres" {
			return fmt.Sprintf("lpad(to_hex(i * 8 + %s), 16, '0')", j)
		}
		return fmt.Sprintf("printf('%%016x', i * 8 + %s)", j)
	}
	if h.ChatEvery <= 0 {
		h.ChatEvery = 10
	}
	if h.ScoreEvery <= 0 {
		h.ScoreEvery = 10
	}
	if h.SessionRuns <= 0 {
		h.SessionRuns = 1000
	}
	start, end := h.Start.UnixMilli(), h.End.UnixMilli()
	step := float64(end-start) / float64(max(h.Runs-1, 1))
	agents := make([]string, len(h.Agents))
	for i, a := range h.Agents {
		agents[i] = fmt.Sprintf("WHEN %d THEN '%s'", i, a)
	}
	// runs(i, at, agent, failed, chat): one row per run, numbered from 1.
	// What every run has: the triggers' derived rows are written from the same expressions.
	const (
		promptTokens, completionTokens, cost = "42", "18", "0.00012"
		duration                             = "(200 + i % 1800)"
	)
	runs := fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d),
		runs AS (SELECT i, CAST(%d + (i - 1) * %f AS BIGINT) AS at, CASE i %% %d %s END AS agent,
			(i %% 50 = 0) AS failed, (i %% %d = %d) AS chat FROM n)`, h.Runs, start, step, len(agents), strings.Join(agents, " "),
		h.ChatEvery, h.ChatEvery/2)
	ws := "'" + h.Workspace + "'"
	status := "CASE WHEN failed THEN 'failed' ELSE 'completed' END"
	stmts := []string{
		runs + ` INSERT INTO chat_sessions (id, workspace_id, agent_id, title, metadata, message_count, last_message_at, created_at, updated_at)
			SELECT ` + session() + `, ` + ws + `, min(agent), 'history', '{}', 2 * count(*), max(at), min(at), max(at) FROM runs WHERE chat GROUP BY (i - 1) / ` + fmt.Sprint(h.SessionRuns),
		runs + ` INSERT INTO executions (id, workspace_id, agent_id, root_id, session_id, source, status, input, output, error, metadata,
			prompt_tokens, completion_tokens, cost, duration_ms, trace_id, timeout_ms, created_at, started_at, completed_at, updated_at,
			attempt, model_called, seq_reserved)
			SELECT ` + id("E") + `, ` + ws + `, agent, '', CASE WHEN chat THEN ` + session() + ` END,
			CASE WHEN chat THEN 'chat' ELSE 'api' END, ` + status + `,
			'{"message":"What is the status of order ' || i || '? Please answer briefly."}',
			CASE WHEN failed THEN NULL ELSE '{"content":"Order ' || i || ' shipped yesterday and arrives within three business days."}' END,
			CASE WHEN failed THEN 'provider openai: 503 Service Unavailable' END, '{}',
			` + promptTokens + `, ` + completionTokens + `, ` + cost + `, ` + duration + `, ` + id("T") + `, 300000, at, at, at + ` + duration + `, at + ` + duration + `, 1, ` + boolean(dialect, true) + `, 64
			FROM runs`,
		runs + ` INSERT INTO traces (id, workspace_id, execution_id, agent_id, session_id, name, status, prompt_tokens, completion_tokens, cost,
			duration_ms, metadata, started_at, ended_at, created_at)
			SELECT ` + id("T") + `, ` + ws + `, ` + id("E") + `, agent, CASE WHEN chat THEN ` + session() + ` END, 'agent run', ` + status + `,
			` + promptTokens + `, ` + completionTokens + `, ` + cost + `, ` + duration + `, '{}', at, at + ` + duration + `, at FROM runs`,
		runs + `, k(j, name, kind) AS (VALUES (1, 'agent run', 'agent'), (2, 'render prompt', 'prompt'), (3, 'guardrails', 'guardrail'),
			(4, 'chat gpt-4o-mini', 'llm'), (5, 'output', 'output'))
			INSERT INTO spans (workspace_id, trace_id, id, parent_span_id, name, kind, status, started_at, ended_at, model, provider, input, output,
			prompt_tokens, completion_tokens, cost, attributes)
			SELECT ` + ws + `, ` + id("T") + `, ` + spanID("j") + `, CASE WHEN j > 1 THEN ` + spanID("1") + ` END, name, kind,
			CASE WHEN failed AND j IN (1, 4) THEN 'error' ELSE 'ok' END, at + j, at + ` + duration + ` - j,
			CASE WHEN j = 4 THEN 'gpt-4o-mini' END, CASE WHEN j = 4 THEN 'openai' END,
			'{"messages":[{"role":"user","content":"What is the status of order ' || i || '?"}]}',
			'{"content":"Order ' || i || ' shipped yesterday."}', CASE WHEN j = 4 THEN ` + promptTokens + ` ELSE 0 END, CASE WHEN j = 4 THEN ` + completionTokens + ` ELSE 0 END,
			CASE WHEN j = 4 THEN ` + cost + ` ELSE 0 END, '{}' FROM runs, k`,
		runs + ` INSERT INTO execution_events (execution_id, seq_from, seq_to, frames)
			SELECT ` + id("E") + `, 1, 4, '[{"seq":1,"event":"status","data":{"status":"running"}},{"seq":2,"event":"content","data":{"delta":"Order ' || i ||
			' shipped yesterday"}},{"seq":3,"event":"content","data":{"delta":" and arrives within three business days."}},{"seq":4,"event":"done","data":{"status":"completed"}}]' FROM runs`,
		runs + `, k(j, role) AS (VALUES (1, 'user'), (2, 'assistant'))
			INSERT INTO chat_messages (id, workspace_id, session_id, seq, role, content, execution_id, prompt_tokens, completion_tokens, created_at)
			SELECT ` + id("M") + ` || j, ` + ws + `, ` + session() + `, ((i - 1) % ` + fmt.Sprint(h.SessionRuns) + `) / ` + fmt.Sprint(h.ChatEvery) + ` * 2 + j, role,
			CASE j WHEN 1 THEN 'What is the status of order ' || i || '?' ELSE 'Order ' || i || ' shipped yesterday.' END,
			` + id("E") + `, 0, 0, at FROM runs, k WHERE chat`,
		runs + ` INSERT INTO scores (id, workspace_id, name, data_type, value, execution_id, trace_id, source, comment, metadata, created_at, updated_at)
			SELECT ` + id("Q") + `, ` + ws + `, 'helpfulness', 'numeric', i % 5, ` + id("E") + `, ` + id("T") + `, 'api', '', '{}', at + 5000, at + 5000
			FROM runs WHERE i % ` + fmt.Sprint(h.ScoreEvery) + ` = 0`,
	}
	// Statements 1 and 2 insert the executions and the traces: with SkipTriggers, on
	// PostgreSQL, without their row triggers, and then what those derive, grouped. Each is
	// written as its trigger would (migrations 00020, 00032, 00037): shard = hashtext(id) & 7,
	// a row per hour and per day.
	replica := map[int]bool{}
	if h.SkipTriggers && dialect == "postgres" {
		replica[1], replica[2] = true, true
		periods := ", (VALUES (3600000::bigint), (86400000)) p(ms)"
		// The figures both rollups add up per group, and their upsert onto the row r.
		sums := "count(*), sum(CASE WHEN failed THEN 1 ELSE 0 END), sum(" + promptTokens + "), sum(" + completionTokens + "), sum(" + cost + "::double precision)"
		addSums := "runs = r.runs + excluded.runs, errors = r.errors + excluded.errors, prompt_tokens = r.prompt_tokens + excluded.prompt_tokens, " +
			"completion_tokens = r.completion_tokens + excluded.completion_tokens, cost = r.cost + excluded.cost"
		stmts = append(stmts,
			runs+` INSERT INTO execution_hours AS h (workspace_id, hour, shard, n)
			SELECT `+ws+`, at / 3600000 * 3600000, hashtext(`+id("E")+`) & 7, count(*) FROM runs GROUP BY 2, 3
			ON CONFLICT (workspace_id, hour, shard) DO UPDATE SET n = h.n + excluded.n`,
			runs+` INSERT INTO usage_rollups AS r (workspace_id, dimension, period, period_start, agent_id, key, shard, runs, errors,
				prompt_tokens, completion_tokens, cost)
			SELECT `+ws+`, 'model', p.ms, at / p.ms * p.ms, agent, '', hashtext(`+id("E")+`) & 7, `+sums+` FROM runs`+periods+` GROUP BY 3, 4, 5, 7
			ON CONFLICT (workspace_id, dimension, period, period_start, agent_id, key, shard) DO UPDATE SET `+addSums,
			runs+` INSERT INTO trace_rollups AS r (workspace_id, period, period_start, agent_id, model, shard, runs, errors, prompt_tokens,
				completion_tokens, cost)
			SELECT `+ws+`, p.ms, at / p.ms * p.ms, agent, '', hashtext(`+id("T")+`) & 7, `+sums+` FROM runs`+periods+` GROUP BY 2, 3, 4, 6
			ON CONFLICT (workspace_id, period, period_start, agent_id, model, shard) DO UPDATE SET `+addSums,
			runs+` INSERT INTO trace_rollup_bins AS b (workspace_id, period, period_start, agent_id, model, bin, count)
			SELECT `+ws+`, p.ms, at / p.ms * p.ms, agent, '', trace_rollup_bin(`+duration+`), count(*) FROM runs`+periods+` GROUP BY 2, 3, 4, 6
			ON CONFLICT (workspace_id, period, period_start, agent_id, model, bin) DO UPDATE SET count = b.count + excluded.count`)
	}
	if err := load(ctx, db, stmts, replica); err != nil {
		return fmt.Errorf("fill history: %w", err)
	}
	// After the load, on the pool: the pass may need the one connection of an in-memory
	// SQLite store.
	if h.Pack != nil {
		if err := h.Pack(ctx); err != nil {
			return fmt.Errorf("fill history: pack the trace rollups: %w", err)
		}
	}
	// The planner's statistics and PostgreSQL's visibility map, as autovacuum keeps them on a
	// long-running server.
	q := "ANALYZE"
	if dialect == "postgres" {
		q = "VACUUM ANALYZE executions, traces, spans, execution_events, chat_sessions, chat_messages, scores, trace_rollups, trace_rollup_bins, trace_rollup_sketches, score_values, usage_rollups, execution_hours"
	}
	_, err := db.ExecContext(ctx, q)
	return err
}

// load runs the statements on one connection of db, with PostgreSQL's triggers off for
// those whose index replica holds (session_replication_role, a setting of the connection).
func load(ctx context.Context, db *sql.DB, stmts []string, replica map[int]bool) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	role := func(r string) error {
		_, err := conn.ExecContext(ctx, "SET session_replication_role = "+r)
		return err
	}
	for i, q := range stmts {
		if replica[i] {
			if err := role("replica"); err != nil {
				return err
			}
		}
		_, err := conn.ExecContext(ctx, q)
		if replica[i] {
			err = errors.Join(err, role("DEFAULT"))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func boolean(dialect string, v bool) string {
	if dialect == "postgres" {
		return fmt.Sprint(v)
	}
	if v {
		return "1"
	}
	return "0"
}
