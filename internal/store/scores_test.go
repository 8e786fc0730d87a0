package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// scoreFixture is a workspace with an execution in a chat session, its trace with one span,
// a trace ingested on its own with a session id of its own, and score configs of each type.
type scoreFixture struct {
	ws, other                  string
	exec, trace, span, session string
	lone, loneSession          string
	rating, verdict, correct   *ScoreConfig
}

func newScoreFixture(t *testing.T, s *Store) *scoreFixture {
	t.Helper()
	ctx := context.Background()
	f := &scoreFixture{ws: mustWorkspace(t, s, "a"), other: mustWorkspace(t, s, "b")}
	mustModel(t, s)
	a, err := s.AgentCreate(ctx, &Agent{WorkspaceID: f.ws, Name: "A", Type: "simple", Status: "active"}, &AgentConfig{Model: "gpt-4o"}, "")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.ChatSessionCreate(ctx, &ChatSession{WorkspaceID: f.ws, AgentID: a.ID, Metadata: JSONObject{}})
	if err != nil {
		t.Fatal(err)
	}
	f.session = sess.ID
	x := &Execution{ID: NewID(), WorkspaceID: f.ws, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, SessionID: &sess.ID, Source: "chat",
		Status: StatusPending, Input: JSONObject{}, Metadata: JSONObject{}, TimeoutMS: 1000}
	tr := &Trace{WorkspaceID: f.ws, ExecutionID: &x.ID, AgentID: &a.ID, SessionID: &sess.ID, Name: "A"}
	if err := s.ExecutionCreate(ctx, x, tr); err != nil {
		t.Fatal(err)
	}
	f.exec, f.trace = x.ID, tr.ID
	sp := &Span{TraceID: tr.ID, WorkspaceID: f.ws, Name: "llm", Kind: "llm", Status: "ok", StartedAt: Now(), Attributes: JSONObject{}}
	if err := s.SpanInsert(ctx, []*Span{{TraceID: tr.ID, WorkspaceID: f.ws, Name: "prompt", Kind: "prompt", Status: "ok", StartedAt: Now()}, sp}); err != nil {
		t.Fatal(err)
	}
	f.span = sp.ID
	f.loneSession = "conversation-7"
	lone := &Trace{ID: "4bf92f3577b34da6a3ce929d0e0e4736", WorkspaceID: f.ws, SessionID: &f.loneSession, Name: "ingested"}
	if err := s.TraceCreate(ctx, lone); err != nil {
		t.Fatal(err)
	}
	f.lone = lone.ID
	mk := func(c *ScoreConfig) *ScoreConfig {
		c.WorkspaceID = f.ws
		out, err := s.ScoreConfigCreate(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	f.rating = mk(&ScoreConfig{Name: "rating", DataType: ScoreNumeric, Min: ptrTo(1.0), Max: ptrTo(5.0), Description: "1 to 5 stars"})
	f.verdict = mk(&ScoreConfig{Name: "verdict", DataType: ScoreCategorical, Categories: []ScoreCategory{{"good", 1}, {"bad", 0}, {"meh", 0.5}}})
	f.correct = mk(&ScoreConfig{Name: "correct", DataType: ScoreBoolean})
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
			c           ScoreConfig
			field, text string
		}{
			{ScoreConfig{Name: "x", DataType: "stars"}, "data_type", "numeric, categorical, boolean"},
			{ScoreConfig{Name: "x", DataType: ScoreNumeric, Min: ptrTo(3.0), Max: ptrTo(2.0)}, "min", "at most max"},
			{ScoreConfig{Name: "x", DataType: ScoreBoolean, Max: ptrTo(2.0)}, "max", "only numeric"},
			{ScoreConfig{Name: "x", DataType: ScoreNumeric, Categories: []ScoreCategory{{"a", 1}}}, "categories", "only categorical"},
			{ScoreConfig{Name: "x", DataType: ScoreCategorical}, "categories", "at least one"},
			{ScoreConfig{Name: "x", DataType: ScoreCategorical, Categories: []ScoreCategory{{"a", 1}, {"a", 2}}}, "categories[1].label", "unique"},
			{ScoreConfig{Name: "x", DataType: ScoreCategorical, Categories: []ScoreCategory{{"a", 1}, {"b", 1}}}, "categories[1].value", "unique"},
			{ScoreConfig{Name: "x", DataType: ScoreCategorical, Categories: []ScoreCategory{{" ", 1}}}, "categories[0].label", "required"},
		} {
			tc.c.WorkspaceID = f.ws
			_, err := s.ScoreConfigCreate(ctx, &tc.c)
			wantValidation(t, err, tc.field, tc.text)
		}
		var ce *ConflictError
		if _, err := s.ScoreConfigCreate(ctx, &ScoreConfig{WorkspaceID: f.ws, Name: "rating", DataType: ScoreBoolean}); !errors.As(err, &ce) || !strings.Contains(ce.Message, f.rating.ID) {
			t.Fatalf("duplicate name: %v", err)
		}
		// Another workspace may use the name.
		if _, err := s.ScoreConfigCreate(ctx, &ScoreConfig{WorkspaceID: f.other, Name: "rating", DataType: ScoreBoolean}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ScoreConfigGet(ctx, f.other, f.rating.ID); !IsNotFound(err) {
			t.Fatalf("config visible across workspaces: %v", err)
		}
		// Update: a bound widened, then removed; archive; rename onto a taken name.
		got, err := s.ScoreConfigUpdate(ctx, f.ws, f.rating.ID, ScoreConfigPatch{Max: ptrTo(10.0), Description: ptrTo("1 to 10")})
		if err != nil || *got.Max != 10 || *got.Min != 1 || got.Description != "1 to 10" {
			t.Fatalf("widen: %+v %v", got, err)
		}
		got, err = s.ScoreConfigUpdate(ctx, f.ws, f.rating.ID, ScoreConfigPatch{ClearMax: true})
		if err != nil || got.Max != nil || got.Min == nil {
			t.Fatalf("clear max: %+v %v", got, err)
		}
		_, err = s.ScoreConfigUpdate(ctx, f.ws, f.rating.ID, ScoreConfigPatch{Min: ptrTo(20.0), Max: ptrTo(10.0)})
		wantValidation(t, err, "min", "at most max")
		_, err = s.ScoreConfigUpdate(ctx, f.ws, f.correct.ID, ScoreConfigPatch{Categories: &[]ScoreCategory{{"yes", 1}}})
		wantValidation(t, err, "categories", "only categorical")
		_, err = s.ScoreConfigUpdate(ctx, f.ws, f.verdict.ID, ScoreConfigPatch{Categories: &[]ScoreCategory{}})
		wantValidation(t, err, "categories", "at least one")
		if _, err := s.ScoreConfigUpdate(ctx, f.ws, f.verdict.ID, ScoreConfigPatch{Name: ptrTo("rating")}); !errors.As(err, &ce) {
			t.Fatalf("rename onto a taken name: %v", err)
		}
		got, err = s.ScoreConfigUpdate(ctx, f.ws, f.verdict.ID, ScoreConfigPatch{Archived: ptrTo(true), Categories: &[]ScoreCategory{{"good", 1}, {"bad", 0}}})
		if err != nil || !got.Archived || len(got.Categories) != 2 || got.Name != "verdict" {
			t.Fatalf("archive: %+v %v", got, err)
		}
		if _, err := s.ScoreConfigUpdate(ctx, f.other, f.verdict.ID, ScoreConfigPatch{Archived: ptrTo(false)}); !IsNotFound(err) {
			t.Fatalf("update across workspaces: %v", err)
		}
		// List and filters.
		if l, n, err := s.ScoreConfigList(ctx, f.ws, ScoreConfigFilter{}, Page{Page: 1, Limit: 20}); err != nil || n != 3 || l[0].ID != f.correct.ID {
			t.Fatalf("list: %d %v", n, err)
		}
		if l, n, _ := s.ScoreConfigList(ctx, f.ws, ScoreConfigFilter{Archived: ptrTo(true)}, Page{Page: 1, Limit: 20}); n != 1 || l[0].ID != f.verdict.ID {
			t.Fatalf("archived: %d", n)
		}
		if _, n, _ := s.ScoreConfigList(ctx, f.ws, ScoreConfigFilter{Archived: ptrTo(false), DataType: ScoreNumeric}, Page{Page: 1, Limit: 20}); n != 1 {
			t.Fatalf("numeric, not archived: %d", n)
		}
		if _, n, _ := s.ScoreConfigList(ctx, f.ws, ScoreConfigFilter{Query: "TO 10"}, Page{Page: 1, Limit: 20}); n != 1 {
			t.Fatalf("q: %d", n)
		}
	})
}

