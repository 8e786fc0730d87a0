// Package eval holds the rules of evaluations: datasets whose items satisfy the dataset's
// input schema, and evaluators that turn a run's output into a score. Storage is the store's;
// this package decides what may be written and computes scores.
package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/schemacheck"
	"github.com/agentplane/agentplane/internal/store"
)

// MaxItemsPerRequest bounds a bulk add of dataset items.
const MaxItemsPerRequest = 1000

// ItemInput is one item to add to a dataset. Input nil means absent: it is then taken from the
// source execution, which is required in that case.
type ItemInput struct {
	Input             map[string]any
	ExpectedOutput    json.RawMessage
	Metadata          map[string]any
	SourceExecutionID *string
}

// ItemError is what is wrong with one item of a request (Index counts from 0).
type ItemError struct {
	Index int
	Err   error
}

// ItemErrors lists every bad item of a request, in order; nothing of the request was written.
type ItemErrors []ItemError

func (e ItemErrors) Error() string {
	parts := make([]string, len(e))
	for i, ie := range e {
		parts[i] = fmt.Sprintf("item %d: %v", ie.Index, ie.Err)
	}
	return strings.Join(parts, "; ")
}

// CheckSchema compiles a dataset's input schema; nil or JSON null is no schema.
func CheckSchema(raw json.RawMessage) (*schemacheck.Schema, error) {
	if len(raw) == 0 || strings.TrimSpace(string(raw)) == "null" {
		return nil, nil
	}
	s, err := schemacheck.Compile(raw)
	if err != nil {
		return nil, &store.ValidationError{Field: "input_schema", Message: "is not a valid JSON Schema: " + err.Error()}
	}
	return s, nil
}

// checkInput validates an item's input against the dataset's schema (nil: any object).
func checkInput(schema *schemacheck.Schema, input map[string]any) error {
	if schema == nil {
		return nil
	}
	if err := schema.Validate(input); err != nil {
		return &store.ValidationError{Field: "input", Message: "does not match the dataset's input_schema: " + err.Error()}
	}
	return nil
}

// AddItems adds items to a dataset, all or none, as one change (the version goes up by one).
// An item with a source execution takes its input from it when none is given, and its output
// as the expected output when none is given. Every bad item is reported (ItemErrors).
func AddItems(ctx context.Context, st *store.Store, ws, datasetID string, in []ItemInput) ([]*domain.DatasetItem, error) {
	if len(in) == 0 {
		return nil, &store.ValidationError{Field: "items", Message: "at least one item is required"}
	}
	if len(in) > MaxItemsPerRequest {
		return nil, &store.ValidationError{Field: "items", Message: fmt.Sprintf("at most %d items per request, got %d", MaxItemsPerRequest, len(in))}
	}
	var out []*domain.DatasetItem
	err := st.InTx(ctx, func(tx *store.Store) error {
		d, err := tx.DatasetTouch(ctx, ws, datasetID, len(in))
		if err != nil {
			return err
		}
		schema, err := CheckSchema(d.InputSchema)
		if err != nil {
			return err
		}
		items := make([]*domain.DatasetItem, len(in))
		var bad ItemErrors
		for i, it := range in {
			item, err := buildItem(ctx, tx, ws, it)
			if err == nil {
				err = checkInput(schema, item.Input)
			}
			if err != nil {
				bad = append(bad, ItemError{Index: i, Err: err})
				continue
			}
			items[i] = item
		}
		if len(bad) > 0 {
			return bad
		}
		out, err = tx.DatasetItemsInsert(ctx, ws, datasetID, items)
		return err
	})
	return out, err
}

// buildItem makes the stored item of a request's item, reading its source execution.
func buildItem(ctx context.Context, tx *store.Store, ws string, in ItemInput) (*domain.DatasetItem, error) {
	item := &domain.DatasetItem{Input: in.Input, ExpectedOutput: in.ExpectedOutput, Metadata: in.Metadata, SourceExecutionID: in.SourceExecutionID}
	if in.SourceExecutionID == nil {
		if in.Input == nil {
			return nil, &store.ValidationError{Field: "input", Message: "is required (a JSON object), unless source_execution_id names an execution to take it from"}
		}
		return item, nil
	}
	ex, err := tx.ExecutionGet(ctx, ws, *in.SourceExecutionID)
	if store.IsNotFound(err) {
		return nil, &store.ReferenceError{Field: "source_execution_id", Resource: "execution", ID: *in.SourceExecutionID}
	}
	if err != nil {
		return nil, err
	}
	if item.Input == nil {
		item.Input = ex.Input
	}
	if len(item.ExpectedOutput) == 0 && len(ex.Output) > 0 {
		item.ExpectedOutput = ex.Output
	}
	return item, nil
}

// UpdateItem changes an item as one change of its dataset; a new input must satisfy the
// dataset's schema.
func UpdateItem(ctx context.Context, st *store.Store, ws, datasetID, id string, p domain.DatasetItemPatch) (*domain.DatasetItem, error) {
	var out *domain.DatasetItem
	err := st.InTx(ctx, func(tx *store.Store) error {
		d, err := tx.DatasetTouch(ctx, ws, datasetID, 0)
		if err != nil {
			return err
		}
		if p.Input != nil {
			schema, err := CheckSchema(d.InputSchema)
			if err != nil {
				return err
			}
			if err := checkInput(schema, *p.Input); err != nil {
				return err
			}
		}
		out, err = tx.DatasetItemUpdate(ctx, ws, datasetID, id, p)
		return err
	})
	return out, err
}

// DeleteItem removes an item as one change of its dataset.
func DeleteItem(ctx context.Context, st *store.Store, ws, datasetID, id string) (*domain.DatasetItem, error) {
	var out *domain.DatasetItem
	err := st.InTx(ctx, func(tx *store.Store) error {
		if _, err := tx.DatasetTouch(ctx, ws, datasetID, -1); err != nil {
			return err
		}
		var err error
		out, err = tx.DatasetItemDelete(ctx, ws, datasetID, id)
		return err
	})
	return out, err
}

// CreateDataset checks a new dataset's schema and stores it.
func CreateDataset(ctx context.Context, st *store.Store, d *domain.Dataset) (*domain.Dataset, error) {
	if _, err := CheckSchema(d.InputSchema); err != nil {
		return nil, err
	}
	return st.DatasetCreate(ctx, d)
}

// UpdateDataset changes a dataset; a new input schema must be valid and every item already in
// the dataset must satisfy it (the first that does not is named).
func UpdateDataset(ctx context.Context, st *store.Store, ws, id string, p domain.DatasetPatch) (*domain.Dataset, error) {
	var schema *schemacheck.Schema
	if p.InputSchema != nil {
		var err error
		if schema, err = CheckSchema(*p.InputSchema); err != nil {
			return nil, err
		}
	}
	var out *domain.Dataset
	err := st.InTx(ctx, func(tx *store.Store) error {
		var err error
		if out, err = tx.DatasetUpdate(ctx, ws, id, p); err != nil || schema == nil {
			return err
		}
		items, err := tx.DatasetItemsAll(ctx, ws, id)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := schema.Validate(map[string]any(it.Input)); err != nil {
				return &store.ValidationError{Field: "input_schema", Message: fmt.Sprintf("item %s's input does not match it: %v; change or delete the item first", it.ID, err)}
			}
		}
		return nil
	})
	return out, err
}
