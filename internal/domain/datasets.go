package domain

import "encoding/json"

// Dataset is a named set of test cases (items) to run an agent on in experiments.
type Dataset struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	Name        string          `json:"name" doc:"Unique in the workspace."`
	Description string          `json:"description"`
	Metadata    JSONObject      `json:"metadata"`
	InputSchema json.RawMessage `json:"input_schema" doc:"A JSON Schema (draft 2020-12) every item's input satisfies; null when items take any object."`
	ItemCount   int             `json:"item_count"`
	Version     int             `json:"version" doc:"Counts the changes to the items (each add, bulk add, update or delete is one): an experiment records the version it ran."`
	CreatedAt   Time            `json:"created_at"`
	UpdatedAt   Time            `json:"updated_at"`
}

// DatasetItem is one test case of a dataset: the input an agent is run on and, optionally, the
// output expected of it.
type DatasetItem struct {
	ID                string          `json:"id"`
	WorkspaceID       string          `json:"workspace_id"`
	DatasetID         string          `json:"dataset_id"`
	Input             JSONObject      `json:"input"`
	ExpectedOutput    json.RawMessage `json:"expected_output" doc:"Any JSON value; null when none is expected."`
	Metadata          JSONObject      `json:"metadata"`
	SourceExecutionID *string         `json:"source_execution_id" doc:"The execution the item was made from, if any."`
	CreatedAt         Time            `json:"created_at"`
	UpdatedAt         Time            `json:"updated_at"`
}

// DatasetFilter narrows DatasetList; zero fields match everything.
type DatasetFilter struct {
	Name  string // exact name
	Query string // substring of name or description, case-insensitive
}

// DatasetPatch holds the fields of a dataset to change; nil fields stay as they are.
// InputSchema set to JSON null removes the schema.
type DatasetPatch struct {
	Name        *string
	Description *string
	Metadata    *JSONObject
	InputSchema *json.RawMessage
}

// DatasetItemPatch holds the fields of an item to change; nil fields stay as they are.
// ExpectedOutput set to JSON null removes the expected output.
type DatasetItemPatch struct {
	Input          *JSONObject
	ExpectedOutput *json.RawMessage
	Metadata       *JSONObject
}
