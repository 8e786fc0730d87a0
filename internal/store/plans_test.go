package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
)

// recorder keeps every read query a Store sends, so a test can ask PostgreSQL how it plans
// exactly those statements.
type recorder struct {
	dbtx
	queries []recordedQuery
}

type recordedQuery struct {
	sql  string
	args []any
}

func (r *recorder) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	r.queries = append(r.queries, recordedQuery{q, args})
	return r.dbtx.QueryContext(ctx, q, args...)
}

func (r *recorder) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	r.queries = append(r.queries, recordedQuery{q, args})
	return r.dbtx.QueryRowContext(ctx, q, args...)
}

// historyTables are the tables that grow with history: no read may scan one of them whole.
// The trace rollups grow with its hours and agents.
var historyTables = map[string]bool{"executions": true, "execution_events": true, "traces": true, "spans": true,
	"chat_messages": true, "scores": true, "chat_sessions": true, "approvals": true,
	"trace_rollups": true, "trace_rollup_bins": true, "trace_rollup_sketches": true}

// TestHistoryReadsUseIndexes: over a long history every list, filter, page, cursor, lookup
// and summary query the API runs on it is planned without a scan of a whole history table:
// on PostgreSQL over 120,000 runs (600,000 spans, 120,000 chat messages, 120,000 scores),
// asked with EXPLAIN; on SQLite over 4,000 runs (its planner does not weigh table sizes
// the way PostgreSQL's does, and the race detector slows its code tenfold), asked with
// EXPLAIN QUERY PLAN.
//
// The two fills run side by side: SQLite's keeps this process busy, PostgreSQL's its server.
func TestHistoryReadsUseIndexes(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		s := openTestPostgres(t)
		checkHistoryPlans(t, s, 120_000, 100_000, pgSeqScans)
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		s, err := Open(context.Background(), "memory")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		checkHistoryPlans(t, s, 4_000, 2_000, sqliteScans)
	})
}

