package client

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Asset is an image, audio or file a run produced (or a caller uploaded).
type Asset struct {
	ID          string         `json:"id"`
	WorkspaceID string         `json:"workspace_id"`
	ExecutionID *string        `json:"execution_id"`
	Type        string         `json:"type"` // image, audio or file
	MimeType    string         `json:"mime_type"`
	Size        int64          `json:"size"`
	SHA256      string         `json:"sha256"`
	Name        string         `json:"name"`
	Source      string         `json:"source"` // model, mcp, tool or upload
	Metadata    map[string]any `json:"metadata"`
	CreatedAt   time.Time      `json:"created_at"`
}

// AssetStorage is what a workspace's assets take up.
type AssetStorage struct {
	Bytes      int64 `json:"bytes"` // distinct contents, what the quota limits
	Count      int   `json:"count"`
	Blobs      int   `json:"blobs"`
	AssetBytes int64 `json:"asset_bytes"`
	QuotaBytes int64 `json:"quota_bytes"` // 0: unlimited
}

// AssetListOptions filters AssetList.
type AssetListOptions struct {
	ListOptions
	ExecutionID string
	Type        string
}

// AssetUpload is the body of AssetUpload; Data is sent base64-encoded.
type AssetUpload struct {
	MimeType    string
	Data        []byte
	Name        string
	ExecutionID string
}

// AssetList lists assets, newest first.
func (c *Client) AssetList(ctx context.Context, o AssetListOptions) (*List[Asset], error) {
	q := o.values()
	setIf(q, "execution_id", o.ExecutionID)
	setIf(q, "type", o.Type)
	return list[Asset](ctx, c, "/api/v1/assets", q)
}

// AssetGet gets an asset's record.
func (c *Client) AssetGet(ctx context.Context, id string) (*Asset, error) {
	return get[Asset](ctx, c, "/api/v1/assets/"+pathEscape(id), nil)
}

// AssetUpload stores content as an asset; a full quota is an *Error with status 402.
func (c *Client) AssetUpload(ctx context.Context, in AssetUpload, opts ...RequestOption) (*Asset, error) {
	body := map[string]any{"mime_type": in.MimeType, "data": base64.StdEncoding.EncodeToString(in.Data)}
	if in.Name != "" {
		body["name"] = in.Name
	}
	if in.ExecutionID != "" {
		body["execution_id"] = in.ExecutionID
	}
	return send[Asset](ctx, c, http.MethodPost, "/api/v1/assets", body, opts...)
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
