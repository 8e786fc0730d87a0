package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentplane/agentplane/internal/domain"
)

type scoreConfigCreateRequest struct {
	Name        string                 `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Unique in the workspace."`
	DataType    string                 `json:"data_type" enum:"numeric,categorical,boolean"`
	Min         *float64               `json:"min,omitempty" doc:"Numeric only: the lowest value a score may have."`
	Max         *float64               `json:"max,omitempty" doc:"Numeric only: the highest value a score may have."`
	Categories  []domain.ScoreCategory `json:"categories,omitempty" doc:"Categorical only (and required): the labels scores may name and the numbers they stand for; labels and values unique, at most 100."`
	Description string                 `json:"description,omitempty" maxLength:"2000"`
	Archived    bool                   `json:"archived,omitempty"`
}

type scoreConfigUpdateRequest struct {
	Name        *string                 `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Description *string                 `json:"description,omitempty" maxLength:"2000"`
	Archived    *bool                   `json:"archived,omitempty" doc:"true: the config takes no new scores; false takes them again."`
	Min         *float64                `json:"min,omitempty" nullable:"true" doc:"A new lower bound; null removes it."`
	Max         *float64                `json:"max,omitempty" nullable:"true" doc:"A new upper bound; null removes it."`
	Categories  *[]domain.ScoreCategory `json:"categories,omitempty" doc:"Replaces the categories (categorical configs)."`
}

type scoreCreateRequest struct {
	Name        string         `json:"name,omitempty" maxLength:"200" doc:"What is scored. Required without config_id; with it, the config's name or left out."`
	ConfigID    *string        `json:"config_id,omitempty" doc:"A score config to check the score against (not archived)."`
	DataType    string         `json:"data_type,omitempty" enum:"numeric,categorical,boolean" doc:"Required without config_id; with it, the config's data type or left out."`
	Value       *float64       `json:"value,omitempty" doc:"Numeric: the score (within the config's min and max). Categorical: a category's value (the label is filled in). Boolean: 1 or 0."`
	StringValue *string        `json:"string_value,omitempty" maxLength:"200" doc:"Categorical: the category's label (its value is filled in from the config). Boolean: \"true\" or \"false\"."`
	ExecutionID *string        `json:"execution_id,omitempty" maxLength:"200" doc:"The execution scored."`
	TraceID     *string        `json:"trace_id,omitempty" maxLength:"200" doc:"The trace scored (or, with span_id, the trace of the span)."`
	SpanID      *string        `json:"span_id,omitempty" maxLength:"200" doc:"The span scored; needs trace_id (or execution_id)."`
	SessionID   *string        `json:"session_id,omitempty" maxLength:"200" doc:"The chat session scored (or a session id ingested traces carry)."`
	Source      string         `json:"source,omitempty" enum:"api,annotation,eval" doc:"Who gives the score (default api): an application, a person reviewing runs, an automated evaluation."`
	Comment     string         `json:"comment,omitempty" maxLength:"10000"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

type scoreUpdateRequest struct {
	Value       *float64        `json:"value,omitempty" doc:"A new value, checked as on create; the label is derived again."`
	StringValue *string         `json:"string_value,omitempty" maxLength:"200" doc:"A new label, checked as on create; the value is derived again."`
	Comment     *string         `json:"comment,omitempty" maxLength:"10000"`
	Metadata    *map[string]any `json:"metadata,omitempty" doc:"Replaces the whole object."`
}

// scoreFilterParams are the filters of GET /scores and GET /scores/summary.
var scoreFilterParams = []param{
	{name: "name", typ: "string", desc: "Only scores of this name."},
	{name: "config_id", typ: "string", desc: "Only scores given under this score config."},
	{name: "data_type", typ: "string", desc: "Only scores of this data type.", enum: domain.ScoreDataTypes},
	{name: "source", typ: "string", desc: "Only scores from this source.", enum: domain.ScoreSources},
	{name: "rule_id", typ: "string", desc: "Only scores given by this evaluation rule."},
	{name: "experiment_id", typ: "string", desc: "Only the scores of this experiment's runs (its evaluators' and any other)."},
	{name: "execution_id", typ: "string", desc: "Only scores of this execution (its trace and spans included)."},
	{name: "trace_id", typ: "string", desc: "Only scores of this trace (its spans and execution included)."},
	{name: "span_id", typ: "string", desc: "Only scores of this span."},
	{name: "session_id", typ: "string", desc: "Only scores of this session (its executions and traces included)."},
	{name: "created_after", typ: "string", desc: "RFC 3339 time: only scores created after it."},
	{name: "created_before", typ: "string", desc: "RFC 3339 time: only scores created before it."},
}

func (s *Server) scoreRoutes() []route {
	const tag, cfgTag = "Scores", "Score configs"
	return []route{
		{method: "GET", path: v1 + "/scores", op: "listScores", tag: tag, scope: "scores:read", summary: "List scores, newest first",
			list:   true,
			params: scoreFilterParams, resp: domain.Score{}, h: scoresBy(s, s.store.ScoreList)},
		{method: "POST", path: v1 + "/scores", op: "createScore", tag: tag, scope: "scores:write", summary: "Score an execution, trace, span or session",
			body: scoreCreateRequest{}, resp: domain.Score{}, status: http.StatusCreated, creates: true, h: s.createScore},
		{method: "GET", path: v1 + "/scores/summary", op: "summarizeScores", tag: tag, scope: "scores:read", summary: "Sum up scores per name",
			list:   true,
			params: scoreFilterParams, resp: domain.ScoreSummary{}, h: scoresBy(s, s.store.ScoreSummary)},
		{method: "GET", path: v1 + "/scores/{id}", op: "getScore", tag: tag, scope: "scores:read", summary: "Get a score",
			resp: domain.Score{}, h: byID(s, s.store.ScoreGet)},
		{method: "PATCH", path: v1 + "/scores/{id}", op: "updateScore", tag: tag, scope: "scores:write", summary: "Update a score",
			body: scoreUpdateRequest{}, resp: domain.Score{}, h: s.updateScore},
		{method: "DELETE", path: v1 + "/scores/{id}", op: "deleteScore", tag: tag, scope: "scores:write", summary: "Delete a score",
			resp: domain.Score{}, h: byID(s, s.store.ScoreDelete)},

		{method: "GET", path: v1 + "/score-configs", op: "listScoreConfigs", tag: cfgTag, scope: "scores:read", summary: "List score configs, newest first",
			list: true,
			params: []param{{name: "data_type", typ: "string", desc: "Only configs of this data type.", enum: domain.ScoreDataTypes},
				{name: "archived", typ: "boolean", desc: "true or false."},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the name or description."}},
			resp: domain.ScoreConfig{}, h: s.listScoreConfigs},
		{method: "POST", path: v1 + "/score-configs", op: "createScoreConfig", tag: cfgTag, scope: "scores:write", summary: "Create a score config",
			body: scoreConfigCreateRequest{}, resp: domain.ScoreConfig{}, status: http.StatusCreated, creates: true, h: s.createScoreConfig},
		{method: "GET", path: v1 + "/score-configs/{id}", op: "getScoreConfig", tag: cfgTag, scope: "scores:read", summary: "Get a score config",
			resp: domain.ScoreConfig{}, h: byID(s, s.store.ScoreConfigGet)},
		{method: "PATCH", path: v1 + "/score-configs/{id}", op: "updateScoreConfig", tag: cfgTag, scope: "scores:write", summary: "Update a score config",
			body: scoreConfigUpdateRequest{}, resp: domain.ScoreConfig{}, errs: []int{http.StatusConflict}, h: s.updateScoreConfig},
	}
}

// scoreFilter reads the filters of GET /scores and GET /scores/summary; a value outside an
// enum or a time that is not RFC 3339 is a 400 naming the parameter.
func scoreFilter(r *http.Request) (domain.ScoreFilter, error) {
	q := r.URL.Query()
	f := domain.ScoreFilter{Name: q.Get("name"), ConfigID: q.Get("config_id"), DataType: q.Get("data_type"), Source: q.Get("source"),
		RuleID: q.Get("rule_id"), ExperimentID: q.Get("experiment_id"), ExecutionID: q.Get("execution_id"), TraceID: q.Get("trace_id"), SpanID: q.Get("span_id"), SessionID: q.Get("session_id")}
	for name, v := range map[string]struct {
		val     string
		allowed []string
	}{"data_type": {f.DataType, domain.ScoreDataTypes}, "source": {f.Source, domain.ScoreSources}} {
		if v.val != "" {
			if err := domain.OneOf(name, v.val, v.allowed); err != nil {
				return f, badRequest("%s", err.Error())
			}
		}
	}
	if err := createdRange(q, &f.CreatedAfter, &f.CreatedBefore); err != nil {
		return f, err
	}
	return f, nil
}

// scoresBy answers with one page of what fn finds for the scores the request's filters
// select: the scores themselves, or their summary per name.
func scoresBy[T any](s *Server, fn func(ctx context.Context, ws string, f domain.ScoreFilter, p domain.Page) ([]T, int, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := pageParams(r)
		if err != nil {
			return err
		}
		f, err := scoreFilter(r)
		if err != nil {
			return err
		}
		items, total, err := fn(r.Context(), s.workspace(r), f, p)
		if err != nil {
			return err
		}
		writeList(w, items, p, total)
		return nil
	}
}

// scoreAuthor is who a request acts as: its signed-in user, else its API key; nil in the
// emulator, which has neither.
func scoreAuthor(r *http.Request) *domain.ScoreAuthor {
	if u := userOf(r); u != nil {
		return &domain.ScoreAuthor{Type: "user", ID: u.id, Name: u.email}
	}
	if k := apiKeyOf(r); k != nil {
		return &domain.ScoreAuthor{Type: "api_key", ID: k.ID, Name: k.KeyPrefix}
	}
	return nil
}

// TransformSchema documents the rule the server keeps: a score names what is scored (a name
// that is not blank) or a score config (a config_id), or both.
func (scoreCreateRequest) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	s.AnyOf = []*huma.Schema{
		{Required: []string{"name"}, Properties: map[string]*huma.Schema{"name": {MinLength: ptr(1), Pattern: `\S`}}},
		{Required: []string{"config_id"}, Properties: map[string]*huma.Schema{"config_id": {MinLength: ptr(1)}}},
	}
	return s
}

func (s *Server) createScore(w http.ResponseWriter, r *http.Request) error {
	var req scoreCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if req.ConfigID == nil || *req.ConfigID == "" {
		req.ConfigID = nil
		if err := domain.NotBlank("name", req.Name); err != nil {
			return domain.Invalid("name", "is required without config_id")
		}
	}
	sc, err := s.store.ScoreCreate(r.Context(), &domain.Score{WorkspaceID: s.workspace(r), Name: strings.TrimSpace(req.Name), ConfigID: req.ConfigID,
		DataType: req.DataType, Value: req.Value, StringValue: req.StringValue, ExecutionID: req.ExecutionID, TraceID: req.TraceID,
		SpanID: req.SpanID, SessionID: req.SessionID, Source: req.Source, Comment: req.Comment, Author: scoreAuthor(r),
		Metadata: domain.JSONObject(req.Metadata)})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, sc)
	return nil
}

