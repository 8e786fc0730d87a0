package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/datasource"
	"github.com/agentplane/agentplane/internal/domain"
)

type dataSourceQueryRequest struct {
	Query  string          `json:"query" doc:"One SQL statement, run read-only; for http sources a path relative to base_url, e.g. /products?category=tea."`
	Params json.RawMessage `json:"params,omitempty" doc:"Bound, never interpolated. SQL: an array bound in order to $1, $2… (postgres) or ? (mysql, sqlite; also ?1 and $1), or for sqlite an object bound to :name. http: an object of query parameters (GET) or the JSON body (POST)."`
	Limit  *int            `json:"limit,omitempty" minimum:"1" doc:"Most rows to return, at most the source's max_rows (the default)."`
}

// DataSourceColumn names and types one column of a query result.
type DataSourceColumn struct {
	Name string `json:"name"`
	Type string `json:"type" doc:"The database's type name in lower case (int4, text, numeric, timestamptz, varchar(255)); for http sources the JSON type."`
}

// DataSourceQueryResult is the result set of a data source query, cut to the row bound.
type DataSourceQueryResult struct {
	Columns    []DataSourceColumn `json:"columns"`
	Rows       [][]any            `json:"rows" doc:"One array per row, values in column order: numbers, strings, booleans and null; numeric/decimal as strings, timestamps as RFC 3339 strings, dates as YYYY-MM-DD, json/jsonb as their JSON value, binary as base64."`
	RowCount   int                `json:"row_count"`
	DurationMS int64              `json:"duration_ms"`
	Truncated  bool               `json:"truncated" doc:"True when rows were left out: more matched than the limit (or max_rows) allowed, or the next row would have taken the result past max_bytes."`
}

func (s *Server) dataSourceRoutes() []route {
	const tag = "Data sources"
	return []route{
		{method: "GET", path: v1 + "/data-sources", op: "listDataSources", tag: tag, scope: "data_sources:read", summary: "List data sources", list: true,
			params: []param{{name: "type", typ: "string", enum: domain.DataSourceTypes},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the name or description."}},
			resp: domain.DataSource{}, h: s.listDataSources},
		{method: "POST", path: v1 + "/data-sources", op: "createDataSource", tag: tag, scope: "data_sources:write", summary: "Create a data source (and its version 1)",
			body: domain.DataSourceCreateRequest{}, resp: domain.DataSource{}, status: http.StatusCreated, creates: true, h: s.createDataSource},
		{method: "GET", path: v1 + "/data-sources/{id}", op: "getDataSource", tag: tag, scope: "data_sources:read", summary: "Get a data source",
			resp: domain.DataSource{}, h: byID(s, s.store.DataSourceGet)},
		{method: "PATCH", path: v1 + "/data-sources/{id}", op: "updateDataSource", tag: tag, scope: "data_sources:write",
			summary: "Update a data source's name, description or credential",
			body:    domain.DataSourceUpdateRequest{}, resp: domain.DataSource{}, h: s.updateDataSource},
		{method: "DELETE", path: v1 + "/data-sources/{id}", op: "deleteDataSource", tag: tag, scope: "data_sources:write", summary: "Delete a data source and its versions",
			resp: domain.DataSource{}, h: byID(s, s.store.DataSourceDelete)},
		{method: "GET", path: v1 + "/data-sources/{id}/versions", op: "listDataSourceVersions", tag: tag, scope: "data_sources:read",
			summary: "List a data source's versions, newest first", list: true, resp: domain.DataSourceVersion{}, h: childList(s, s.store.DataSourceVersionList)},
		{method: "POST", path: v1 + "/data-sources/{id}/versions", op: "createDataSourceVersion", tag: tag, scope: "data_sources:write", summary: "Create a version",
			body: domain.DataSourceVersionCreateRequest{}, resp: domain.DataSourceVersion{}, status: http.StatusCreated, creates: true, h: s.createDataSourceVersion},
		{method: "GET", path: v1 + "/data-sources/{id}/versions/{version_id}", op: "getDataSourceVersion", tag: tag, scope: "data_sources:read",
			summary: "Get a version", resp: domain.DataSourceVersion{}, h: versionByID(s, s.store.DataSourceVersionGet)},
		{method: "POST", path: v1 + "/data-sources/{id}/versions/{version_id}/promote", op: "promoteDataSourceVersion", tag: tag, scope: "data_sources:write",
			summary: "Make a version the active one", resp: domain.DataSource{}, h: promoteVersion(s, s.store.DataSourceVersionPromote, s.store.DataSourceGet)},
		{method: "POST", path: v1 + "/data-sources/{id}/query", op: "queryDataSource", tag: tag, scope: "data_sources:execute",
			summary: "Run a read-only query",
			body:    dataSourceQueryRequest{}, resp: DataSourceQueryResult{}, errs: []int{http.StatusConflict, http.StatusBadGateway}, h: s.queryDataSource},
	}
}

func (s *Server) listDataSources(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := domain.DataSourceFilter{Type: q.Get("type"), Query: q.Get("q")}
	// type is a documented enum: the route table checks it against the documented values.
	items, total, err := s.store.DataSourceList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

// checkCredentialRef checks that a credential id names a credential of the workspace.
func (s *Server) checkCredentialRef(ctx context.Context, ws, id string) error {
	return s.store.CheckRefs(ctx, ws, domain.KindCredential, "credential_id", id)
}

func (s *Server) createDataSource(w http.ResponseWriter, r *http.Request) error {
	var req domain.DataSourceCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if req.Config == nil {
		req.Config = map[string]any{}
	}
	if err := req.Validate(); err != nil {
		return err
	}
	if _, err := datasource.ParseConfig(req.Type, req.Config); err != nil {
		return err
	}
	ws := s.workspace(r)
	var credID *string
	if req.CredentialID != nil && strings.TrimSpace(*req.CredentialID) != "" {
		credID = ptr(strings.TrimSpace(*req.CredentialID))
		if err := s.checkCredentialRef(r.Context(), ws, *credID); err != nil {
			return err
		}
	}
	d, err := s.store.DataSourceCreate(r.Context(), &domain.DataSource{
		WorkspaceID: ws, Name: strings.TrimSpace(req.Name), Type: req.Type, Description: req.Description, CredentialID: credID,
	}, domain.JSONObject(req.Config), req.Notes)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, d)
	return nil
}

// nullableID reads a PATCH field that holds an id, null or "": nil when it is absent, an
// invalid NullString when it detaches.
func nullableID(field string, raw json.RawMessage) (*domain.NullString, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	if string(raw) == "null" {
		return &domain.NullString{}, nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, badRequest("%s: expected string or null", field)
	}
	if v = strings.TrimSpace(v); v == "" {
		return &domain.NullString{}, nil
	}
	return &domain.NullString{String: v, Valid: true}, nil
}

func (s *Server) updateDataSource(w http.ResponseWriter, r *http.Request) error {
	var req domain.DataSourceUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	p := domain.DataSourcePatch{Name: trimmed(req.Name), Description: req.Description}
	cred, err := nullableID("credential_id", req.CredentialID)
	if err != nil {
		return err
	}
	ws, id := s.workspace(r), pathID(r, "id")
	if _, err := s.store.DataSourceGet(r.Context(), ws, id); err != nil {
		return err
	}
	if cred != nil && cred.Valid {
		if err := s.checkCredentialRef(r.Context(), ws, cred.String); err != nil {
			return err
		}
	}
	p.CredentialID = cred
	d, err := s.store.DataSourceUpdate(r.Context(), ws, id, p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, d)
	return nil
}

func (s *Server) createDataSourceVersion(w http.ResponseWriter, r *http.Request) error {
	var req domain.DataSourceVersionCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ws, id := s.workspace(r), pathID(r, "id")
	d, err := s.store.DataSourceGet(r.Context(), ws, id)
	if err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	if _, err := datasource.ParseConfig(d.Type, req.Config); err != nil {
		return err
	}
	v, err := s.store.DataSourceVersionCreate(r.Context(), &domain.DataSourceVersion{
		WorkspaceID: ws, DataSourceID: id, Config: domain.JSONObject(req.Config), Notes: req.Notes,
	})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, v)
	return nil
}