// checkHistoryPlans fills the store with runs and fails on every recorded query whose plan
// (from scans) reads a whole history table of at least bigRows rows.
func checkHistoryPlans(t *testing.T, s *Store, runs, bigRows int, scans func(*testing.T, *sql.DB, recordedQuery, map[string]bool) []string) {
	ctx := context.Background()
	mustModel(t, s)
	ws := mustWorkspace(t, s, "history")
	other := mustWorkspace(t, s, "other")
	var agents []string
	for i := range 4 {
		a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: fmt.Sprintf("agent %d", i), Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a.ID)
	}
	now := time.Now()
	for _, h := range []dbtest.History{
		{Workspace: ws, Agents: agents, Runs: runs, IDPrefix: "a", ChatEvery: 2, ScoreEvery: 1, SkipTriggers: true, Start: now.Add(-30 * 24 * time.Hour), End: now,
			Pack: packAll(s)},
		{Workspace: other, Agents: []string{"someone-else"}, Runs: runs / 6, IDPrefix: "b", SkipTriggers: true, Start: now.Add(-30 * 24 * time.Hour), End: now,
			Pack: packAll(s)},
	} {
		if err := dbtest.FillHistory(ctx, s.db, string(s.dialect), h); err != nil {
			t.Fatal(err)
		}
	}

	big := bigTables(t, s.db, bigRows)
	rec := &recorder{dbtx: s.r}
	s.r = rec
	x, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{}, domain.Page{Page: 1, Limit: 20})
	if err != nil || len(x) != 20 {
		t.Fatalf("list: %d %v", len(x), err)
	}
	last := x[len(x)-1]
	session := *firstWith(t, s, ws).SessionID
	day := domain.Time{Time: now.Add(-24 * time.Hour)}
	calls := map[string]func() error{
		"executions page 1": func() error {
			_, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		// Deep, but not near the end of the table, where sorting the few rows left is cheaper.
		"executions page 2500": func() error {
			_, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{}, domain.Page{Page: runs / 48, Limit: 20})
			return err
		},
		"executions cursor": func() error {
			_, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{}, domain.Page{Page: 2, Limit: 20, After: &domain.Keyset{CreatedAt: last.CreatedAt, ID: last.ID}})
			return err
		},
		"executions ?agent_id": func() error {
			_, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{AgentID: agents[1]}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"executions ?status": func() error {
			_, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{Status: domain.StatusFailed}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"executions ?status=rejected (none)": func() error {
			_, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{Status: domain.StatusRejected}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"executions ?source": func() error {
			_, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{Source: "chat"}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"executions ?session_id": func() error {
			_, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{SessionID: session}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"executions ?end_user_id": func() error {
			_, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{EndUserID: "nobody"}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"executions ?experiment_id": func() error {
			_, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{ExperimentID: "none"}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"executions ?created_after": func() error {
			_, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{CreatedAfter: day}, domain.Page{Page: 3, Limit: 20})
			return err
		},
		"execution":        func() error { _, err := s.ExecutionGet(ctx, ws, last.ID); return err },
		"execution frames": func() error { _, err := s.EventList(ctx, last.ID, 0); return err },
		"traces page 1": func() error {
			_, _, err := s.TraceList(ctx, ws, domain.TraceFilter{}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"traces page 5000": func() error {
			_, _, err := s.TraceList(ctx, ws, domain.TraceFilter{}, domain.Page{Page: 5000, Limit: 20})
			return err
		},
		"traces ?agent_id": func() error {
			_, _, err := s.TraceList(ctx, ws, domain.TraceFilter{AgentID: agents[2]}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"traces ?status": func() error {
			_, _, err := s.TraceList(ctx, ws, domain.TraceFilter{Status: "error"}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"traces ?execution_id": func() error {
			_, _, err := s.TraceList(ctx, ws, domain.TraceFilter{ExecutionID: last.ID}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"traces ?session_id": func() error {
			_, _, err := s.TraceList(ctx, ws, domain.TraceFilter{SessionID: session}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"traces ?end_user_id": func() error {
			_, _, err := s.TraceList(ctx, ws, domain.TraceFilter{EndUserID: "nobody"}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"traces ?service_name": func() error {
			_, _, err := s.TraceList(ctx, ws, domain.TraceFilter{ServiceName: "checkout"}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		// Studio's ranges: slow runs, and cost and latency bounds together with a time window.
		"traces ?min_duration_ms": func() error {
			_, _, err := s.TraceList(ctx, ws, domain.TraceFilter{MinDurationMS: domain.PtrTo(int64(1500))}, domain.Page{Page: 2, Limit: 20})
			return err
		},
		"traces ?cost and latency ranges": func() error {
			_, _, err := s.TraceList(ctx, ws, domain.TraceFilter{MinCost: domain.PtrTo(0.0001), MaxCost: domain.PtrTo(0.01), MaxDurationMS: domain.PtrTo(int64(1000)),
				CreatedAfter: day}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"trace with spans": func() error { _, err := s.TraceGet(ctx, ws, last.TraceID); return err },
		"trace summary 24h": func() error {
			_, err := s.TraceSummary(ctx, ws, day, domain.Now(), time.Hour)
			return err
		},
		"trace summary 30d": func() error {
			_, err := s.TraceSummary(ctx, ws, domain.Time{Time: now.Add(-30 * 24 * time.Hour)}, domain.Now(), 24*time.Hour)
			return err
		},
		"scores page 1": func() error {
			_, _, err := s.ScoreList(ctx, ws, domain.ScoreFilter{}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"scores ?name": func() error {
			_, _, err := s.ScoreList(ctx, ws, domain.ScoreFilter{Name: "helpfulness"}, domain.Page{Page: 2, Limit: 20})
			return err
		},
		"scores ?source": func() error {
			_, _, err := s.ScoreList(ctx, ws, domain.ScoreFilter{Source: "eval"}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"scores ?experiment_id": func() error {
			_, _, err := s.ScoreList(ctx, ws, domain.ScoreFilter{ExperimentID: "none"}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"scores ?execution_id": func() error {
			_, _, err := s.ScoreList(ctx, ws, domain.ScoreFilter{ExecutionID: last.ID}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"scores ?trace_id": func() error {
			_, _, err := s.ScoreList(ctx, ws, domain.ScoreFilter{TraceID: last.TraceID}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"scores ?session_id": func() error {
			_, _, err := s.ScoreList(ctx, ws, domain.ScoreFilter{SessionID: session}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"scores summary": func() error {
			_, _, err := s.ScoreSummary(ctx, ws, domain.ScoreFilter{}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"scores summary ?source": func() error {
			_, _, err := s.ScoreSummary(ctx, ws, domain.ScoreFilter{Source: "eval"}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"chat sessions ?agent_id": func() error {
			_, _, err := s.ChatSessionList(ctx, ws, domain.ChatSessionFilter{AgentID: agents[0]}, domain.Page{Page: 1, Limit: 20})
			return err
		},
		"chat messages": func() error {
			_, _, err := s.ChatMessageList(ctx, ws, session, domain.Page{Page: 2, Limit: 20})
			return err
		},
		"chat history of a turn": func() error {
			_, _, err := s.ChatHistoryTail(ctx, ws, session, func(*domain.ChatMessage) bool { return true })
			return err
		},
		"chat reply of a run": func() error {
			_, err := s.ChatReplyOf(ctx, ws, last.ID)
			if IsNotFound(err) {
				return nil
			}
			return err
		},
		"approvals": func() error {
			_, _, err := s.ApprovalList(ctx, ws, "", "", domain.Page{Page: 1, Limit: 20})
			return err
		},
		"approvals ?status": func() error {
			_, _, err := s.ApprovalList(ctx, ws, "pending", "", domain.Page{Page: 1, Limit: 20})
			return err
		},
		// The common values, left out of the partial indexes of status and source (migration
		// 00036): read off the workspace's index of all its runs, where most rows match.
		"executions ?status=completed": func() error {
			_, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{Status: domain.StatusCompleted}, domain.Page{Page: 2, Limit: 20})
			return err
		},
		"executions ?source=api": func() error {
			_, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{Source: "api"}, domain.Page{Page: 2, Limit: 20})
			return err
		},
		"traces ?status=completed": func() error {
			_, _, err := s.TraceList(ctx, ws, domain.TraceFilter{Status: domain.StatusCompleted}, domain.Page{Page: 2, Limit: 20})
			return err
		},
		"executions in flight (plan limit)": func() error {
			_, err := s.ExecutionCount(ctx, ws, domain.Time{}, []string{domain.StatusPending, domain.StatusRunning, domain.StatusAwaitingApproval})
			return err
		},
		"executions not ended (workspace purge)": func() error {
			_, err := s.ExecutionsActiveList(ctx, ws, 100)
			return err
		},
	}
	// The filters on the values the partial indexes hold read them, on PostgreSQL in a generic
	// plan too (pgx prepares its statements, and PostgreSQL plans a prepared statement without
	// its parameters after a few runs).
	partial := map[string]string{"executions ?status": "executions_status", "executions ?status=rejected (none)": "executions_status",
		"executions ?source": "executions_source", "traces ?status": "traces_status",
		"executions in flight (plan limit)": "executions_status", "executions not ended (workspace purge)": "executions_status"}
	// The totals of the filters BenchmarkHistory times count on the index alone (no row of
	// the table read), so counting up to TotalCap + 1 costs the same at any history size.
	indexOnly := map[string]bool{"executions ?agent_id": true, "executions ?status": true}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			rec.queries = nil
			if err := call(); err != nil {
				t.Fatal(err)
			}
			if len(rec.queries) == 0 {
				t.Fatal("no query was recorded")
			}
			for _, q := range rec.queries {
				if scans := scans(t, s.db, q, big); len(scans) > 0 {
					t.Errorf("sequential scan of %s in\n%s", strings.Join(scans, ", "), q.sql)
				}
				if idx := partial[name]; idx != "" && !planUsesIndex(t, s, q, idx) {
					t.Errorf("the plan does not read %s:\n%s", idx, q.sql)
				}
				if indexOnly[name] && strings.HasPrefix(q.sql, "SELECT count(*)") && !countsOnIndex(t, s, q) {
					t.Errorf("the count reads rows of executions, not its index alone:\n%s", q.sql)
				}
			}
		})
	}
}

// firstWith returns the newest run of the workspace that belongs to a chat session.
func firstWith(t *testing.T, s *Store, ws string) *domain.Execution {
	t.Helper()
	l, _, err := s.ExecutionList(context.Background(), ws, domain.ExecutionFilter{Source: "chat"}, domain.Page{Page: 1, Limit: 1})
	if err != nil || len(l) == 0 || l[0].SessionID == nil {
		t.Fatalf("no chat run: %v", err)
	}
	return l[0]
}

// bigTables returns the history tables of at least rows rows (for a table of a few thousand
// rows a sequential scan can be the right plan).
func bigTables(t *testing.T, db *sql.DB, rows int) map[string]bool {
	t.Helper()
	big := map[string]bool{}
	for name := range historyTables {
		var n int
		if err := db.QueryRowContext(context.Background(), "SELECT count(*) FROM "+name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		big[name] = n >= rows
	}
	return big
}

// pgSeqScans returns the big history tables PostgreSQL's plan of q reads with a sequential scan.
func pgSeqScans(t *testing.T, db *sql.DB, q recordedQuery, big map[string]bool) []string {
	t.Helper()
	var raw string
	if err := db.QueryRowContext(context.Background(), "EXPLAIN (FORMAT JSON) "+q.sql, q.args...).Scan(&raw); err != nil {
		t.Fatalf("explain %s: %v", q.sql, err)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal([]byte(raw), &plans); err != nil {
		t.Fatal(err)
	}
	var found []string
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.NodeType == "Seq Scan" && big[n.Relation] {
			found = append(found, n.Relation)
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	for _, p := range plans {
		walk(p.Plan)
	}
	return found
}

// planUsesIndex says whether the plan of q reads the index named idx: on PostgreSQL its
// generic plan (planned without the values of its parameters), on SQLite its plan.
func planUsesIndex(t *testing.T, s *Store, q recordedQuery, idx string) bool {
	t.Helper()
	ctx := context.Background()
	if s.dialect == SQLite {
		return slices.ContainsFunc(sqlitePlan(t, s.db, q), func(detail string) bool { return strings.Contains(detail, " INDEX "+idx+" ") })
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	values := make([]string, len(q.args))
	for i, a := range q.args {
		if v, ok := a.(driver.Valuer); ok {
			if a, err = v.Value(); err != nil {
				t.Fatal(err)
			}
		}
		switch a := a.(type) {
		case string:
			values[i] = "'" + strings.ReplaceAll(a, "'", "''") + "'"
		case int, int64:
			values[i] = fmt.Sprint(a)
		default:
			t.Fatalf("argument %d of %s: %T", i+1, q.sql, a)
		}
	}
	for _, stmt := range []string{"SET plan_cache_mode = force_generic_plan", "PREPARE generic AS " + q.sql} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	defer func() {
		_, _ = conn.ExecContext(ctx, "DEALLOCATE generic")
		_, _ = conn.ExecContext(ctx, "RESET plan_cache_mode")
	}()
	var plan string
	execute := "EXECUTE generic"
	if len(values) > 0 {
		execute += "(" + strings.Join(values, ", ") + ")"
	}
	if err := conn.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+execute).Scan(&plan); err != nil {
		t.Fatalf("explain %s: %v", execute, err)
	}
	return strings.Contains(plan, `"Index Name": "`+idx+`"`)
}

// countsOnIndex says whether every read of executions in the plan of q is of an index alone:
// on PostgreSQL an Index Only Scan, on SQLite a covering index.
func countsOnIndex(t *testing.T, s *Store, q recordedQuery) bool {
	t.Helper()
	if s.dialect == SQLite {
		for _, detail := range sqlitePlan(t, s.db, q) {
			if f := strings.Fields(detail); len(f) >= 2 && f[1] == "executions" && !strings.Contains(detail, " USING COVERING INDEX ") {
				return false
			}
		}
		return true
	}
	var raw string
	if err := s.db.QueryRowContext(context.Background(), "EXPLAIN (FORMAT JSON) "+q.sql, q.args...).Scan(&raw); err != nil {
		t.Fatalf("explain %s: %v", q.sql, err)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal([]byte(raw), &plans); err != nil {
		t.Fatal(err)
	}
	only, reads := true, 0
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.Relation == "executions" {
			reads++
			only = only && n.NodeType == "Index Only Scan"
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	for _, p := range plans {
		walk(p.Plan)
	}
	return only && reads > 0
}

type planNode struct {
	NodeType string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Plans    []planNode `json:"Plans"`
}

// sqliteScans returns the big history tables SQLite's plan of q reads whole ("SCAN t", with or
// without an index, where an indexed read says "SEARCH t USING … (column=?)").
func sqliteScans(t *testing.T, db *sql.DB, q recordedQuery, big map[string]bool) []string {
	t.Helper()
	var found []string
	for _, detail := range sqlitePlan(t, db, q) {
		if f := strings.Fields(detail); len(f) >= 2 && f[0] == "SCAN" && big[f[1]] {
			found = append(found, detail)
		}
	}
	return found
}

// sqlitePlan returns the steps (details) of SQLite's plan of q.
func sqlitePlan(t *testing.T, db *sql.DB, q recordedQuery) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q.sql, q.args...)
	if err != nil {
		t.Fatalf("explain %s: %v", q.sql, err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return steps
}
