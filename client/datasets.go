package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

func datasetPath(id string) string { return "/api/v1/datasets/" + pathEscape(id) }

// DatasetList lists datasets, newest first.
func (c *Client) DatasetList(ctx context.Context, o ListDatasetsParams) (*List[Dataset], error) {
	return list[Dataset](ctx, c, "/api/v1/datasets", query(o))
}

// DatasetCreate creates an empty dataset.
func (c *Client) DatasetCreate(ctx context.Context, in DatasetCreateRequest, opts ...RequestOption) (*Dataset, error) {
	return send[Dataset](ctx, c, http.MethodPost, "/api/v1/datasets", in, opts...)
}

// DatasetGet gets a dataset.
func (c *Client) DatasetGet(ctx context.Context, id string) (*Dataset, error) {
	return get[Dataset](ctx, c, datasetPath(id), nil)
}

// DatasetUpdate changes a dataset's fields.
func (c *Client) DatasetUpdate(ctx context.Context, id string, in DatasetUpdateRequest) (*Dataset, error) {
	return send[Dataset](ctx, c, http.MethodPatch, datasetPath(id), in)
}

// DatasetDelete deletes a dataset with its items, returning it.
func (c *Client) DatasetDelete(ctx context.Context, id string) (*Dataset, error) {
	return send[Dataset](ctx, c, http.MethodDelete, datasetPath(id), nil)
}

// DatasetItemList lists a dataset's items, newest first.
func (c *Client) DatasetItemList(ctx context.Context, id string, o ListDatasetItemsParams) (*List[DatasetItem], error) {
	return list[DatasetItem](ctx, c, datasetPath(id)+"/items", query(o))
}

// DatasetItemCreate adds one item to a dataset.
func (c *Client) DatasetItemCreate(ctx context.Context, id string, in DatasetItemRequest, opts ...RequestOption) (*DatasetItem, error) {
	return send[DatasetItem](ctx, c, http.MethodPost, datasetPath(id)+"/items", in, opts...)
}

// DatasetItemsAdd adds several items at once (at most 1,000), all or none.
func (c *Client) DatasetItemsAdd(ctx context.Context, id string, items []DatasetItemRequest, opts ...RequestOption) (*DatasetItemBatch, error) {
	return send[DatasetItemBatch](ctx, c, http.MethodPost, datasetPath(id)+"/items", map[string]any{"items": items}, opts...)
}

// DatasetItemsPushJSONL adds the items of a JSONL stream (one item object a line, at most
// 1,000 lines), all or none; a bad line is reported by its number.
func (c *Client) DatasetItemsPushJSONL(ctx context.Context, id string, jsonl io.Reader) (*DatasetItemBatch, error) {
	body, err := io.ReadAll(jsonl)
	if err != nil {
		return nil, fmt.Errorf("read JSONL: %w", err)
	}
	status, raw, h, err := c.Raw(ctx, http.MethodPost, datasetPath(id)+"/items", body, http.Header{"Content-Type": {"application/x-ndjson"}})
	if err != nil {
		return nil, err
	}
	if status >= 400 {
		return nil, decodeError(&http.Response{StatusCode: status, Header: h}, raw)
	}
	var env struct {
		Data *DatasetItemBatch `json:"data"`
	}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&env); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	return env.Data, nil
}

// DatasetItemGet gets one item of a dataset.
func (c *Client) DatasetItemGet(ctx context.Context, id, itemID string) (*DatasetItem, error) {
	return get[DatasetItem](ctx, c, datasetPath(id)+"/items/"+pathEscape(itemID), nil)
}

// DatasetItemUpdate changes an item's fields.
func (c *Client) DatasetItemUpdate(ctx context.Context, id, itemID string, in DatasetItemUpdateRequest) (*DatasetItem, error) {
	return send[DatasetItem](ctx, c, http.MethodPatch, datasetPath(id)+"/items/"+pathEscape(itemID), in)
}

// DatasetItemDelete deletes an item, returning it.
func (c *Client) DatasetItemDelete(ctx context.Context, id, itemID string) (*DatasetItem, error) {
	return send[DatasetItem](ctx, c, http.MethodDelete, datasetPath(id)+"/items/"+pathEscape(itemID), nil)
}
