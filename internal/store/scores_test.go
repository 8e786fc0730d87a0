package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// scoreFixture is a workspace with an execution in a chat session, its trace with one span,
// a trace ingested on its own with a session id of its own, and score configs of each type.
type scoreFixture struct {
	ws, other                  string
	exec, trace, span, session string
	lone, loneSession          string
	rating, verdict, correct   *domain.ScoreConfig
}

func newScoreFixture(t *testing.T, s *Store) *scoreFixture {
	t.Helper()
	ctx := context.Background()
	f := &scoreFixture{ws: mustWorkspace(t, s, "a"), other: mustWorkspace(t, s, "b")}
	mustModel(t, s)
	a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: f.ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.ChatSessionCreate(ctx, &domain.ChatSession{WorkspaceID: f.ws, AgentID: a.ID, Metadata: domain.JSONObject{}})
	if err != nil {
		t.Fatal(err)
	}
	f.session = sess.ID
	x := &domain.Execution{ID: NewID(), WorkspaceID: f.ws, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, SessionID: &sess.ID, Source: "chat",
		Status: domain.StatusPending, Input: domain.JSONObject{}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
	tr := &domain.Trace{WorkspaceID: f.ws, ExecutionID: &x.ID, AgentID: &a.ID, SessionID: &sess.ID, Name: "A"}
	if err := s.ExecutionCreate(ctx, x, tr); err != nil {
		t.Fatal(err)
	}
	f.exec, f.trace = x.ID, tr.ID
	sp := &domain.Span{TraceID: tr.ID, WorkspaceID: f.ws, Name: "llm", Kind: "llm", Status: "ok", StartedAt: domain.Now(), Attributes: domain.JSONObject{}}
	if err := s.SpanInsert(ctx, []*domain.Span{{TraceID: tr.ID, WorkspaceID: f.ws, Name: "prompt", Kind: "prompt", Status: "ok", StartedAt: domain.Now()}, sp}); err != nil {
		t.Fatal(err)
	}
	f.span = sp.ID
	f.loneSession = "conversation-7"
	lone := &domain.Trace{ID: "4bf92f3577b34da6a3ce929d0e0e4736", WorkspaceID: f.ws, SessionID: &f.loneSession, Name: "ingested"}
	if err := s.TraceCreate(ctx, lone); err != nil {
		t.Fatal(err)
	}
	f.lone = lone.ID
	mk := func(c *domain.ScoreConfig) *domain.ScoreConfig {
		c.WorkspaceID = f.ws
		out, err := s.ScoreConfigCreate(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	f.rating = mk(&domain.ScoreConfig{Name: "rating", DataType: domain.ScoreNumeric, Min: domain.PtrTo(1.0), Max: domain.PtrTo(5.0), Description: "1 to 5 stars"})
	f.verdict = mk(&domain.ScoreConfig{Name: "verdict", DataType: domain.ScoreCategorical, Categories: []domain.ScoreCategory{{Label: "good", Value: 1}, {Label: "bad", Value: 0}, {Label: "meh", Value: 0.5}}})
	f.correct = mk(&domain.ScoreConfig{Name: "correct", DataType: domain.ScoreBoolean})
	return f
}

func wantValidation(t *testing.T, err error, field, text string) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != field || !strings.Contains(ve.Message, text) {
		t.Fatalf("want a validation error of %s mentioning %q, got %v", field, text, err)
	}
}

func wantReference(t *testing.T, err error, field string) {
	t.Helper()
	var re *ReferenceError
	if !errors.As(err, &re) || re.Field != field {
		t.Fatalf("want a reference error of %s, got %v", field, err)
	}
}

func TestScoreConfigs(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newScoreFixture(t, s)
		if f.verdict.Categories[2].Label != "meh" || f.rating.Min == nil || *f.rating.Max != 5 || f.correct.Categories == nil || f.correct.Archived {
			t.Fatalf("created %+v %+v %+v", f.rating, f.verdict, f.correct)
		}
		for _, tc := range []struct {
			c           domain.ScoreConfig
			field, text string
		}{
			{domain.ScoreConfig{Name: "x", DataType: "stars"}, "data_type", "numeric, categorical, boolean"},
			{domain.ScoreConfig{Name: "x", DataType: domain.ScoreNumeric, Min: domain.PtrTo(3.0), Max: domain.PtrTo(2.0)}, "min", "at most max"},
			{domain.ScoreConfig{Name: "x", DataType: domain.ScoreBoolean, Max: domain.PtrTo(2.0)}, "max", "only numeric"},
			{domain.ScoreConfig{Name: "x", DataType: domain.ScoreNumeric, Categories: []domain.ScoreCategory{{Label: "a", Value: 1}}}, "categories", "only categorical"},
			{domain.ScoreConfig{Name: "x", DataType: domain.ScoreCategorical}, "categories", "at least one"},
			{domain.ScoreConfig{Name: "x", DataType: domain.ScoreCategorical, Categories: []domain.ScoreCategory{{Label: "a", Value: 1}, {Label: "a", Value: 2}}}, "categories[1].label", "unique"},
			{domain.ScoreConfig{Name: "x", DataType: domain.ScoreCategorical, Categories: []domain.ScoreCategory{{Label: "a", Value: 1}, {Label: "b", Value: 1}}}, "categories[1].value", "unique"},
			{domain.ScoreConfig{Name: "x", DataType: domain.ScoreCategorical, Categories: []domain.ScoreCategory{{Label: " ", Value: 1}}}, "categories[0].label", "required"},
		} {
			tc.c.WorkspaceID = f.ws
			_, err := s.ScoreConfigCreate(ctx, &tc.c)
			wantValidation(t, err, tc.field, tc.text)
		}
		var ce *ConflictError
		if _, err := s.ScoreConfigCreate(ctx, &domain.ScoreConfig{WorkspaceID: f.ws, Name: "rating", DataType: domain.ScoreBoolean}); !errors.As(err, &ce) || !strings.Contains(ce.Message, f.rating.ID) {
			t.Fatalf("duplicate name: %v", err)
		}
		// Another workspace may use the name.
		if _, err := s.ScoreConfigCreate(ctx, &domain.ScoreConfig{WorkspaceID: f.other, Name: "rating", DataType: domain.ScoreBoolean}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ScoreConfigGet(ctx, f.other, f.rating.ID); !IsNotFound(err) {
			t.Fatalf("config visible across workspaces: %v", err)
		}
		// Update: a bound widened, then removed; archive; rename onto a taken name.
		got, err := s.ScoreConfigUpdate(ctx, f.ws, f.rating.ID, domain.ScoreConfigPatch{Max: domain.PtrTo(10.0), Description: domain.PtrTo("1 to 10")})
		if err != nil || *got.Max != 10 || *got.Min != 1 || got.Description != "1 to 10" {
			t.Fatalf("widen: %+v %v", got, err)
		}
		got, err = s.ScoreConfigUpdate(ctx, f.ws, f.rating.ID, domain.ScoreConfigPatch{ClearMax: true})
		if err != nil || got.Max != nil || got.Min == nil {
			t.Fatalf("clear max: %+v %v", got, err)
		}
		_, err = s.ScoreConfigUpdate(ctx, f.ws, f.rating.ID, domain.ScoreConfigPatch{Min: domain.PtrTo(20.0), Max: domain.PtrTo(10.0)})
		wantValidation(t, err, "min", "at most max")
		_, err = s.ScoreConfigUpdate(ctx, f.ws, f.correct.ID, domain.ScoreConfigPatch{Categories: &[]domain.ScoreCategory{{Label: "yes", Value: 1}}})
		wantValidation(t, err, "categories", "only categorical")
		_, err = s.ScoreConfigUpdate(ctx, f.ws, f.verdict.ID, domain.ScoreConfigPatch{Categories: &[]domain.ScoreCategory{}})
		wantValidation(t, err, "categories", "at least one")
		if _, err := s.ScoreConfigUpdate(ctx, f.ws, f.verdict.ID, domain.ScoreConfigPatch{Name: domain.PtrTo("rating")}); !errors.As(err, &ce) {
			t.Fatalf("rename onto a taken name: %v", err)
		}
		got, err = s.ScoreConfigUpdate(ctx, f.ws, f.verdict.ID, domain.ScoreConfigPatch{Archived: domain.PtrTo(true), Categories: &[]domain.ScoreCategory{{Label: "good", Value: 1}, {Label: "bad", Value: 0}}})
		if err != nil || !got.Archived || len(got.Categories) != 2 || got.Name != "verdict" {
			t.Fatalf("archive: %+v %v", got, err)
		}
		if _, err := s.ScoreConfigUpdate(ctx, f.other, f.verdict.ID, domain.ScoreConfigPatch{Archived: domain.PtrTo(false)}); !IsNotFound(err) {
			t.Fatalf("update across workspaces: %v", err)
		}
		// List and filters.
		if l, n, err := s.ScoreConfigList(ctx, f.ws, domain.ScoreConfigFilter{}, domain.Page{Page: 1, Limit: 20}); err != nil || n != 3 || l[0].ID != f.correct.ID {
			t.Fatalf("list: %d %v", n, err)
		}
		if l, n, _ := s.ScoreConfigList(ctx, f.ws, domain.ScoreConfigFilter{Archived: domain.PtrTo(true)}, domain.Page{Page: 1, Limit: 20}); n != 1 || l[0].ID != f.verdict.ID {
			t.Fatalf("archived: %d", n)
		}
		if _, n, _ := s.ScoreConfigList(ctx, f.ws, domain.ScoreConfigFilter{Archived: domain.PtrTo(false), DataType: domain.ScoreNumeric}, domain.Page{Page: 1, Limit: 20}); n != 1 {
			t.Fatalf("numeric, not archived: %d", n)
		}
		if _, n, _ := s.ScoreConfigList(ctx, f.ws, domain.ScoreConfigFilter{Query: "TO 10"}, domain.Page{Page: 1, Limit: 20}); n != 1 {
			t.Fatalf("q: %d", n)
		}
	})
}

func TestScoresAgainstConfigs(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newScoreFixture(t, s)
		create := func(sc domain.Score) (*domain.Score, error) {
			sc.WorkspaceID = f.ws
			if sc.ExecutionID == nil && sc.TraceID == nil && sc.SessionID == nil {
				sc.ExecutionID = &f.exec
			}
			return s.ScoreCreate(ctx, &sc)
		}
		// Numeric: within the range; the name comes from the config.
		got, err := create(domain.Score{ConfigID: &f.rating.ID, Value: domain.PtrTo(4.5), Comment: "good answer",
			Author: &domain.ScoreAuthor{Type: "api_key", ID: "k1", Name: "ap_12345678"}, Metadata: domain.JSONObject{"k": "v"}})
		if err != nil || got.Name != "rating" || got.DataType != domain.ScoreNumeric || *got.Value != 4.5 || got.StringValue != nil ||
			got.Source != domain.ScoreSourceAPI || got.Author == nil || got.Author.Name != "ap_12345678" || got.Metadata["k"] != "v" {
			t.Fatalf("numeric: %+v %v", got, err)
		}
		for _, tc := range []struct {
			sc          domain.Score
			field, text string
		}{
			{domain.Score{ConfigID: &f.rating.ID, Value: domain.PtrTo(0.5)}, "value", "at least 1"},
			{domain.Score{ConfigID: &f.rating.ID, Value: domain.PtrTo(5.5)}, "value", "at most 5"},
			{domain.Score{ConfigID: &f.rating.ID}, "value", "required"},
			{domain.Score{ConfigID: &f.rating.ID, Value: domain.PtrTo(3.0), StringValue: domain.PtrTo("3")}, "string_value", "numeric"},
			{domain.Score{ConfigID: &f.rating.ID, Name: "stars", Value: domain.PtrTo(3.0)}, "name", `"rating"`},
			{domain.Score{ConfigID: &f.rating.ID, DataType: domain.ScoreBoolean, Value: domain.PtrTo(1.0)}, "data_type", "numeric"},
			{domain.Score{ConfigID: &f.verdict.ID, StringValue: domain.PtrTo("awful")}, "string_value", `"good", "bad", "meh"`},
			{domain.Score{ConfigID: &f.verdict.ID, StringValue: domain.PtrTo("good"), Value: domain.PtrTo(0.0)}, "value", `"good" is 1`},
			{domain.Score{ConfigID: &f.verdict.ID, Value: domain.PtrTo(2.0)}, "value", "1 (good), 0 (bad), 0.5 (meh)"},
			{domain.Score{ConfigID: &f.verdict.ID}, "string_value", "required"},
			{domain.Score{ConfigID: &f.correct.ID, Value: domain.PtrTo(2.0)}, "value", "1 (true) or 0 (false)"},
			{domain.Score{ConfigID: &f.correct.ID, StringValue: domain.PtrTo("yes")}, "string_value", `"true" or "false"`},
			{domain.Score{ConfigID: &f.correct.ID, StringValue: domain.PtrTo("true"), Value: domain.PtrTo(0.0)}, "value", "is 1"},
			{domain.Score{Name: "x", Value: domain.PtrTo(1.0)}, "data_type", "required"},
			{domain.Score{Name: "x", DataType: domain.ScoreCategorical, Value: domain.PtrTo(1.0)}, "string_value", "required"},
			{domain.Score{Name: "x", DataType: domain.ScoreNumeric, StringValue: domain.PtrTo("high")}, "string_value", "no string_value"},
			{domain.Score{Name: "x", DataType: "stars", Value: domain.PtrTo(1.0)}, "data_type", "one of"},
		} {
			_, err := create(tc.sc)
			wantValidation(t, err, tc.field, tc.text)
		}
		_, err = create(domain.Score{ConfigID: domain.PtrTo("nope"), Value: domain.PtrTo(1.0)})
		wantReference(t, err, "config_id")
		// Categorical: the label gives the value, the value the label.
		got, err = create(domain.Score{ConfigID: &f.verdict.ID, StringValue: domain.PtrTo("meh"), Source: domain.ScoreSourceAnnotation})
		if err != nil || *got.Value != 0.5 || *got.StringValue != "meh" || got.Source != domain.ScoreSourceAnnotation {
			t.Fatalf("categorical by label: %+v %v", got, err)
		}
		if got, err = create(domain.Score{ConfigID: &f.verdict.ID, Value: domain.PtrTo(0.0)}); err != nil || *got.StringValue != "bad" {
			t.Fatalf("categorical by value: %+v %v", got, err)
		}
		// Boolean: either form, both agreeing.
		if got, err = create(domain.Score{ConfigID: &f.correct.ID, StringValue: domain.PtrTo("true")}); err != nil || *got.Value != 1 {
			t.Fatalf("boolean by label: %+v %v", got, err)
		}
		if got, err = create(domain.Score{ConfigID: &f.correct.ID, Value: domain.PtrTo(0.0), StringValue: domain.PtrTo("false")}); err != nil || *got.StringValue != "false" {
			t.Fatalf("boolean by both: %+v %v", got, err)
		}
		// Without a config: stored as given.
		if got, err = create(domain.Score{Name: "tone", DataType: domain.ScoreCategorical, StringValue: domain.PtrTo("friendly")}); err != nil || got.Value != nil || got.ConfigID != nil {
			t.Fatalf("categorical without config: %+v %v", got, err)
		}
		if got, err = create(domain.Score{Name: "rating", DataType: domain.ScoreNumeric, Value: domain.PtrTo(99.0)}); err != nil || *got.Value != 99 || got.ConfigID != nil {
			t.Fatalf("numeric by name alone: %+v %v", got, err)
		}
		// An archived config takes no new scores, but its scores can still be changed.
		old, err := create(domain.Score{ConfigID: &f.verdict.ID, StringValue: domain.PtrTo("good")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ScoreConfigUpdate(ctx, f.ws, f.verdict.ID, domain.ScoreConfigPatch{Archived: domain.PtrTo(true)}); err != nil {
			t.Fatal(err)
		}
		_, err = create(domain.Score{ConfigID: &f.verdict.ID, StringValue: domain.PtrTo("good")})
		wantValidation(t, err, "config_id", "archived")
		upd, err := s.ScoreUpdate(ctx, f.ws, old.ID, domain.ScorePatch{Value: domain.PtrTo(0.5), Comment: domain.PtrTo("on second thought")})
		if err != nil || *upd.StringValue != "meh" || upd.Comment != "on second thought" {
			t.Fatalf("update by value: %+v %v", upd, err)
		}
		_, err = s.ScoreUpdate(ctx, f.ws, old.ID, domain.ScorePatch{StringValue: domain.PtrTo("awful")})
		wantValidation(t, err, "string_value", "must be one of")
		if _, err := s.ScoreUpdate(ctx, f.other, old.ID, domain.ScorePatch{Comment: domain.PtrTo("x")}); !IsNotFound(err) {
			t.Fatalf("update across workspaces: %v", err)
		}
		// A score without config keeps its data type's rules on update.
		tone, _ := create(domain.Score{Name: "tone", DataType: domain.ScoreCategorical, StringValue: domain.PtrTo("curt"), Value: domain.PtrTo(2.0)})
		if upd, err = s.ScoreUpdate(ctx, f.ws, tone.ID, domain.ScorePatch{StringValue: domain.PtrTo("warm")}); err != nil || *upd.StringValue != "warm" || upd.Value != nil {
			t.Fatalf("update without config: %+v %v", upd, err)
		}
		if _, err := s.ScoreDelete(ctx, f.other, tone.ID); !IsNotFound(err) {
			t.Fatalf("delete across workspaces: %v", err)
		}
		if del, err := s.ScoreDelete(ctx, f.ws, tone.ID); err != nil || del.ID != tone.ID {
			t.Fatalf("delete: %+v %v", del, err)
		}
		if _, err := s.ScoreGet(ctx, f.ws, tone.ID); !IsNotFound(err) {
			t.Fatalf("deleted score still there: %v", err)
		}
	})
}

func TestScoreTargets(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newScoreFixture(t, s)
		create := func(sc domain.Score) (*domain.Score, error) {
			sc.WorkspaceID, sc.Name, sc.DataType, sc.Value = f.ws, "quality", domain.ScoreNumeric, domain.PtrTo(1.0)
			return s.ScoreCreate(ctx, &sc)
		}
		same := func(p *string, want string) bool { return p != nil && *p == want }
		// An execution's score carries its trace and session.
		got, err := create(domain.Score{ExecutionID: &f.exec})
		if err != nil || !same(got.TraceID, f.trace) || !same(got.SessionID, f.session) || got.SpanID != nil {
			t.Fatalf("execution: %+v %v", got, err)
		}
		// A trace's score carries its execution; a span's its trace's.
		if got, err = create(domain.Score{TraceID: &f.trace, SpanID: &f.span}); err != nil || !same(got.ExecutionID, f.exec) || !same(got.SpanID, f.span) {
			t.Fatalf("span: %+v %v", got, err)
		}
		if got, err = create(domain.Score{ExecutionID: &f.exec, SpanID: &f.span}); err != nil || !same(got.TraceID, f.trace) {
			t.Fatalf("span by execution: %+v %v", got, err)
		}
		if got, err = create(domain.Score{SessionID: &f.session}); err != nil || got.ExecutionID != nil || got.TraceID != nil {
			t.Fatalf("session: %+v %v", got, err)
		}
		// An ingested trace (hex id, no execution) and the session id it carries.
		if got, err = create(domain.Score{TraceID: &f.lone}); err != nil || got.ExecutionID != nil || !same(got.SessionID, f.loneSession) {
			t.Fatalf("ingested trace: %+v %v", got, err)
		}
		if _, err = create(domain.Score{SessionID: &f.loneSession}); err != nil {
			t.Fatalf("session of an ingested trace: %v", err)
		}
		_, err = create(domain.Score{})
		wantValidation(t, err, "execution_id", "needs a target")
		_, err = create(domain.Score{SpanID: &f.span})
		wantValidation(t, err, "span_id", "needs trace_id")
		_, err = create(domain.Score{ExecutionID: &f.exec, TraceID: &f.lone})
		wantValidation(t, err, "trace_id", "execution "+f.exec+" has trace "+f.trace)
		_, err = create(domain.Score{ExecutionID: &f.exec, SessionID: &f.loneSession})
		wantValidation(t, err, "session_id", "has session "+f.session)
		_, err = create(domain.Score{TraceID: &f.lone, SessionID: &f.session})
		wantValidation(t, err, "session_id", "trace "+f.lone)
		for _, tc := range []struct {
			sc    domain.Score
			field string
		}{
			{domain.Score{ExecutionID: domain.PtrTo("nope")}, "execution_id"},
			{domain.Score{TraceID: domain.PtrTo("nope")}, "trace_id"},
			{domain.Score{TraceID: &f.trace, SpanID: domain.PtrTo("nope")}, "span_id"},
			{domain.Score{TraceID: &f.lone, SpanID: &f.span}, "span_id"}, // a span of another trace
			{domain.Score{SessionID: domain.PtrTo("nope")}, "session_id"},
		} {
			_, err := create(tc.sc)
			wantReference(t, err, tc.field)
		}
		// Targets of another workspace do not exist there.
		for _, sc := range []domain.Score{{ExecutionID: &f.exec}, {TraceID: &f.trace}, {SessionID: &f.session}} {
			sc.WorkspaceID, sc.Name, sc.DataType, sc.Value = f.other, "quality", domain.ScoreNumeric, domain.PtrTo(1.0)
			var re *ReferenceError
			if _, err := s.ScoreCreate(ctx, &sc); !errors.As(err, &re) {
				t.Fatalf("target across workspaces: %v", err)
			}
		}
		// Listing by a target finds the scores of what it contains.
		count := func(f domain.ScoreFilter, ws string) int {
			t.Helper()
			_, n, err := s.ScoreList(ctx, ws, f, domain.Page{Page: 1, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		for _, tc := range []struct {
			f    domain.ScoreFilter
			want int
		}{
			{domain.ScoreFilter{}, 6},
			{domain.ScoreFilter{ExecutionID: f.exec}, 3},
			{domain.ScoreFilter{TraceID: f.trace}, 3},
			{domain.ScoreFilter{TraceID: f.trace, SpanID: f.span}, 2},
			{domain.ScoreFilter{SessionID: f.session}, 4},
			{domain.ScoreFilter{SessionID: f.loneSession}, 2},
			{domain.ScoreFilter{Name: "quality", DataType: domain.ScoreNumeric, Source: domain.ScoreSourceAPI}, 6},
			{domain.ScoreFilter{Source: domain.ScoreSourceEval}, 0},
			{domain.ScoreFilter{CreatedAfter: domain.Time{Time: time.Now().Add(-time.Hour)}, CreatedBefore: domain.Time{Time: time.Now().Add(time.Hour)}}, 6},
			{domain.ScoreFilter{CreatedAfter: domain.Time{Time: time.Now().Add(time.Hour)}}, 0},
		} {
			if n := count(tc.f, f.ws); n != tc.want {
				t.Fatalf("%+v: %d scores, want %d", tc.f, n, tc.want)
			}
		}
		if n := count(domain.ScoreFilter{}, f.other); n != 0 {
			t.Fatalf("scores visible across workspaces: %d", n)
		}
	})
}

func TestScoreSummary(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newScoreFixture(t, s)
		add := func(sc domain.Score) {
			t.Helper()
			sc.WorkspaceID, sc.ExecutionID = f.ws, &f.exec
			if _, err := s.ScoreCreate(ctx, &sc); err != nil {
				t.Fatal(err)
			}
		}
		// rating: 1..5 stars, few distinct values.
		for _, v := range []float64{5, 4, 4, 2, 5, 5} {
			add(domain.Score{ConfigID: &f.rating.ID, Value: domain.PtrTo(v)})
		}
		// latency: 0..99, many distinct values.
		for i := range 100 {
			add(domain.Score{Name: "latency", DataType: domain.ScoreNumeric, Value: domain.PtrTo(float64(i))})
		}
		for _, l := range []string{"good", "good", "bad", "good", "meh"} {
			add(domain.Score{ConfigID: &f.verdict.ID, StringValue: domain.PtrTo(l)})
		}
		for _, v := range []float64{1, 1, 1, 0} {
			add(domain.Score{ConfigID: &f.correct.ID, Value: domain.PtrTo(v)})
		}
		// The same name with another data type is summed up on its own.
		add(domain.Score{Name: "verdict", DataType: domain.ScoreNumeric, Value: domain.PtrTo(7.0)})
		add(domain.Score{Name: "other", DataType: domain.ScoreNumeric, Value: domain.PtrTo(1.0), Source: domain.ScoreSourceEval})
		items, total, err := s.ScoreSummary(ctx, f.ws, domain.ScoreFilter{Source: domain.ScoreSourceAPI}, domain.Page{Page: 1, Limit: 20})
		if err != nil || total != 5 || len(items) != 5 {
			t.Fatalf("summary: %d of %d, %v", len(items), total, err)
		}
		names := []string{}
		for _, it := range items {
			names = append(names, it.Name+"/"+it.DataType)
		}
		if strings.Join(names, " ") != "correct/boolean latency/numeric rating/numeric verdict/categorical verdict/numeric" {
			t.Fatalf("groups %v", names)
		}
		correct, latency, rating, verdict := items[0], items[1], items[2], items[3]
		if correct.Count != 4 || *correct.Mean != 0.75 || correct.Min != nil || len(correct.Buckets) != 0 ||
			len(correct.Categories) != 2 || correct.Categories[0] != (domain.ScoreLabelCount{Label: "true", Count: 3}) || correct.Categories[1] != (domain.ScoreLabelCount{Label: "false", Count: 1}) {
			t.Fatalf("boolean: %+v", correct)
		}
		if rating.Count != 6 || *rating.Mean != 25.0/6 || *rating.Min != 2 || *rating.Max != 5 || len(rating.Categories) != 0 {
			t.Fatalf("rating: %+v", rating)
		}
		if want := []domain.ScoreBucket{{Lower: 2, Upper: 2, Count: 1}, {Lower: 4, Upper: 4, Count: 2}, {Lower: 5, Upper: 5, Count: 3}}; len(rating.Buckets) != 3 || rating.Buckets[0] != want[0] || rating.Buckets[1] != want[1] || rating.Buckets[2] != want[2] {
			t.Fatalf("rating buckets %+v", rating.Buckets)
		}
		if latency.Count != 100 || *latency.Mean != 49.5 || *latency.Min != 0 || *latency.Max != 99 || len(latency.Buckets) != 10 {
			t.Fatalf("latency: %+v", latency)
		}
		sum := 0
		for i, b := range latency.Buckets {
			sum += b.Count
			if i < 9 && b.Count != 10 || b.Lower != float64(i)*9.9 {
				t.Fatalf("latency bucket %d: %+v", i, b)
			}
		}
		if sum != 100 || latency.Buckets[9].Upper != 99 {
			t.Fatalf("latency buckets %+v", latency.Buckets)
		}
		if verdict.Count != 5 || verdict.Mean != nil || verdict.Min != nil || len(verdict.Categories) != 3 ||
			verdict.Categories[0] != (domain.ScoreLabelCount{Label: "good", Count: 3}) || verdict.Categories[1] != (domain.ScoreLabelCount{Label: "bad", Count: 1}) {
			t.Fatalf("verdict: %+v", verdict)
		}
		// Pages are of groups; the total counts them all.
		items, total, err = s.ScoreSummary(ctx, f.ws, domain.ScoreFilter{}, domain.Page{Page: 2, Limit: 2})
		if err != nil || total != 6 || len(items) != 2 || items[0].Name != "other" || items[1].Name != "rating" || len(items[1].Buckets) != 3 {
			t.Fatalf("page 2: %d of %d %v", len(items), total, err)
		}
		if items, total, err = s.ScoreSummary(ctx, f.ws, domain.ScoreFilter{Name: "latency", CreatedAfter: domain.Time{Time: time.Now().Add(time.Hour)}}, domain.Page{Page: 1, Limit: 20}); err != nil || total != 0 || len(items) != 0 {
			t.Fatalf("nothing selected: %d %v", total, err)
		}
		if _, total, _ = s.ScoreSummary(ctx, f.other, domain.ScoreFilter{}, domain.Page{Page: 1, Limit: 20}); total != 0 {
			t.Fatalf("summary across workspaces: %d", total)
		}
	})
}

