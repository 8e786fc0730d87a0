package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Dataset is a named set of test cases to run an agent on in experiments. Version counts the
// changes to its items.
type Dataset struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Metadata    map[string]any  `json:"metadata"`
	InputSchema json.RawMessage `json:"input_schema"`
	ItemCount   int             `json:"item_count"`
	Version     int             `json:"version"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

// DatasetCreate is the body of DatasetCreate.
type DatasetCreate struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Metadata    map[string]any  `json:"metadata,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// DatasetUpdate holds the fields of a dataset to change; nil fields stay as they are. An
// InputSchema of JSON null removes the schema.
type DatasetUpdate struct {
	Name        *string          `json:"name,omitempty"`
	Description *string          `json:"description,omitempty"`
	Metadata    *map[string]any  `json:"metadata,omitempty"`
	InputSchema *json.RawMessage `json:"input_schema,omitempty"`
}

// DatasetListOptions filters DatasetList.
type DatasetListOptions struct {
	ListOptions
	Name  string // exact name
	Query string
}

// DatasetItem is one test case: an input and, optionally, the output expected.
type DatasetItem struct {
	ID                string          `json:"id"`
	WorkspaceID       string          `json:"workspace_id"`
	DatasetID         string          `json:"dataset_id"`
	Input             map[string]any  `json:"input"`
	ExpectedOutput    json.RawMessage `json:"expected_output"`
	Metadata          map[string]any  `json:"metadata"`
	SourceExecutionID *string         `json:"source_execution_id"`
	CreatedAt         time.Time       `json:"created_at"`
	UpdatedAt         time.Time       `json:"updated_at"`
}

// DatasetItemCreate is one item to add; without Input, SourceExecutionID names the execution
// to take it from (and its output as the expected output, unless one is given).
type DatasetItemCreate struct {
	// Input is sent even when empty ({} is an input); nil is sent as null, which the server
	// takes as absent.
	Input             map[string]any  `json:"input"`
	ExpectedOutput    json.RawMessage `json:"expected_output,omitempty"`
	Metadata          map[string]any  `json:"metadata,omitempty"`
	SourceExecutionID *string         `json:"source_execution_id,omitempty"`
}

// DatasetItemUpdate holds the fields of an item to change; nil fields stay as they are.
type DatasetItemUpdate struct {
	Input          *map[string]any  `json:"input,omitempty"`
	ExpectedOutput *json.RawMessage `json:"expected_output,omitempty"`
	Metadata       *map[string]any  `json:"metadata,omitempty"`
}

// DatasetItemBatch is the answer to a bulk add: the items added, in order.
type DatasetItemBatch struct {
	Count int           `json:"count"`
	Items []DatasetItem `json:"items"`
}

func datasetPath(id string) string { return "/api/v1/datasets/" + pathEscape(id) }

// DatasetList lists datasets, newest first.
func (c *Client) DatasetList(ctx context.Context, o DatasetListOptions) (*List[Dataset], error) {
	q := o.values()
	setIf(q, "name", o.Name)
	setIf(q, "q", o.Query)
	return list[Dataset](ctx, c, "/api/v1/datasets", q)
}

// DatasetCreate creates an empty dataset.
func (c *Client) DatasetCreate(ctx context.Context, in DatasetCreate, opts ...RequestOption) (*Dataset, error) {
	return send[Dataset](ctx, c, http.MethodPost, "/api/v1/datasets", in, opts...)
}

// DatasetGet gets a dataset.
func (c *Client) DatasetGet(ctx context.Context, id string) (*Dataset, error) {
	return get[Dataset](ctx, c, datasetPath(id), nil)
}

// DatasetUpdate changes a dataset's fields.
func (c *Client) DatasetUpdate(ctx context.Context, id string, in DatasetUpdate) (*Dataset, error) {
	return send[Dataset](ctx, c, http.MethodPatch, datasetPath(id), in)
}

// DatasetDelete deletes a dataset with its items, returning it.
func (c *Client) DatasetDelete(ctx context.Context, id string) (*Dataset, error) {
	return send[Dataset](ctx, c, http.MethodDelete, datasetPath(id), nil)
}

// DatasetItemList lists a dataset's items, newest first.
func (c *Client) DatasetItemList(ctx context.Context, id string, o ListOptions) (*List[DatasetItem], error) {
	return list[DatasetItem](ctx, c, datasetPath(id)+"/items", o.values())
}

// DatasetItemCreate adds one item to a dataset.
func (c *Client) DatasetItemCreate(ctx context.Context, id string, in DatasetItemCreate, opts ...RequestOption) (*DatasetItem, error) {
	return send[DatasetItem](ctx, c, http.MethodPost, datasetPath(id)+"/items", in, opts...)
}

// DatasetItemsAdd adds several items at once (at most 1,000), all or none.
func (c *Client) DatasetItemsAdd(ctx context.Context, id string, items []DatasetItemCreate, opts ...RequestOption) (*DatasetItemBatch, error) {
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
func (c *Client) DatasetItemUpdate(ctx context.Context, id, itemID string, in DatasetItemUpdate) (*DatasetItem, error) {
	return send[DatasetItem](ctx, c, http.MethodPatch, datasetPath(id)+"/items/"+pathEscape(itemID), in)
}

// DatasetItemDelete deletes an item, returning it.
func (c *Client) DatasetItemDelete(ctx context.Context, id, itemID string) (*DatasetItem, error) {
	return send[DatasetItem](ctx, c, http.MethodDelete, datasetPath(id)+"/items/"+pathEscape(itemID), nil)
}
