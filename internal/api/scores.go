package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
)

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
			body: domain.ScoreCreateRequest{}, resp: domain.Score{}, status: http.StatusCreated, creates: true, h: s.createScore},
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
			body: domain.ScoreConfigCreateRequest{}, resp: domain.ScoreConfig{}, status: http.StatusCreated, creates: true, h: s.createScoreConfig},
		{method: "GET", path: v1 + "/score-configs/{id}", op: "getScoreConfig", tag: cfgTag, scope: "scores:read", summary: "Get a score config",
			resp: domain.ScoreConfig{}, h: byID(s, s.store.ScoreConfigGet)},
		{method: "PATCH", path: v1 + "/score-configs/{id}", op: "updateScoreConfig", tag: cfgTag, scope: "scores:write", summary: "Update a score config",
			body: domain.ScoreConfigUpdateRequest{}, resp: domain.ScoreConfig{}, errs: []int{http.StatusConflict}, h: s.updateScoreConfig},
	}
}

// scoreFilter reads the filters of GET /scores and GET /scores/summary; a value outside an
// enum or a time that is not RFC 3339 is a 400 naming the parameter.
func scoreFilter(r *http.Request) (domain.ScoreFilter, error) {
	q := r.URL.Query()
	f := domain.ScoreFilter{Name: q.Get("name"), ConfigID: q.Get("config_id"), DataType: q.Get("data_type"), Source: q.Get("source"),
		RuleID: q.Get("rule_id"), ExperimentID: q.Get("experiment_id"), ExecutionID: q.Get("execution_id"), TraceID: q.Get("trace_id"), SpanID: q.Get("span_id"), SessionID: q.Get("session_id")}
	// data_type and source are documented enums: the route table checks them.
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

func (s *Server) createScore(w http.ResponseWriter, r *http.Request) error {
	var req domain.ScoreCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	if req.ConfigID != nil && *req.ConfigID == "" {
		req.ConfigID = nil
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
	// data_type is a documented enum: the route table checks it against the documented values.
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
	var req domain.ScoreConfigCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
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
	var req domain.ScoreConfigUpdateRequest
	body, err := decodeKeep(w, r, &req)
	if err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
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
	p := domain.ScoreConfigPatch{Name: trimmed(req.Name), Description: req.Description, Archived: req.Archived, Min: req.Min, Max: req.Max, Categories: req.Categories,
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