// TestScoreSummaryFromCounts: the summary read from score_values (no filter, or name and data
// type only) is the summary of the scores themselves (read with a filter that selects them
// all), after creates, value changes and deletes, for numeric scores of few and of many values,
// categorical and boolean scores, and another workspace's scores left out.
func TestScoreSummaryFromCounts(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newScoreFixture(t, s)
		elsewhere := &domain.Trace{WorkspaceID: f.other, Name: "other"}
		if err := s.TraceCreate(ctx, elsewhere); err != nil {
			t.Fatal(err)
		}
		var ids []string
		add := func(ws string, sc domain.Score) {
			sc.WorkspaceID, sc.ExecutionID = ws, &f.exec
			if ws == f.other {
				sc.ExecutionID, sc.TraceID = nil, &elsewhere.ID
			}
			got, err := s.ScoreCreate(ctx, &sc)
			if err != nil {
				t.Fatal(err)
			}
			if ws == f.ws {
				ids = append(ids, got.ID)
			}
		}
		for i := range 60 {
			add(f.ws, domain.Score{Name: "latency", DataType: domain.ScoreNumeric, Value: domain.PtrTo(float64(i*i%37) + 0.25)})
			add(f.ws, domain.Score{Name: "stars", DataType: domain.ScoreNumeric, Value: domain.PtrTo(float64(i % 5))})
			add(f.ws, domain.Score{Name: "tone", DataType: domain.ScoreCategorical, StringValue: domain.PtrTo([]string{"calm", "curt", "warm"}[i%3])})
			add(f.ws, domain.Score{Name: "correct", DataType: domain.ScoreBoolean, Value: domain.PtrTo(float64(i % 2))})
			add(f.other, domain.Score{Name: "stars", DataType: domain.ScoreNumeric, Value: domain.PtrTo(9.0)})
		}
		same := func(step string) {
			t.Helper()
			all := domain.ScoreFilter{CreatedBefore: domain.Time{Time: time.Now().Add(time.Hour)}}
			for _, pair := range [][2]domain.ScoreFilter{{{}, all}, {{Name: "stars"}, {Name: "stars", CreatedBefore: all.CreatedBefore}},
				{{DataType: domain.ScoreCategorical}, {DataType: domain.ScoreCategorical, CreatedBefore: all.CreatedBefore}}} {
				counted, n1, err1 := s.ScoreSummary(ctx, f.ws, pair[0], domain.Page{Page: 1, Limit: 20})
				scanned, n2, err2 := s.ScoreSummary(ctx, f.ws, pair[1], domain.Page{Page: 1, Limit: 20})
				if err1 != nil || err2 != nil || n1 != n2 || len(counted) == 0 {
					t.Fatalf("%s: %v %v, totals %d and %d", step, err1, err2, n1, n2)
				}
				a, _ := json.Marshal(counted)
				b, _ := json.Marshal(scanned)
				if string(a) != string(b) {
					t.Fatalf("%s, filter %+v: from the counts\n%s\nfrom the scores\n%s", step, pair[0], a, b)
				}
			}
		}
		same("created")
		for i, id := range ids[:40] {
			p := domain.ScorePatch{Comment: domain.PtrTo("edited")}
			switch i % 8 {
			case 0, 2, 5:
				if _, err := s.ScoreDelete(ctx, f.ws, id); err != nil {
					t.Fatal(err)
				}
				continue
			case 1, 4: // latency or stars: a new value
				p.Value = domain.PtrTo(float64(100 + i))
			case 6: // tone: a new label
				p.StringValue = domain.PtrTo("warm")
			}
			if _, err := s.ScoreUpdate(ctx, f.ws, id, p); err != nil {
				t.Fatal(err)
			}
		}
		same("deleted and edited")
		var rows int
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM score_values WHERE n <= 0").Scan(&rows); err != nil || rows != 0 {
			t.Fatalf("%d rows of no score left in score_values (%v)", rows, err)
		}
		// A workspace deleted at once takes its scores and their counts, whichever cascade runs first.
		if _, err := s.db.ExecContext(ctx, "DELETE FROM workspaces WHERE id = $1", f.other); err != nil {
			t.Fatal(err)
		}
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM score_values WHERE workspace_id = $1", f.other).Scan(&rows); err != nil || rows != 0 {
			t.Fatalf("%d counts of a deleted workspace left (%v)", rows, err)
		}
	})
}
