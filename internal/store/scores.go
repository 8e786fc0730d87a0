package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
)

// clause is the filter's WHERE clause and its arguments ($1 is the workspace).
func scoreFilterClause(f domain.ScoreFilter, ws string) (string, []any) {
	where, args := whereClause("", ws, []cond{
		{"name = $%d", f.Name}, {"config_id = $%d", f.ConfigID}, {"data_type = $%d", f.DataType}, {"source = $%d", f.Source}, {"rule_id = $%d", f.RuleID},
		{"execution_id = $%d", f.ExecutionID}, {"trace_id = $%d", f.TraceID}, {"span_id = $%d", f.SpanID}, {"session_id = $%d", f.SessionID},
		{"execution_id IN (SELECT execution_id FROM experiment_items WHERE experiment_id = $%d)", f.ExperimentID},
	})
	if !f.CreatedAfter.IsZero() {
		args = append(args, f.CreatedAfter)
		where += fmt.Sprintf(" AND created_at > $%d", len(args))
	}
	if !f.CreatedBefore.IsZero() {
		args = append(args, f.CreatedBefore)
		where += fmt.Sprintf(" AND created_at < $%d", len(args))
	}
	return where, args
}

const scoreColumns = `id, workspace_id, name, config_id, data_type, value, string_value, execution_id, trace_id, span_id, session_id,
	source, rule_id, comment, author_type, author_id, author_name, metadata, created_at, updated_at`

func scanScore(row interface{ Scan(...any) error }) (*domain.Score, error) {
	var sc domain.Score
	var aType, aID, aName *string
	if err := row.Scan(&sc.ID, &sc.WorkspaceID, &sc.Name, &sc.ConfigID, &sc.DataType, &sc.Value, &sc.StringValue,
		&sc.ExecutionID, &sc.TraceID, &sc.SpanID, &sc.SessionID, &sc.Source, &sc.RuleID, &sc.Comment, &aType, &aID, &aName,
		&sc.Metadata, &sc.CreatedAt, &sc.UpdatedAt); err != nil {
		return nil, err
	}
	if aType != nil {
		sc.Author = &domain.ScoreAuthor{Type: *aType, ID: domain.Deref(aID), Name: domain.Deref(aName)}
	}
	if sc.Metadata == nil {
		sc.Metadata = domain.JSONObject{}
	}
	return &sc, nil
}

// ScoreList returns one page of a workspace's scores, newest first, and the total count.
func (s *Store) ScoreList(ctx context.Context, ws string, f domain.ScoreFilter, p domain.Page) ([]*domain.Score, int, error) {
	where, args := scoreFilterClause(f, ws)
	return listPage(ctx, s, "scores", scoreColumns, where, args, newestFirst, p, scanScore)
}

// ScoreGet returns one score of the workspace.
func (s *Store) ScoreGet(ctx context.Context, ws, id string) (*domain.Score, error) {
	return getByID(ctx, s, "score", "scores", scoreColumns, ws, id, scanScore)
}

// ScoreCreate checks a score and inserts it, in one transaction. Under a config (ConfigID)
// the config must exist and not be archived, Name and DataType must be the config's (or
// empty: they are filled in), and the value must pass ScoreConfig.Apply; without one,
// DataType is required and the value is kept as sent. The targets must exist in the
// workspace and agree with each other; the ids containing the most specific one are filled
// in (see scoreTargets). Rule violations are *ValidationError or *ReferenceError, naming the
// field.
func (s *Store) ScoreCreate(ctx context.Context, sc *domain.Score) (*domain.Score, error) {
	var out *domain.Score
	err := s.InTx(ctx, func(tx *Store) error {
		if err := tx.scoreInsert(ctx, sc); err != nil {
			return err
		}
		var err error
		out, err = tx.ScoreGet(ctx, sc.WorkspaceID, sc.ID)
		return err
	})
	return out, err
}