func (s *Server) updateScore(w http.ResponseWriter, r *http.Request) error {
	var req scoreUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	p := domain.ScorePatch{Value: req.Value, StringValue: req.StringValue, Comment: req.Comment}
	if req.Metadata != nil {
		p.Metadata = ptr(domain.JSONObject(*req.Metadata))
	}
	sc, err := s.store.ScoreUpdate(r.Context(), s.workspace(r), pathID(r, "id"), p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, sc)
	return nil
}

func (s *Server) listScoreConfigs(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := domain.ScoreConfigFilter{DataType: q.Get("data_type"), Query: q.Get("q")}
	if f.DataType != "" {
		if err := domain.OneOf("data_type", f.DataType, domain.ScoreDataTypes); err != nil {
			return badRequest("%s", err.Error())
		}
	}
	if f.Archived, err = boolParam(r, "archived"); err != nil {
		return err
	}
	items, total, err := s.store.ScoreConfigList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) createScoreConfig(w http.ResponseWriter, r *http.Request) error {
	var req scoreConfigCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := domain.FirstErr(domain.NotBlank("name", req.Name), domain.NotBlank("data_type", req.DataType)); err != nil {
		return err
	}
	c, err := s.store.ScoreConfigCreate(r.Context(), &domain.ScoreConfig{WorkspaceID: s.workspace(r), Name: strings.TrimSpace(req.Name),
		DataType: req.DataType, Min: req.Min, Max: req.Max, Categories: req.Categories, Description: req.Description, Archived: req.Archived})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, c)
	return nil
}

