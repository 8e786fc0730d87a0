package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/eval"
)

type datasetUpdateRequest struct {
	Name        *string          `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Description *string          `json:"description,omitempty" maxLength:"2000"`
	Metadata    *map[string]any  `json:"metadata,omitempty" doc:"Replaces the whole object."`
	InputSchema *json.RawMessage `json:"input_schema,omitempty" doc:"A new schema, which every item already in the dataset must satisfy; null removes it."`
}

// datasetItemRequest is one item of POST /datasets/{id}/items (alone, in items, or a line of
// a JSONL body).
type datasetItemRequest struct {
	Input             map[string]any  `json:"input,omitempty" doc:"The input the agent is run on; required without source_execution_id."`
	ExpectedOutput    json.RawMessage `json:"expected_output,omitempty" doc:"Any JSON value the output is compared with."`
	Metadata          map[string]any  `json:"metadata,omitempty"`
	SourceExecutionID *string         `json:"source_execution_id,omitempty" maxLength:"200" doc:"An execution of the workspace to make the item from: its input (unless input is given) and its output as the expected output (unless expected_output is given)."`
}

type datasetItemsCreateRequest struct {
	datasetItemRequest
	Items []datasetItemRequest `json:"items,omitempty" doc:"Several items at once (instead of the fields of one): all are written or none."`
}

type datasetItemUpdateRequest struct {
	Input          *map[string]any  `json:"input,omitempty" doc:"A new input; it must satisfy the dataset's input_schema."`
	ExpectedOutput *json.RawMessage `json:"expected_output,omitempty" doc:"A new expected output; null removes it."`
	Metadata       *map[string]any  `json:"metadata,omitempty" doc:"Replaces the whole object."`
}

// DatasetItemBatch is the answer to a bulk add: the items added, in the order sent.
type DatasetItemBatch struct {
	Count int                   `json:"count"`
	Items []*domain.DatasetItem `json:"items"`
}

// datasetItemsCreated documents the answer of POST /datasets/{id}/items: one item, or a batch
// for a bulk add.
type datasetItemsCreated struct{}

func (datasetItemsCreated) Schema(r huma.Registry) *huma.Schema {
	return &huma.Schema{OneOf: []*huma.Schema{
		r.Schema(reflect.TypeFor[domain.DatasetItem](), true, ""),
		r.Schema(reflect.TypeFor[DatasetItemBatch](), true, ""),
	}}
}

const ndjson = "application/x-ndjson"

func (s *Server) datasetRoutes() []route {
	const tag = "Datasets"
	item := v1 + "/datasets/{id}/items/{item_id}"
	return []route{
		{method: "GET", path: v1 + "/datasets", op: "listDatasets", tag: tag, scope: "datasets:read", summary: "List datasets",
			list: true,
			params: []param{{name: "name", typ: "string", desc: "Only the dataset of this name."},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the name or description."}},
			resp: domain.Dataset{}, h: s.listDatasets},
		{method: "POST", path: v1 + "/datasets", op: "createDataset", tag: tag, scope: "datasets:write", summary: "Create a dataset",
			body: domain.DatasetCreateRequest{}, resp: domain.Dataset{}, status: http.StatusCreated, creates: true, h: s.createDataset},
		{method: "GET", path: v1 + "/datasets/{id}", op: "getDataset", tag: tag, scope: "datasets:read", summary: "Get a dataset",
			resp: domain.Dataset{}, h: byID(s, s.store.DatasetGet)},
		{method: "PATCH", path: v1 + "/datasets/{id}", op: "updateDataset", tag: tag, scope: "datasets:write", summary: "Update a dataset",
			body: datasetUpdateRequest{}, resp: domain.Dataset{}, errs: []int{http.StatusConflict}, h: s.updateDataset},
		{method: "DELETE", path: v1 + "/datasets/{id}", op: "deleteDataset", tag: tag, scope: "datasets:write", summary: "Delete a dataset",
			resp: domain.Dataset{}, h: byID(s, s.store.DatasetDelete)},

		{method: "GET", path: v1 + "/datasets/{id}/items", op: "listDatasetItems", tag: tag, scope: "datasets:read", summary: "List a dataset's items",
			list: true, resp: domain.DatasetItem{}, h: childList(s, s.store.DatasetItemList)},
		{method: "POST", path: v1 + "/datasets/{id}/items", op: "createDatasetItems", tag: tag, scope: "datasets:write", summary: "Add items to a dataset",
			desc: fmt.Sprintf(description("createDatasetItems"), eval.MaxItemsPerRequest, ndjson),
			body: datasetItemsCreateRequest{}, ndjson: true, resp: datasetItemsCreated{}, status: http.StatusCreated, creates: true, h: s.createDatasetItems},
		{method: "GET", path: item, op: "getDatasetItem", tag: tag, scope: "datasets:read", summary: "Get a dataset item",
			resp: domain.DatasetItem{}, h: s.getDatasetItem},
		{method: "PATCH", path: item, op: "updateDatasetItem", tag: tag, scope: "datasets:write", summary: "Update a dataset item",
			body: datasetItemUpdateRequest{}, resp: domain.DatasetItem{}, h: s.updateDatasetItem},
		{method: "DELETE", path: item, op: "deleteDatasetItem", tag: tag, scope: "datasets:write", summary: "Delete a dataset item",
			resp: domain.DatasetItem{}, h: s.deleteDatasetItem},
	}
}

func (s *Server) listDatasets(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	items, total, err := s.store.DatasetList(r.Context(), s.workspace(r), domain.DatasetFilter{Name: q.Get("name"), Query: q.Get("q")}, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) createDataset(w http.ResponseWriter, r *http.Request) error {
	var req domain.DatasetCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	d, err := eval.CreateDataset(r.Context(), s.store, &domain.Dataset{WorkspaceID: s.workspace(r), Name: strings.TrimSpace(req.Name),
		Description: req.Description, Metadata: req.Metadata, InputSchema: req.InputSchema})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, d)
	return nil
}

func (s *Server) updateDataset(w http.ResponseWriter, r *http.Request) error {
	var req datasetUpdateRequest
	np, err := decodeNamedPatch(w, r, &req, &req.Name, &req.Description)
	if err != nil {
		return err
	}
	p := domain.DatasetPatch{Name: np.name, Description: np.desc, InputSchema: req.InputSchema}
	if isNullField(np.body, "input_schema") {
		p.InputSchema = ptr(json.RawMessage("null"))
	}
	if req.Metadata != nil {
		p.Metadata = ptr(domain.JSONObject(*req.Metadata))
	}
	d, err := eval.UpdateDataset(r.Context(), s.store, s.workspace(r), pathID(r, "id"), p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, d)
	return nil
}

func (s *Server) getDatasetItem(w http.ResponseWriter, r *http.Request) error {
	it, err := s.store.DatasetItemGet(r.Context(), s.workspace(r), pathID(r, "id"), pathID(r, "item_id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, it)
	return nil
}

func (s *Server) updateDatasetItem(w http.ResponseWriter, r *http.Request) error {
	var req datasetItemUpdateRequest
	body, err := decodeKeep(w, r, &req)
	if err != nil {
		return err
	}
	p := domain.DatasetItemPatch{ExpectedOutput: req.ExpectedOutput}
	if isNullField(body, "expected_output") {
		p.ExpectedOutput = ptr(json.RawMessage("null"))
	}
	if isNullField(body, "input") {
		return domain.Invalid("input", "must be a JSON object, not null")
	}
	if req.Input != nil {
		p.Input = ptr(domain.JSONObject(*req.Input))
	}
	if req.Metadata != nil {
		p.Metadata = ptr(domain.JSONObject(*req.Metadata))
	}
	it, err := eval.UpdateItem(r.Context(), s.store, s.workspace(r), pathID(r, "id"), pathID(r, "item_id"), p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, it)
	return nil
}

func (s *Server) deleteDatasetItem(w http.ResponseWriter, r *http.Request) error {
	it, err := eval.DeleteItem(r.Context(), s.store, s.workspace(r), pathID(r, "id"), pathID(r, "item_id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, it)
	return nil
}

// createDatasetItems adds one item, an items array, or the lines of a JSONL body.
func (s *Server) createDatasetItems(w http.ResponseWriter, r *http.Request) error {
	var reqs []datasetItemRequest
	label := func(i int) string { return fmt.Sprintf("item %d", i) }
	bulk := true
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == ndjson {
		var lines []int
		var err error
		if reqs, lines, err = readItemLines(w, r); err != nil {
			return err
		}
		label = func(i int) string { return fmt.Sprintf("line %d", lines[i]) }
	} else {
		var req datasetItemsCreateRequest
		body, err := decodeKeep(w, r, &req)
		if err != nil {
			return err
		}
		if bodyField(body, "items") != nil {
			reqs = req.Items
		} else {
			reqs, bulk = []datasetItemRequest{req.datasetItemRequest}, false
		}
	}
	in := make([]eval.ItemInput, len(reqs))
	for i, rq := range reqs {
		in[i] = eval.ItemInput{Input: rq.Input, ExpectedOutput: rq.ExpectedOutput, Metadata: rq.Metadata, SourceExecutionID: rq.SourceExecutionID}
	}
	items, err := eval.AddItems(r.Context(), s.store, s.workspace(r), pathID(r, "id"), in)
	var bad eval.ItemErrors
	switch {
	case errors.As(err, &bad) && !bulk:
		return bad[0].Err
	case errors.As(err, &bad):
		return itemErrors(http.StatusUnprocessableEntity, bad, label, s, r)
	case err != nil:
		return err
	case !bulk:
		writeData(w, http.StatusCreated, items[0])
	default:
		writeData(w, http.StatusCreated, DatasetItemBatch{Count: len(items), Items: items})
	}
	return nil
}

// readItemLines decodes a JSONL body, one item object a line, and returns the items with the
// number of the line each came from; every line that is not an item object is reported by
// number in a single 400.
func readItemLines(w http.ResponseWriter, r *http.Request) ([]datasetItemRequest, []int, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		return nil, nil, errorf(http.StatusRequestEntityTooLarge, "request body exceeds %d bytes", maxBodyBytes)
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), maxBodyBytes)
	var out []datasetItemRequest
	var lines []int
	var bad []string
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var it datasetItemRequest
		if err := decodeBytes(line, &it); err != nil {
			bad = append(bad, fmt.Sprintf("line %d: %v", n, err))
			continue
		}
		out, lines = append(out, it), append(lines, n)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, badRequest("could not read the JSONL body: %v", err)
	}
	if len(bad) > 0 {
		return nil, nil, errorf(http.StatusBadRequest, "%s", joinErrors(bad))
	}
	if len(out) == 0 {
		return nil, nil, domain.Invalid("items", "the JSONL body holds no item: send one JSON object a line")
	}
	return out, lines, nil
}

// joinErrors lists the first 20 problems and counts the rest.
func joinErrors(msgs []string) string {
	const show = 20
	if len(msgs) > show {
		return strings.Join(msgs[:show], "; ") + fmt.Sprintf("; and %d more", len(msgs)-show)
	}
	return strings.Join(msgs, "; ")
}

// itemErrors is one API error listing every bad item of a bulk add by its label.
func itemErrors(status int, bad eval.ItemErrors, label func(int) string, s *Server, r *http.Request) error {
	msgs := make([]string, len(bad))
	for i, ie := range bad {
		msgs[i] = label(ie.Index) + ": " + s.toAPIError(r, ie.Err).Message
	}
	return errorf(status, "%s", joinErrors(msgs))
}