// scoreInsert validates and stores a score as ScoreCreate does, without reading it back: the
// evaluators' scores (ExperimentItemFinish, JudgmentComplete) are written inside the
// transaction SQLite's one writer runs, and nothing reads them there.
func (s *Store) scoreInsert(ctx context.Context, sc *domain.Score) error {
	return s.InTx(ctx, func(tx *Store) error {
		if err := tx.ScoreValidate(ctx, sc); err != nil {
			return err
		}
		if err := tx.scoreTargets(ctx, sc); err != nil {
			return err
		}
		if sc.ID == "" {
			sc.ID = NewID()
		}
		if sc.Source == "" {
			sc.Source = domain.ScoreSourceAPI
		}
		var aType, aID, aName *string
		if a := sc.Author; a != nil {
			aType, aID, aName = &a.Type, &a.ID, &a.Name
		}
		_, err := tx.exec(ctx, `INSERT INTO scores (id, workspace_id, name, config_id, data_type, value, string_value, execution_id, trace_id,
			span_id, session_id, source, rule_id, comment, author_type, author_id, author_name, metadata, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $19)`,
			sc.ID, sc.WorkspaceID, sc.Name, sc.ConfigID, sc.DataType, sc.Value, sc.StringValue, sc.ExecutionID, sc.TraceID,
			sc.SpanID, sc.SessionID, sc.Source, sc.RuleID, sc.Comment, aType, aID, aName, sc.Metadata, domain.Now())
		if isUniqueViolation(err) {
			return &ConflictError{Message: fmt.Sprintf("score %s already exists", sc.ID)}
		}
		if err != nil {
			return fmt.Errorf("insert score: %w", err)
		}
		return nil
	})
}

// ScoreValidate checks a score's name, data type and value as ScoreCreate does (targets
// aside) and completes them: under a config, the config's name and data type and the value
// and label ScoreConfig.Apply derives. Evaluators check the scores they give through it,
// stored or not.
func (s *Store) ScoreValidate(ctx context.Context, sc *domain.Score) error {
	var err error
	if sc.ConfigID != nil {
		c, err := s.ScoreConfigGet(ctx, sc.WorkspaceID, *sc.ConfigID)
		if IsNotFound(err) {
			return &ReferenceError{Field: "config_id", Resource: "score config", ID: *sc.ConfigID}
		}
		if err != nil {
			return err
		}
		switch {
		case c.Archived:
			return &ValidationError{Field: "config_id", Message: fmt.Sprintf("score config %s (%s) is archived and takes no new scores; unarchive it or use another", c.Name, c.ID)}
		case sc.Name != "" && sc.Name != c.Name:
			return &ValidationError{Field: "name", Message: fmt.Sprintf("must be %q, the name of score config %s, or left out; got %q", c.Name, c.ID, sc.Name)}
		case sc.DataType != "" && sc.DataType != c.DataType:
			return &ValidationError{Field: "data_type", Message: fmt.Sprintf("score config %s (%s) is %s, got %s", c.Name, c.ID, c.DataType, sc.DataType)}
		}
		sc.Name, sc.DataType = c.Name, c.DataType
		if sc.Value, sc.StringValue, err = c.Apply(sc.Value, sc.StringValue); err != nil {
			return err
		}
	} else {
		if sc.DataType == "" {
			return &ValidationError{Field: "data_type", Message: "is required for a score without config_id: one of " + strings.Join(domain.ScoreDataTypes, ", ")}
		}
		if sc.Value, sc.StringValue, err = applyUnconfigured(sc.DataType, sc.Value, sc.StringValue); err != nil {
			return err
		}
	}
	return nil
}

