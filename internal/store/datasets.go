package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
)

const datasetColumns = `id, workspace_id, name, description, metadata, input_schema, item_count, version, created_at, updated_at`

func scanDataset(row interface{ Scan(...any) error }) (*domain.Dataset, error) {
	var d domain.Dataset
	var schema sql.NullString
	if err := row.Scan(&d.ID, &d.WorkspaceID, &d.Name, &d.Description, &d.Metadata, &schema, &d.ItemCount, &d.Version,
		&d.CreatedAt, &d.UpdatedAt); err != nil {
		return nil, err
	}
	d.InputSchema = rawOrNil(schema)
	if d.Metadata == nil {
		d.Metadata = domain.JSONObject{}
	}
	return &d, nil
}

// rawOrNil is a nullable JSON text column as a json.RawMessage: nil (written as null) for SQL
// NULL.
func rawOrNil(v sql.NullString) json.RawMessage {
	if !v.Valid {
		return nil
	}
	return json.RawMessage(v.String)
}

// nullRaw is a json.RawMessage as a nullable column value: SQL NULL for nil or JSON null.
func nullRaw(v json.RawMessage) *string {
	if len(v) == 0 || strings.TrimSpace(string(v)) == "null" {
		return nil
	}
	s := string(v)
	return &s
}

// DatasetList returns one page of a workspace's datasets, newest first, and the total count.
func (s *Store) DatasetList(ctx context.Context, ws string, f domain.DatasetFilter, p domain.Page) ([]*domain.Dataset, int, error) {
	where, args := whereClause("", ws, []cond{{"name = $%d", f.Name}, {likeBoth("name", "description"), likePattern(f.Query)}})
	return listPage(ctx, s, "datasets", datasetColumns, where, args, "", p, scanDataset)
}

// DatasetGet returns one dataset of the workspace.
func (s *Store) DatasetGet(ctx context.Context, ws, id string) (*domain.Dataset, error) {
	return getByID(ctx, s, "dataset", "datasets", datasetColumns, ws, id, scanDataset)
}

// DatasetCreate inserts an empty dataset; a name already used in the workspace is a
// *ConflictError.
func (s *Store) DatasetCreate(ctx context.Context, d *domain.Dataset) (*domain.Dataset, error) {
	if d.ID == "" {
		d.ID = NewID()
	}
	_, err := s.exec(ctx, `INSERT INTO datasets (id, workspace_id, name, description, metadata, input_schema, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`, d.ID, d.WorkspaceID, d.Name, d.Description, nonNilObject(d.Metadata), nullRaw(d.InputSchema), domain.Now())
	if isUniqueViolation(err) {
		return nil, &ConflictError{Message: fmt.Sprintf("a dataset named %q already exists in this workspace", d.Name)}
	}
	if err != nil {
		return nil, fmt.Errorf("insert dataset: %w", err)
	}
	return s.DatasetGet(ctx, d.WorkspaceID, d.ID)
}

// DatasetUpdate changes the given fields of a dataset; a name already used is a
// *ConflictError. Inside a transaction the row stays locked until it ends (PostgreSQL), so a
// caller may check the items against a new schema before committing.
func (s *Store) DatasetUpdate(ctx context.Context, ws, id string, p domain.DatasetPatch) (*domain.Dataset, error) {
	var schema *sql.NullString
	if p.InputSchema != nil {
		v := nullRaw(*p.InputSchema)
		schema = &sql.NullString{String: domain.Deref(v), Valid: v != nil}
	}
	var meta *domain.JSONObject
	if p.Metadata != nil {
		meta = domain.PtrTo(nonNilObject(*p.Metadata))
	}
	err := s.update(ctx, "dataset", "datasets", ws, id, []set{
		{"name", p.Name}, {"description", p.Description}, {"metadata", meta}, {"input_schema", schema},
	})
	if isUniqueViolation(err) {
		return nil, &ConflictError{Message: fmt.Sprintf("a dataset named %q already exists in this workspace", domain.Deref(p.Name))}
	}
	if err != nil {
		return nil, err
	}
	return s.DatasetGet(ctx, ws, id)
}