func (s *Server) updateScoreConfig(w http.ResponseWriter, r *http.Request) error {
	var req scoreConfigUpdateRequest
	body, err := decodeKeep(w, r, &req)
	if err != nil {
		return err
	}
	ws, id := s.workspace(r), pathID(r, "id")
	if raw := bodyField(body, "data_type"); raw != nil {
		cur, err := s.store.ScoreConfigGet(r.Context(), ws, id)
		if err != nil {
			return err
		}
		var dt string
		if json.Unmarshal(raw, &dt) != nil || dt != cur.DataType {
			return domain.Invalid("data_type", "cannot be changed (score config %s is %s); create another config", id, cur.DataType)
		}
	}
	name, err := patchName(req.Name)
	if err != nil {
		return err
	}
	desc, err := patchDescription(req.Description)
	if err != nil {
		return err
	}
	p := domain.ScoreConfigPatch{Name: name, Description: desc, Archived: req.Archived, Min: req.Min, Max: req.Max, Categories: req.Categories,
		ClearMin: isNullField(body, "min"), ClearMax: isNullField(body, "max")}
	c, err := s.store.ScoreConfigUpdate(r.Context(), ws, id, p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, c)
	return nil
}

// isNullField reports whether a JSON object body has the top-level field name set to null
// (a PATCH removing a value), as opposed to leaving it out.
func isNullField(body []byte, name string) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return false
	}
	raw, ok := obj[name]
	return ok && strings.TrimSpace(string(raw)) == "null"
}
