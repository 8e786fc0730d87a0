package client

import (
	"context"
	"net/http"
)

// DataSourceList lists data sources, newest first.
func (c *Client) DataSourceList(ctx context.Context, o ListDataSourcesParams) (*List[DataSource], error) {
	return list[DataSource](ctx, c, "/api/v1/data-sources", query(o))
}

// DataSourceCreate creates a data source and its active version 1.
func (c *Client) DataSourceCreate(ctx context.Context, in DataSourceCreateRequest, opts ...RequestOption) (*DataSource, error) {
	return send[DataSource](ctx, c, http.MethodPost, "/api/v1/data-sources", in, opts...)
}

// DataSourceGet gets a data source.
func (c *Client) DataSourceGet(ctx context.Context, id string) (*DataSource, error) {
	return get[DataSource](ctx, c, "/api/v1/data-sources/"+pathEscape(id), nil)
}

// DataSourceUpdate changes a data source's name, description or credential.
func (c *Client) DataSourceUpdate(ctx context.Context, id string, in DataSourceUpdateRequest) (*DataSource, error) {
	return send[DataSource](ctx, c, http.MethodPatch, "/api/v1/data-sources/"+pathEscape(id), in)
}

// DataSourceDelete deletes a data source and its versions, returning it.
func (c *Client) DataSourceDelete(ctx context.Context, id string) (*DataSource, error) {
	return send[DataSource](ctx, c, http.MethodDelete, "/api/v1/data-sources/"+pathEscape(id), nil)
}

// DataSourceVersionList lists a data source's versions, newest first.
func (c *Client) DataSourceVersionList(ctx context.Context, dataSourceID string, o ListDataSourceVersionsParams) (*List[DataSourceVersion], error) {
	return list[DataSourceVersion](ctx, c, "/api/v1/data-sources/"+pathEscape(dataSourceID)+"/versions", query(o))
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
func (c *Client) DataSourceQuery(ctx context.Context, dataSourceID string, in DataSourceQueryRequest) (*DataSourceQueryResult, error) {
	return send[DataSourceQueryResult](ctx, c, http.MethodPost, "/api/v1/data-sources/"+pathEscape(dataSourceID)+"/query", in)
}