// DatasetDelete removes a dataset with its items and returns it as it was.
func (s *Store) DatasetDelete(ctx context.Context, ws, id string) (*domain.Dataset, error) {
	return deleteAsWas(ctx, s, "dataset", "datasets", ws, id, (*Store).DatasetGet, func(tx *Store, _ *domain.Dataset) error {
		if _, err := tx.exec(ctx, "DELETE FROM dataset_items WHERE dataset_id = $1", id); err != nil {
			return fmt.Errorf("delete items of dataset %s: %w", id, err)
		}
		return nil
	})
}

// DatasetTouch records a change to a dataset's items: its version goes up by one and its item
// count by added (negative for a delete), in one statement that locks the row until the
// caller's transaction ends, so concurrent changes are numbered one after the other. It
// returns the dataset as changed.
func (s *Store) DatasetTouch(ctx context.Context, ws, id string, added int) (*domain.Dataset, error) {
	d, err := scanDataset(s.w.QueryRowContext(ctx, `UPDATE datasets SET version = version + 1, item_count = item_count + $1, updated_at = $2
		WHERE workspace_id = $3 AND id = $4 RETURNING `+datasetColumns, added, domain.Now(), ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("dataset", id)
	}
	if err != nil {
		return nil, fmt.Errorf("touch dataset %s: %w", id, err)
	}
	return d, nil
}

const datasetItemColumns = `id, workspace_id, dataset_id, input, expected_output, metadata, source_execution_id, created_at, updated_at`

func scanDatasetItem(row interface{ Scan(...any) error }) (*domain.DatasetItem, error) {
	var it domain.DatasetItem
	var expected sql.NullString
	if err := row.Scan(&it.ID, &it.WorkspaceID, &it.DatasetID, &it.Input, &expected, &it.Metadata, &it.SourceExecutionID,
		&it.CreatedAt, &it.UpdatedAt); err != nil {
		return nil, err
	}
	it.ExpectedOutput = rawOrNil(expected)
	if it.Input == nil {
		it.Input = domain.JSONObject{}
	}
	if it.Metadata == nil {
		it.Metadata = domain.JSONObject{}
	}
	return &it, nil
}

// DatasetItemList returns one page of a dataset's items, newest first, and the total count.
// A dataset not of the workspace is not found.
func (s *Store) DatasetItemList(ctx context.Context, ws, datasetID string, p domain.Page) ([]*domain.DatasetItem, int, error) {
	if _, err := s.DatasetGet(ctx, ws, datasetID); err != nil {
		return nil, 0, err
	}
	where, args := whereClause("", ws, []cond{{"dataset_id = $%d", datasetID}})
	return listPage(ctx, s, "dataset_items", datasetItemColumns, where, args, "", p, scanDatasetItem)
}

// DatasetItemsAll returns every item of a dataset, oldest first: the order an experiment runs
// them in.
func (s *Store) DatasetItemsAll(ctx context.Context, ws, datasetID string) ([]*domain.DatasetItem, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+datasetItemColumns+` FROM dataset_items WHERE workspace_id = $1 AND dataset_id = $2
		ORDER BY created_at, id`, ws, datasetID)
	if err != nil {
		return nil, fmt.Errorf("read items of dataset %s: %w", datasetID, err)
	}
	return collect(rows, scanDatasetItem)
}

