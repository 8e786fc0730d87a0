package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// AssetList lists assets, newest first.
func (c *Client) AssetList(ctx context.Context, o ListAssetsParams) (*List[Asset], error) {
	return list[Asset](ctx, c, "/api/v1/assets", query(o))
}

// AssetGet gets an asset's record.
func (c *Client) AssetGet(ctx context.Context, id string) (*Asset, error) {
	return get[Asset](ctx, c, "/api/v1/assets/"+pathEscape(id), nil)
}

// AssetUpload stores content (in.Data, base64) as an asset; a full quota is an *Error with
// status 402.
func (c *Client) AssetUpload(ctx context.Context, in AssetUploadRequest, opts ...RequestOption) (*Asset, error) {
	return send[Asset](ctx, c, http.MethodPost, "/api/v1/assets", in, opts...)
}

// AssetDelete deletes an asset, returning it.
func (c *Client) AssetDelete(ctx context.Context, id string) (*Asset, error) {
	return send[Asset](ctx, c, http.MethodDelete, "/api/v1/assets/"+pathEscape(id), nil)
}

// AssetStorage reports the workspace's asset storage and quota.
func (c *Client) AssetStorage(ctx context.Context) (*AssetStorage, error) {
	return get[AssetStorage](ctx, c, "/api/v1/assets/storage", nil)
}

// AssetContent downloads an asset's bytes and their media type.
func (c *Client) AssetContent(ctx context.Context, id string) ([]byte, string, error) {
	req, err := c.newRequest(ctx, http.MethodGet, "/api/v1/assets/"+pathEscape(id)+"/content", nil, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "*/*")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", fmt.Errorf("read asset content: %w", err)
	}
	if resp.StatusCode >= 400 {
		return nil, "", decodeError(resp, raw)
	}
	return raw, resp.Header.Get("Content-Type"), nil
}