func TestScoresAgainstConfigs(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newScoreFixture(t, s)
		create := func(sc Score) (*Score, error) {
			sc.WorkspaceID = f.ws
			if sc.ExecutionID == nil && sc.TraceID == nil && sc.SessionID == nil {
				sc.ExecutionID = &f.exec
			}
			return s.ScoreCreate(ctx, &sc)
		}
		// Numeric: within the range; the name comes from the config.
		got, err := create(Score{ConfigID: &f.rating.ID, Value: ptrTo(4.5), Comment: "good answer",
			Author: &ScoreAuthor{Type: "api_key", ID: "k1", Name: "ap_12345678"}, Metadata: JSONObject{"k": "v"}})
		if err != nil || got.Name != "rating" || got.DataType != ScoreNumeric || *got.Value != 4.5 || got.StringValue != nil ||
			got.Source != ScoreSourceAPI || got.Author == nil || got.Author.Name != "ap_12345678" || got.Metadata["k"] != "v" {
			t.Fatalf("numeric: %+v %v", got, err)
		}
		for _, tc := range []struct {
			sc          Score
			field, text string
		}{
			{Score{ConfigID: &f.rating.ID, Value: ptrTo(0.5)}, "value", "at least 1"},
			{Score{ConfigID: &f.rating.ID, Value: ptrTo(5.5)}, "value", "at most 5"},
			{Score{ConfigID: &f.rating.ID}, "value", "required"},
			{Score{ConfigID: &f.rating.ID, Value: ptrTo(3.0), StringValue: ptrTo("3")}, "string_value", "numeric"},
			{Score{ConfigID: &f.rating.ID, Name: "stars", Value: ptrTo(3.0)}, "name", `"rating"`},
			{Score{ConfigID: &f.rating.ID, DataType: ScoreBoolean, Value: ptrTo(1.0)}, "data_type", "numeric"},
			{Score{ConfigID: &f.verdict.ID, StringValue: ptrTo("awful")}, "string_value", `"good", "bad", "meh"`},
			{Score{ConfigID: &f.verdict.ID, StringValue: ptrTo("good"), Value: ptrTo(0.0)}, "value", `"good" is 1`},
			{Score{ConfigID: &f.verdict.ID, Value: ptrTo(2.0)}, "value", "1 (good), 0 (bad), 0.5 (meh)"},
			{Score{ConfigID: &f.verdict.ID}, "string_value", "required"},
			{Score{ConfigID: &f.correct.ID, Value: ptrTo(2.0)}, "value", "1 (true) or 0 (false)"},
			{Score{ConfigID: &f.correct.ID, StringValue: ptrTo("yes")}, "string_value", `"true" or "false"`},
			{Score{ConfigID: &f.correct.ID, StringValue: ptrTo("true"), Value: ptrTo(0.0)}, "value", "is 1"},
			{Score{Name: "x", Value: ptrTo(1.0)}, "data_type", "required"},
			{Score{Name: "x", DataType: ScoreCategorical, Value: ptrTo(1.0)}, "string_value", "required"},
			{Score{Name: "x", DataType: ScoreNumeric, StringValue: ptrTo("high")}, "string_value", "no string_value"},
			{Score{Name: "x", DataType: "stars", Value: ptrTo(1.0)}, "data_type", "one of"},
		} {
			_, err := create(tc.sc)
			wantValidation(t, err, tc.field, tc.text)
		}
		_, err = create(Score{ConfigID: ptrTo("nope"), Value: ptrTo(1.0)})
		wantReference(t, err, "config_id")
		// Categorical: the label gives the value, the value the label.
		got, err = create(Score{ConfigID: &f.verdict.ID, StringValue: ptrTo("meh"), Source: ScoreSourceAnnotation})
		if err != nil || *got.Value != 0.5 || *got.StringValue != "meh" || got.Source != ScoreSourceAnnotation {
			t.Fatalf("categorical by label: %+v %v", got, err)
		}
		if got, err = create(Score{ConfigID: &f.verdict.ID, Value: ptrTo(0.0)}); err != nil || *got.StringValue != "bad" {
			t.Fatalf("categorical by value: %+v %v", got, err)
		}
		// Boolean: either form, both agreeing.
		if got, err = create(Score{ConfigID: &f.correct.ID, StringValue: ptrTo("true")}); err != nil || *got.Value != 1 {
			t.Fatalf("boolean by label: %+v %v", got, err)
		}
		if got, err = create(Score{ConfigID: &f.correct.ID, Value: ptrTo(0.0), StringValue: ptrTo("false")}); err != nil || *got.StringValue != "false" {
			t.Fatalf("boolean by both: %+v %v", got, err)
		}
		// Without a config: stored as given.
		if got, err = create(Score{Name: "tone", DataType: ScoreCategorical, StringValue: ptrTo("friendly")}); err != nil || got.Value != nil || got.ConfigID != nil {
			t.Fatalf("categorical without config: %+v %v", got, err)
		}
		if got, err = create(Score{Name: "rating", DataType: ScoreNumeric, Value: ptrTo(99.0)}); err != nil || *got.Value != 99 || got.ConfigID != nil {
			t.Fatalf("numeric by name alone: %+v %v", got, err)
		}
		// An archived config takes no new scores, but its scores can still be changed.
		old, err := create(Score{ConfigID: &f.verdict.ID, StringValue: ptrTo("good")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ScoreConfigUpdate(ctx, f.ws, f.verdict.ID, ScoreConfigPatch{Archived: ptrTo(true)}); err != nil {
			t.Fatal(err)
		}
		_, err = create(Score{ConfigID: &f.verdict.ID, StringValue: ptrTo("good")})
		wantValidation(t, err, "config_id", "archived")
		upd, err := s.ScoreUpdate(ctx, f.ws, old.ID, ScorePatch{Value: ptrTo(0.5), Comment: ptrTo("on second thought")})
		if err != nil || *upd.StringValue != "meh" || upd.Comment != "on second thought" {
			t.Fatalf("update by value: %+v %v", upd, err)
		}
		_, err = s.ScoreUpdate(ctx, f.ws, old.ID, ScorePatch{StringValue: ptrTo("awful")})
		wantValidation(t, err, "string_value", "must be one of")
		if _, err := s.ScoreUpdate(ctx, f.other, old.ID, ScorePatch{Comment: ptrTo("x")}); !IsNotFound(err) {
			t.Fatalf("update across workspaces: %v", err)
		}
		// A score without config keeps its data type's rules on update.
		tone, _ := create(Score{Name: "tone", DataType: ScoreCategorical, StringValue: ptrTo("curt"), Value: ptrTo(2.0)})
		if upd, err = s.ScoreUpdate(ctx, f.ws, tone.ID, ScorePatch{StringValue: ptrTo("warm")}); err != nil || *upd.StringValue != "warm" || upd.Value != nil {
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
		create := func(sc Score) (*Score, error) {
			sc.WorkspaceID, sc.Name, sc.DataType, sc.Value = f.ws, "quality", ScoreNumeric, ptrTo(1.0)
			return s.ScoreCreate(ctx, &sc)
		}
		same := func(p *string, want string) bool { return p != nil && *p == want }
		// An execution's score carries its trace and session.
		got, err := create(Score{ExecutionID: &f.exec})
		if err != nil || !same(got.TraceID, f.trace) || !same(got.SessionID, f.session) || got.SpanID != nil {
			t.Fatalf("execution: %+v %v", got, err)
		}
		// A trace's score carries its execution; a span's its trace's.
		if got, err = create(Score{TraceID: &f.trace, SpanID: &f.span}); err != nil || !same(got.ExecutionID, f.exec) || !same(got.SpanID, f.span) {
			t.Fatalf("span: %+v %v", got, err)
		}
		if got, err = create(Score{ExecutionID: &f.exec, SpanID: &f.span}); err != nil || !same(got.TraceID, f.trace) {
			t.Fatalf("span by execution: %+v %v", got, err)
		}
		if got, err = create(Score{SessionID: &f.session}); err != nil || got.ExecutionID != nil || got.TraceID != nil {
			t.Fatalf("session: %+v %v", got, err)
		}
		// An ingested trace (hex id, no execution) and the session id it carries.
		if got, err = create(Score{TraceID: &f.lone}); err != nil || got.ExecutionID != nil || !same(got.SessionID, f.loneSession) {
			t.Fatalf("ingested trace: %+v %v", got, err)
		}
		if _, err = create(Score{SessionID: &f.loneSession}); err != nil {
			t.Fatalf("session of an ingested trace: %v", err)
		}
		_, err = create(Score{})
		wantValidation(t, err, "execution_id", "needs a target")
		_, err = create(Score{SpanID: &f.span})
		wantValidation(t, err, "span_id", "needs trace_id")
		_, err = create(Score{ExecutionID: &f.exec, TraceID: &f.lone})
		wantValidation(t, err, "trace_id", "execution "+f.exec+" has trace "+f.trace)
		_, err = create(Score{ExecutionID: &f.exec, SessionID: &f.loneSession})
		wantValidation(t, err, "session_id", "has session "+f.session)
		_, err = create(Score{TraceID: &f.lone, SessionID: &f.session})
		wantValidation(t, err, "session_id", "trace "+f.lone)
		for _, tc := range []struct {
			sc    Score
			field string
		}{
			{Score{ExecutionID: ptrTo("nope")}, "execution_id"},
			{Score{TraceID: ptrTo("nope")}, "trace_id"},
			{Score{TraceID: &f.trace, SpanID: ptrTo("nope")}, "span_id"},
			{Score{TraceID: &f.lone, SpanID: &f.span}, "span_id"}, // a span of another trace
			{Score{SessionID: ptrTo("nope")}, "session_id"},
		} {
			_, err := create(tc.sc)
			wantReference(t, err, tc.field)
		}
		// Targets of another workspace do not exist there.
		for _, sc := range []Score{{ExecutionID: &f.exec}, {TraceID: &f.trace}, {SessionID: &f.session}} {
			sc.WorkspaceID, sc.Name, sc.DataType, sc.Value = f.other, "quality", ScoreNumeric, ptrTo(1.0)
			var re *ReferenceError
			if _, err := s.ScoreCreate(ctx, &sc); !errors.As(err, &re) {
				t.Fatalf("target across workspaces: %v", err)
			}
		}
		// Listing by a target finds the scores of what it contains.
		count := func(f ScoreFilter, ws string) int {
			t.Helper()
			_, n, err := s.ScoreList(ctx, ws, f, Page{Page: 1, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		for _, tc := range []struct {
			f    ScoreFilter
			want int
		}{
			{ScoreFilter{}, 6},
			{ScoreFilter{ExecutionID: f.exec}, 3},
			{ScoreFilter{TraceID: f.trace}, 3},
			{ScoreFilter{TraceID: f.trace, SpanID: f.span}, 2},
			{ScoreFilter{SessionID: f.session}, 4},
			{ScoreFilter{SessionID: f.loneSession}, 2},
			{ScoreFilter{Name: "quality", DataType: ScoreNumeric, Source: ScoreSourceAPI}, 6},
			{ScoreFilter{Source: ScoreSourceEval}, 0},
			{ScoreFilter{CreatedAfter: Time{time.Now().Add(-time.Hour)}, CreatedBefore: Time{time.Now().Add(time.Hour)}}, 6},
			{ScoreFilter{CreatedAfter: Time{time.Now().Add(time.Hour)}}, 0},
		} {
			if n := count(tc.f, f.ws); n != tc.want {
				t.Fatalf("%+v: %d scores, want %d", tc.f, n, tc.want)
			}
		}
		if n := count(ScoreFilter{}, f.other); n != 0 {
			t.Fatalf("scores visible across workspaces: %d", n)
		}
	})
}

func TestScoreSummary(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newScoreFixture(t, s)
		add := func(sc Score) {
			t.Helper()
			sc.WorkspaceID, sc.ExecutionID = f.ws, &f.exec
			if _, err := s.ScoreCreate(ctx, &sc); err != nil {
				t.Fatal(err)
			}
		}
		// rating: 1..5 stars, few distinct values.
		for _, v := range []float64{5, 4, 4, 2, 5, 5} {
			add(Score{ConfigID: &f.rating.ID, Value: ptrTo(v)})
		}
		// latency: 0..99, many distinct values.
		for i := range 100 {
			add(Score{Name: "latency", DataType: ScoreNumeric, Value: ptrTo(float64(i))})
		}
		for _, l := range []string{"good", "good", "bad", "good", "meh"} {
			add(Score{ConfigID: &f.verdict.ID, StringValue: ptrTo(l)})
		}
		for _, v := range []float64{1, 1, 1, 0} {
			add(Score{ConfigID: &f.correct.ID, Value: ptrTo(v)})
		}
		// The same name with another data type is summed up on its own.
		add(Score{Name: "verdict", DataType: ScoreNumeric, Value: ptrTo(7.0)})
		add(Score{Name: "other", DataType: ScoreNumeric, Value: ptrTo(1.0), Source: ScoreSourceEval})
		items, total, err := s.ScoreSummary(ctx, f.ws, ScoreFilter{Source: ScoreSourceAPI}, Page{Page: 1, Limit: 20})
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
			len(correct.Categories) != 2 || correct.Categories[0] != (ScoreLabelCount{"true", 3}) || correct.Categories[1] != (ScoreLabelCount{"false", 1}) {
			t.Fatalf("boolean: %+v", correct)
		}
		if rating.Count != 6 || *rating.Mean != 25.0/6 || *rating.Min != 2 || *rating.Max != 5 || len(rating.Categories) != 0 {
			t.Fatalf("rating: %+v", rating)
		}
		if want := []ScoreBucket{{2, 2, 1}, {4, 4, 2}, {5, 5, 3}}; len(rating.Buckets) != 3 || rating.Buckets[0] != want[0] || rating.Buckets[1] != want[1] || rating.Buckets[2] != want[2] {
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
			verdict.Categories[0] != (ScoreLabelCount{"good", 3}) || verdict.Categories[1] != (ScoreLabelCount{"bad", 1}) {
			t.Fatalf("verdict: %+v", verdict)
		}
		// Pages are of groups; the total counts them all.
		items, total, err = s.ScoreSummary(ctx, f.ws, ScoreFilter{}, Page{Page: 2, Limit: 2})
		if err != nil || total != 6 || len(items) != 2 || items[0].Name != "other" || items[1].Name != "rating" || len(items[1].Buckets) != 3 {
			t.Fatalf("page 2: %d of %d %v", len(items), total, err)
		}
		if items, total, err = s.ScoreSummary(ctx, f.ws, ScoreFilter{Name: "latency", CreatedAfter: Time{time.Now().Add(time.Hour)}}, Page{Page: 1, Limit: 20}); err != nil || total != 0 || len(items) != 0 {
			t.Fatalf("nothing selected: %d %v", total, err)
		}
		if _, total, _ = s.ScoreSummary(ctx, f.other, ScoreFilter{}, Page{Page: 1, Limit: 20}); total != 0 {
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
		elsewhere := &Trace{WorkspaceID: f.other, Name: "other"}
		if err := s.TraceCreate(ctx, elsewhere); err != nil {
			t.Fatal(err)
		}
		var ids []string
		add := func(ws string, sc Score) {
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
			add(f.ws, Score{Name: "latency", DataType: ScoreNumeric, Value: ptrTo(float64(i*i%37) + 0.25)})
			add(f.ws, Score{Name: "stars", DataType: ScoreNumeric, Value: ptrTo(float64(i % 5))})
			add(f.ws, Score{Name: "tone", DataType: ScoreCategorical, StringValue: ptrTo([]string{"calm", "curt", "warm"}[i%3])})
			add(f.ws, Score{Name: "correct", DataType: ScoreBoolean, Value: ptrTo(float64(i % 2))})
			add(f.other, Score{Name: "stars", DataType: ScoreNumeric, Value: ptrTo(9.0)})
		}
		same := func(step string) {
			t.Helper()
			all := ScoreFilter{CreatedBefore: Time{time.Now().Add(time.Hour)}}
			for _, pair := range [][2]ScoreFilter{{{}, all}, {{Name: "stars"}, {Name: "stars", CreatedBefore: all.CreatedBefore}},
				{{DataType: ScoreCategorical}, {DataType: ScoreCategorical, CreatedBefore: all.CreatedBefore}}} {
				counted, n1, err1 := s.ScoreSummary(ctx, f.ws, pair[0], Page{Page: 1, Limit: 20})
				scanned, n2, err2 := s.ScoreSummary(ctx, f.ws, pair[1], Page{Page: 1, Limit: 20})
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
			p := ScorePatch{Comment: ptrTo("edited")}
			switch i % 8 {
			case 0, 2, 5:
				if _, err := s.ScoreDelete(ctx, f.ws, id); err != nil {
					t.Fatal(err)
				}
				continue
			case 1, 4: // latency or stars: a new value
				p.Value = ptrTo(float64(100 + i))
			case 6: // tone: a new label
				p.StringValue = ptrTo("warm")
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