// scoreTargets checks that the targets a score names exist in its workspace and agree with
// each other, and fills in the ids that contain the most specific one: an execution's trace
// and chat session, a trace's execution and session. So listing scores by trace_id finds the
// scores of its execution and spans, and by session_id those of its executions.
//
// A session is a chat session, or a session id that a trace of the workspace carries (traces
// ingested from other frameworks); a span is named by its trace and its id.
func (s *Store) scoreTargets(ctx context.Context, sc *domain.Score) error {
	sc.ExecutionID, sc.TraceID, sc.SpanID, sc.SessionID = emptyAsNull(sc.ExecutionID), emptyAsNull(sc.TraceID), emptyAsNull(sc.SpanID), emptyAsNull(sc.SessionID)
	if sc.ExecutionID == nil && sc.TraceID == nil && sc.SpanID == nil && sc.SessionID == nil {
		return &ValidationError{Field: "execution_id", Message: "a score needs a target: execution_id, trace_id (with span_id for a span) or session_id"}
	}
	if sc.SpanID != nil && sc.TraceID == nil && sc.ExecutionID == nil {
		return &ValidationError{Field: "span_id", Message: "needs trace_id (or execution_id): a span is named by its trace and its id"}
	}
	sessionKnown := false
	// fill sets *dst to v, or checks that the id the caller gave is v.
	fill := func(dst **string, v *string, field, what string) error {
		switch {
		case *dst == nil:
			*dst = v
		case v == nil:
			return &ValidationError{Field: field, Message: fmt.Sprintf("%s has no %s; leave %s out", what, strings.ReplaceAll(field, "_id", ""), field)}
		case **dst != *v:
			return &ValidationError{Field: field, Message: fmt.Sprintf("%s has %s %s, not %s", what, strings.ReplaceAll(field, "_id", ""), *v, **dst)}
		}
		return nil
	}
	if sc.ExecutionID != nil {
		var traceID string
		var sessionID *string
		err := s.r.QueryRowContext(ctx, "SELECT trace_id, session_id FROM executions WHERE workspace_id = $1 AND id = $2",
			sc.WorkspaceID, *sc.ExecutionID).Scan(&traceID, &sessionID)
		if errors.Is(err, sql.ErrNoRows) {
			return &ReferenceError{Field: "execution_id", Resource: "execution", ID: *sc.ExecutionID}
		}
		if err != nil {
			return fmt.Errorf("check execution %s: %w", *sc.ExecutionID, err)
		}
		what := "execution " + *sc.ExecutionID
		if err := fill(&sc.TraceID, &traceID, "trace_id", what); err != nil {
			return err
		}
		if sessionID != nil || sc.SessionID != nil {
			if err := fill(&sc.SessionID, sessionID, "session_id", what); err != nil {
				return err
			}
			sessionKnown = true
		}
	} else if sc.TraceID != nil {
		var execID, sessionID *string
		err := s.r.QueryRowContext(ctx, "SELECT execution_id, session_id FROM traces WHERE workspace_id = $1 AND id = $2",
			sc.WorkspaceID, *sc.TraceID).Scan(&execID, &sessionID)
		if errors.Is(err, sql.ErrNoRows) {
			return &ReferenceError{Field: "trace_id", Resource: "trace", ID: *sc.TraceID}
		}
		if err != nil {
			return fmt.Errorf("check trace %s: %w", *sc.TraceID, err)
		}
		sc.ExecutionID = execID
		if sessionID != nil || sc.SessionID != nil {
			if err := fill(&sc.SessionID, sessionID, "session_id", "trace "+*sc.TraceID); err != nil {
				return err
			}
			sessionKnown = true
		}
	}
	if sc.SpanID != nil {
		ok, err := s.spanExists(ctx, sc.WorkspaceID, *sc.TraceID, *sc.SpanID)
		if err != nil {
			return err
		}
		if !ok {
			return &ReferenceError{Field: "span_id", Resource: "span of trace " + *sc.TraceID, ID: *sc.SpanID}
		}
	}
	if sc.SessionID != nil && !sessionKnown {
		var x int
		err := s.r.QueryRowContext(ctx, `SELECT 1 FROM chat_sessions WHERE workspace_id = $1 AND id = $2
			UNION ALL SELECT 1 FROM traces WHERE workspace_id = $1 AND session_id = $2 LIMIT 1`, sc.WorkspaceID, *sc.SessionID).Scan(&x)
		if errors.Is(err, sql.ErrNoRows) {
			return &ReferenceError{Field: "session_id", Resource: "session", ID: *sc.SessionID}
		}
		if err != nil {
			return fmt.Errorf("check session %s: %w", *sc.SessionID, err)
		}
	}
	return nil
}