// DatasetItemGet returns one item of a dataset of the workspace.
func (s *Store) DatasetItemGet(ctx context.Context, ws, datasetID, id string) (*domain.DatasetItem, error) {
	it, err := scanDatasetItem(s.r.QueryRowContext(ctx, "SELECT "+datasetItemColumns+
		" FROM dataset_items WHERE workspace_id = $1 AND dataset_id = $2 AND id = $3", ws, datasetID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("dataset item", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get dataset item %s: %w", id, err)
	}
	return it, nil
}

// datasetItemChunk is how many items one INSERT writes (9 parameters each, well under both
// dialects' limits).
const datasetItemChunk = 100

// DatasetItemsInsert writes items into a dataset, all or none (the caller's transaction
// decides; see DatasetTouch for the version), and returns them as stored, in order.
func (s *Store) DatasetItemsInsert(ctx context.Context, ws, datasetID string, items []*domain.DatasetItem) ([]*domain.DatasetItem, error) {
	now := domain.Now()
	for start := 0; start < len(items); start += datasetItemChunk {
		chunk := items[start:min(start+datasetItemChunk, len(items))]
		var b strings.Builder
		b.WriteString(`INSERT INTO dataset_items (id, workspace_id, dataset_id, input, expected_output, metadata, source_execution_id,
			created_at, updated_at) VALUES `)
		args := make([]any, 0, 9*len(chunk))
		for i, it := range chunk {
			if it.ID == "" {
				it.ID = NewID()
			}
			it.WorkspaceID, it.DatasetID, it.CreatedAt, it.UpdatedAt = ws, datasetID, now, now
			if i > 0 {
				b.WriteString(", ")
			}
			n := len(args)
			fmt.Fprintf(&b, "($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8, n+9)
			args = append(args, it.ID, ws, datasetID, nonNilObject(it.Input), nullRaw(it.ExpectedOutput), nonNilObject(it.Metadata),
				it.SourceExecutionID, now, now)
		}
		if _, err := s.exec(ctx, b.String(), args...); err != nil {
			if isUniqueViolation(err) {
				return nil, &ConflictError{Message: "a dataset item with one of these ids already exists"}
			}
			return nil, fmt.Errorf("insert items of dataset %s: %w", datasetID, err)
		}
	}
	for _, it := range items {
		if it.ExpectedOutput != nil && nullRaw(it.ExpectedOutput) == nil {
			it.ExpectedOutput = nil
		}
		if it.Input == nil {
			it.Input = domain.JSONObject{}
		}
		if it.Metadata == nil {
			it.Metadata = domain.JSONObject{}
		}
	}
	return items, nil
}

// DatasetItemUpdate changes the given fields of an item (the caller bumps the dataset's version
// in the same transaction: DatasetTouch).
func (s *Store) DatasetItemUpdate(ctx context.Context, ws, datasetID, id string, p domain.DatasetItemPatch) (*domain.DatasetItem, error) {
	if _, err := s.DatasetItemGet(ctx, ws, datasetID, id); err != nil {
		return nil, err
	}
	var expected *sql.NullString
	if p.ExpectedOutput != nil {
		v := nullRaw(*p.ExpectedOutput)
		expected = &sql.NullString{String: domain.Deref(v), Valid: v != nil}
	}
	err := s.update(ctx, "dataset item", "dataset_items", ws, id, []set{{"input", p.Input}, {"expected_output", expected}, {"metadata", p.Metadata}})
	if err != nil {
		return nil, err
	}
	return s.DatasetItemGet(ctx, ws, datasetID, id)
}

// DatasetItemDelete removes an item and returns it as it was (the caller bumps the dataset's
// version and count in the same transaction: DatasetTouch).
func (s *Store) DatasetItemDelete(ctx context.Context, ws, datasetID, id string) (*domain.DatasetItem, error) {
	it, err := s.DatasetItemGet(ctx, ws, datasetID, id)
	if err != nil {
		return nil, err
	}
	return it, s.deleteRow(ctx, "dataset item", "dataset_items", ws, id)
}

func nonNilObject(o domain.JSONObject) domain.JSONObject {
	if o == nil {
		return domain.JSONObject{}
	}
	return o
}