// queryParams reads params: absent or null, an array, or an object; numbers keep their
// digits (json.Number), so large integers reach the database exactly.
func queryParams(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, badRequest("params: malformed JSON")
	}
	switch v.(type) {
	case []any, map[string]any:
		return v, nil
	}
	return nil, badRequest("params: expected array or object")
}

func (s *Server) queryDataSource(w http.ResponseWriter, r *http.Request) error {
	var req dataSourceQueryRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	params, err := queryParams(req.Params)
	if err != nil {
		return err
	}
	limit := 0 // the source's max_rows
	if req.Limit != nil {
		limit = *req.Limit // at least 1: the document's minimum
	}
	start := time.Now()
	res, err := s.cfg.DataSources.Query(r.Context(), s.workspace(r), pathID(r, "id"), datasource.Request{Query: req.Query, Params: params, Limit: limit})
	if err != nil {
		return dataSourceError(err)
	}
	out := DataSourceQueryResult{Columns: make([]DataSourceColumn, len(res.Columns)), Rows: res.Rows, RowCount: len(res.Rows),
		DurationMS: time.Since(start).Milliseconds(), Truncated: res.Truncated}
	for i, c := range res.Columns {
		out.Columns[i] = DataSourceColumn{Name: c.Name, Type: c.Type}
	}
	writeData(w, http.StatusOK, out)
	return nil
}

// dataSourceError maps the executor's errors: a request field or the database's refusal is
// a 422 naming it, a data source that cannot be used as configured a 409, one that cannot be
// reached a 502.
func dataSourceError(err error) error {
	var qe *datasource.QueryError
	var se *datasource.SourceError
	switch {
	case errors.As(err, &qe):
		return domain.Invalid("query", "%s", qe.Message)
	case errors.As(err, &se) && se.Unreachable:
		return &Error{Status: http.StatusBadGateway, Code: "data_source_unavailable", Message: se.Message}
	case errors.As(err, &se):
		return conflict("%s", se.Message)
	}
	return err
}
