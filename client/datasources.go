package client

import (
	"context"
	"net/http"
	"time"
)

// DataSource is a versioned connection to a database or HTTP API; Config is its active
// version's.
type DataSource struct {
	ID              string         `json:"id"`
	WorkspaceID     string         `json:"workspace_id"`
	Name            string         `json:"name"`
	Type            string         `json:"type"`
	Description     string         `json:"description"`
	CredentialID    *string        `json:"credential_id"`
	ActiveVersionID *string        `json:"active_version_id"`
	ActiveVersion   *int           `json:"active_version"`
	VersionCount    int            `json:"version_count"`
	Config          map[string]any `json:"config"`
	CreatedAt       time.Time      `json:"created_at"`
	UpdatedAt       time.Time      `json:"updated_at"`
}

// DataSourceVersion is one immutable configuration of a data source.
type DataSourceVersion struct {
	ID           string         `json:"id"`
	WorkspaceID  string         `json:"workspace_id"`
	DataSourceID string         `json:"data_source_id"`
	Version      int            `json:"version"`
	Config       map[string]any `json:"config"`
	Notes        string         `json:"notes"`
	IsActive     bool           `json:"is_active"`
	CreatedAt    time.Time      `json:"created_at"`
}

// DataSourceCreate is the body of DataSourceCreate.
type DataSourceCreate struct {
	Name         string         `json:"name"`
	Type         string         `json:"type"`
	Description  string         `json:"description,omitempty"`
	CredentialID string         `json:"credential_id,omitempty"`
	Config       map[string]any `json:"config,omitempty"`
	Notes        string         `json:"notes,omitempty"`
}

// DataSourceUpdate holds the fields to change; nil fields stay as they are. A CredentialID
// pointing to "" detaches the credential.
type DataSourceUpdate struct {
	Name         *string `json:"name,omitempty"`
	Description  *string `json:"description,omitempty"`
	CredentialID *string `json:"credential_id,omitempty"`
}

// DataSourceListOptions filters DataSourceList.
type DataSourceListOptions struct {
	ListOptions
	Type  string
	Query string
}

// DataSourceQuery is a query run read-only: one SQL statement, or a path for http sources.
type DataSourceQuery struct {
	Query string `json:"query"`
	// Params are bound, never interpolated: []any by position ($1 on PostgreSQL, ? on MySQL
	// and SQLite), map[string]any by name (SQLite's :name; query parameters or the JSON body
	// of http sources).
	Params any `json:"params,omitempty"`
	Limit  int `json:"limit,omitempty"`
}

// DataSourceColumn names and types one result column.
type DataSourceColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// DataSourceQueryResult is a query's result set, cut to the row bound.
type DataSourceQueryResult struct {
	Columns    []DataSourceColumn `json:"columns"`
	Rows       [][]any            `json:"rows"`
	RowCount   int                `json:"row_count"`
	DurationMS int64              `json:"duration_ms"`
	Truncated  bool               `json:"truncated"`
}

// DataSourceList lists data sources, newest first.
func (c *Client) DataSourceList(ctx context.Context, o DataSourceListOptions) (*List[DataSource], error) {
	q := o.values()
	setIf(q, "type", o.Type)
	setIf(q, "q", o.Query)
	return list[DataSource](ctx, c, "/api/v1/data-sources", q)
}

// DataSourceCreate creates a data source and its active version 1.
func (c *Client) DataSourceCreate(ctx context.Context, in DataSourceCreate, opts ...RequestOption) (*DataSource, error) {
	return send[DataSource](ctx, c, http.MethodPost, "/api/v1/data-sources", in, opts...)
}

// DataSourceGet gets a data source.
func (c *Client) DataSourceGet(ctx context.Context, id string) (*DataSource, error) {
	return get[DataSource](ctx, c, "/api/v1/data-sources/"+pathEscape(id), nil)
}

// DataSourceUpdate changes a data source's name, description or credential.
func (c *Client) DataSourceUpdate(ctx context.Context, id string, in DataSourceUpdate) (*DataSource, error) {
	return send[DataSource](ctx, c, http.MethodPatch, "/api/v1/data-sources/"+pathEscape(id), in)
}

// DataSourceDelete deletes a data source and its versions, returning it.
func (c *Client) DataSourceDelete(ctx context.Context, id string) (*DataSource, error) {
	return send[DataSource](ctx, c, http.MethodDelete, "/api/v1/data-sources/"+pathEscape(id), nil)
}

// DataSourceVersionList lists a data source's versions, newest first.
func (c *Client) DataSourceVersionList(ctx context.Context, dataSourceID string, o ListOptions) (*List[DataSourceVersion], error) {
	return list[DataSourceVersion](ctx, c, "/api/v1/data-sources/"+pathEscape(dataSourceID)+"/versions", o.values())
}

// DataSourceVersionCreate adds a version (not active until promoted).
func (c *Client) DataSourceVersionCreate(ctx context.Context, dataSourceID string, config map[string]any, notes string, opts ...RequestOption) (*DataSourceVersion, error) {
	if config == nil {
		config = map[string]any{}
	}
	body := map[string]any{"config": config, "notes": notes}
	return send[DataSourceVersion](ctx, c, http.MethodPost, "/api/v1/data-sources/"+pathEscape(dataSourceID)+"/versions", body, opts...)
}

// DataSourceVersionGet gets one version.
func (c *Client) DataSourceVersionGet(ctx context.Context, dataSourceID, versionID string) (*DataSourceVersion, error) {
	return get[DataSourceVersion](ctx, c, "/api/v1/data-sources/"+pathEscape(dataSourceID)+"/versions/"+pathEscape(versionID), nil)
}

// DataSourceVersionPromote makes a version active and returns the data source.
func (c *Client) DataSourceVersionPromote(ctx context.Context, dataSourceID, versionID string) (*DataSource, error) {
	return send[DataSource](ctx, c, http.MethodPost, "/api/v1/data-sources/"+pathEscape(dataSourceID)+"/versions/"+pathEscape(versionID)+"/promote", nil)
}

// DataSourceQuery runs a read-only query against a data source's active version.
func (c *Client) DataSourceQuery(ctx context.Context, dataSourceID string, in DataSourceQuery) (*DataSourceQueryResult, error) {
	return send[DataSourceQueryResult](ctx, c, http.MethodPost, "/api/v1/data-sources/"+pathEscape(dataSourceID)+"/query", in)
}