// spanExists reports whether trace traceID of the workspace has a span spanID.
func (s *Store) spanExists(ctx context.Context, ws, traceID, spanID string) (bool, error) {
	_, err := s.SpanGet(ctx, ws, traceID, spanID)
	if IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// ScoreUpdate changes the given fields of a score.
func (s *Store) ScoreUpdate(ctx context.Context, ws, id string, p domain.ScorePatch) (*domain.Score, error) {
	var out *domain.Score
	err := s.InTx(ctx, func(tx *Store) error {
		cur, err := tx.ScoreGet(ctx, ws, id)
		if err != nil {
			return err
		}
		var value **float64
		var label **string
		if p.Value != nil || p.StringValue != nil {
			var v *float64
			var l *string
			if cur.ConfigID != nil {
				c, err := tx.ScoreConfigGet(ctx, ws, *cur.ConfigID)
				if err != nil {
					return err
				}
				v, l, err = c.Apply(p.Value, p.StringValue)
				if err != nil {
					return err
				}
			} else if v, l, err = applyUnconfigured(cur.DataType, p.Value, p.StringValue); err != nil {
				return err
			}
			value, label = &v, &l
		}
		if err := tx.update(ctx, "score", "scores", ws, id, []set{
			{"value", value}, {"string_value", label}, {"comment", p.Comment}, {"metadata", p.Metadata},
		}); err != nil {
			return err
		}
		out, err = tx.ScoreGet(ctx, ws, id)
		return err
	})
	return out, err
}

// ScoreDelete removes a score and returns it as it was.
func (s *Store) ScoreDelete(ctx context.Context, ws, id string) (*domain.Score, error) {
	return deleteAsWas(ctx, s, "score", "scores", ws, id, (*Store).ScoreGet, nil)
}

// summaryBuckets is how many buckets a numeric distribution has (and the most distinct
// values shown one by one).
const summaryBuckets = 10

// ScoreSummary returns one page of the summaries of the scores f selects, one per name and
// data type, ordered by name, and how many there are in all. It makes at most four
// queries over the selected scores: the totals of the page's groups, their number (skipped
// when the first page is not full), then for the groups of the page the label counts with
// the counts of numeric groups of few distinct values, and the histograms of the others.
func (s *Store) ScoreSummary(ctx context.Context, ws string, f domain.ScoreFilter, p domain.Page) ([]*domain.ScoreSummary, int, error) {
	where, args := scoreFilterClause(f, ws)
	src := summarySource(f, where)
	rows, err := s.r.QueryContext(ctx, `SELECT name, data_type, `+src.count+`, `+src.mean+`, min(value), max(value), count(DISTINCT value)
		FROM `+src.from("")+` GROUP BY name, data_type ORDER BY name, data_type`+limitClause(p), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("summarize scores: %w", err)
	}
	type key struct{ name, dataType string }
	out := []*domain.ScoreSummary{}
	byKey := map[key]*domain.ScoreSummary{}
	var labelled, few, many []string // names of the page, by what their distribution needs
	err = func() error {
		defer rows.Close()
		for rows.Next() {
			var sm domain.ScoreSummary
			var distinct int
			if err := rows.Scan(&sm.Name, &sm.DataType, &sm.Count, &sm.Mean, &sm.Min, &sm.Max, &distinct); err != nil {
				return err
			}
			sm.Buckets, sm.Categories = []domain.ScoreBucket{}, []domain.ScoreLabelCount{}
			switch sm.DataType {
			case domain.ScoreNumeric:
				if distinct <= summaryBuckets {
					few = append(few, sm.Name)
				} else {
					many = append(many, sm.Name)
				}
			case domain.ScoreCategorical:
				sm.Mean = nil
				fallthrough
			default:
				sm.Min, sm.Max = nil, nil
				labelled = append(labelled, sm.Name)
			}
			out = append(out, &sm)
			byKey[key{sm.Name, sm.DataType}] = &sm
		}
		return rows.Err()
	}()
	if err != nil {
		return nil, 0, fmt.Errorf("summarize scores: %w", err)
	}
	total, err := s.listCount(ctx, p, len(out), src.from("")+" GROUP BY name, data_type", args)
	if err != nil {
		return nil, 0, err
	}
	// in restricts a query to the page's names (the arguments follow the filter's).
	in := func(names []string) (string, []any) {
		a := append([]any{}, args...)
		ph := make([]string, len(names))
		for i, n := range names {
			a = append(a, n)
			ph[i] = fmt.Sprintf("$%d", len(a))
		}
		return " AND name IN (" + strings.Join(ph, ", ") + ")", a
	}
	// The labels, and the values of numeric groups with few of them, in one pass in the
	// order of the index on (workspace_id, name, data_type, value, string_value).
	if len(labelled)+len(few) > 0 {
		cond, a := in(append(append([]string{}, labelled...), few...))
		if len(few) > 0 {
			ph := make([]string, len(few))
			for i, n := range few {
				a = append(a, n)
				ph[i] = fmt.Sprintf("$%d", len(a))
			}
			cond += " AND (data_type <> 'numeric' OR name IN (" + strings.Join(ph, ", ") + "))"
		} else {
			cond += " AND data_type <> 'numeric'"
		}
		err := s.scanRows(ctx, `SELECT name, data_type, value, string_value, `+src.count+` FROM `+src.from(cond)+
			` GROUP BY name, data_type, value, string_value ORDER BY name, data_type, value, string_value`, a,
			func(r *sql.Rows) error {
				var name, dataType string
				var v *float64
				var label *string
				var n int
				if err := r.Scan(&name, &dataType, &v, &label, &n); err != nil {
					return err
				}
				sm := byKey[key{name, dataType}]
				switch {
				case sm == nil:
				case dataType == domain.ScoreNumeric && v != nil:
					sm.Buckets = append(sm.Buckets, domain.ScoreBucket{Lower: *v, Upper: *v, Count: n})
				case dataType != domain.ScoreNumeric:
					scoreSummaryAddLabel(sm, domain.Deref(label), n)
				}
				return nil
			})
		if err != nil {
			return nil, 0, err
		}
		for _, sm := range out {
			sort.SliceStable(sm.Categories, func(i, j int) bool {
				a, b := sm.Categories[i], sm.Categories[j]
				return a.Count > b.Count || a.Count == b.Count && a.Label < b.Label
			})
		}
	}
	if len(many) > 0 {
		for _, name := range many {
			sm := byKey[key{name, domain.ScoreNumeric}]
			lo, width := *sm.Min, (*sm.Max-*sm.Min)/summaryBuckets
			sm.Buckets = make([]domain.ScoreBucket, summaryBuckets)
			for i := range sm.Buckets {
				sm.Buckets[i] = domain.ScoreBucket{Lower: lo + float64(i)*width, Upper: lo + float64(i+1)*width}
			}
			sm.Buckets[summaryBuckets-1].Upper = *sm.Max
		}
		// The bucket of a value: floor((value - min) / (max - min) * 10), max itself in the
		// last bucket. Groups here have more than 10 distinct values, so max > min.
		bucket := fmt.Sprintf("min(CAST((f.value - m.lo) * %d / (m.hi - m.lo) AS INTEGER), %d)", summaryBuckets, summaryBuckets-1)
		if s.dialect == Postgres {
			bucket = fmt.Sprintf("LEAST(CAST(floor((f.value - m.lo) * %d / (m.hi - m.lo)) AS INTEGER), %d)", summaryBuckets, summaryBuckets-1)
		}
		cond, a := in(many)
		sel := "FROM " + src.from(cond+" AND data_type = 'numeric'")
		err := s.scanRows(ctx, `SELECT f.name, `+bucket+` AS b, sum(f.w) FROM (SELECT name, value, `+src.weight+` AS w `+sel+`) f
			JOIN (SELECT name, min(value) AS lo, max(value) AS hi `+sel+` GROUP BY name) m ON m.name = f.name
			GROUP BY f.name, b`, a,
			func(r *sql.Rows) error {
				var name string
				var b, n int
				if err := r.Scan(&name, &b, &n); err != nil {
					return err
				}
				if sm := byKey[key{name, domain.ScoreNumeric}]; sm != nil && b >= 0 && b < len(sm.Buckets) {
					sm.Buckets[b].Count += n
				}
				return nil
			})
		if err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}

// scoreSource is where a summary reads its scores: the scores themselves, or score_values,
// which counts the scores of each workspace, name, data type and value (kept by triggers as
// scores are written and deleted; migration 00022), so a summary that filters on nothing but
// name and data type reads a row per distinct value, not one per score (BenchmarkHistory,
// scores_summary).
type scoreSource struct {
	from        func(cond string) string // the FROM clause with the filter's WHERE clause and cond
	count, mean string                   // the aggregates of the scores' count and mean value
	weight      string                   // how many scores a row stands for
}

func summarySource(f domain.ScoreFilter, where string) scoreSource {
	if f.ConfigID != "" || f.Source != "" || f.RuleID != "" || f.ExperimentID != "" || f.ExecutionID != "" || f.TraceID != "" || f.SpanID != "" || f.SessionID != "" ||
		!f.CreatedAfter.IsZero() || !f.CreatedBefore.IsZero() {
		return scoreSource{from: func(cond string) string { return "scores" + where + cond }, count: "count(*)", mean: "avg(value)", weight: "1"}
	}
	return scoreSource{
		from: func(cond string) string {
			return "(SELECT name, data_type, CASE WHEN has_value THEN value_key END AS value, NULLIF(string_value, '') AS string_value, n" +
				" FROM score_values" + where + " AND n > 0" + cond + ") v"
		},
		count:  "sum(n)",
		mean:   "sum(value * n) / sum(CASE WHEN value IS NOT NULL THEN n END)",
		weight: "n",
	}
}

// addLabel counts n more scores of label (a label may come with several values when no
// config fixed them).
func scoreSummaryAddLabel(sm *domain.ScoreSummary, label string, n int) {
	for i := range sm.Categories {
		if sm.Categories[i].Label == label {
			sm.Categories[i].Count += n
			return
		}
	}
	sm.Categories = append(sm.Categories, domain.ScoreLabelCount{Label: label, Count: n})
}

// scanRows runs a query and calls fn for each row.
func (s *Store) scanRows(ctx context.Context, q string, args []any, fn func(*sql.Rows) error) error {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("summarize scores: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return fmt.Errorf("summarize scores: %w", err)
		}
	}
	return rows.Err()
}
