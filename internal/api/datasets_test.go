package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
)

// TestDatasetRoutes runs on the emulator (in-memory SQLite) and on the server over
// PostgreSQL (when TEST_DATABASE_URL is set).
func TestDatasetRoutes(t *testing.T) {
	t.Run("emulator", func(t *testing.T) { datasetRoutes(t, newTestEnv(t)) })
	t.Run("postgres", func(t *testing.T) { datasetRoutes(t, newTestEnv(t, onStore(openTestPostgres(t)), asServer())) })
}

func datasetRoutes(t *testing.T, e *testEnv) {
	ctx := context.Background()
	d, err := e.c.DatasetCreate(ctx, client.DatasetCreateRequest{Name: "Support questions", Description: "Real tickets",
		InputSchema: json.RawMessage(`{"type":"object","required":["message"],"properties":{"message":{"type":"string","minLength":1}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != 0 || d.ItemCount != 0 || d.Metadata == nil {
		t.Fatalf("new dataset: %+v", d)
	}
	a, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Helper", Type: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Where is my order?"}})
	if err != nil {
		t.Fatal(err)
	}
	id := "/api/v1/datasets/" + d.ID
	items := id + "/items"
	var itemID string
	e.run([]scenario{
		{name: "list", method: "GET", path: "/api/v1/datasets", status: 200, fields: map[string]any{"pagination.total": 1, "data.0.name": "Support questions"}},
		{name: "list by name", method: "GET", path: "/api/v1/datasets?name=Support%20questions", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list by other name", method: "GET", path: "/api/v1/datasets?name=Support", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list q", method: "GET", path: "/api/v1/datasets?q=tickets", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "create duplicate name", method: "POST", path: "/api/v1/datasets", body: `{"name":"Support questions"}`, status: 409, code: "conflict", message: "Support questions"},
		{name: "create blank name", method: "POST", path: "/api/v1/datasets", body: `{"name":" "}`, status: 422, message: "name"},
		{name: "create bad schema", method: "POST", path: "/api/v1/datasets", body: `{"name":"x","input_schema":{"type":"nope"}}`, status: 422, message: "input_schema"},
		{name: "create wrong type", method: "POST", path: "/api/v1/datasets", body: `{"name":"x","metadata":[]}`, status: 400, message: "metadata"},
		{name: "get missing", method: "GET", path: "/api/v1/datasets/nope", status: 404, message: "dataset nope"},

		{name: "add one", method: "POST", path: items, body: `{"input":{"message":"Hi"},"expected_output":"Hello","metadata":{"tier":"gold"}}`, status: 201,
			fields: map[string]any{"data.input.message": "Hi", "data.expected_output": "Hello", "data.metadata.tier": "gold", "data.source_execution_id": nil},
			check:  func(t *testing.T, b map[string]any) { itemID = lookup(b, "data.id").(string) }},
		{name: "add one failing the schema", method: "POST", path: items, body: `{"input":{"message":""}}`, status: 422, message: "input: does not match the dataset's input_schema: /message"},
		{name: "add one without input", method: "POST", path: items, body: `{"expected_output":1}`, status: 422, message: "input: is required"},
		{name: "add from a missing execution", method: "POST", path: items, body: `{"source_execution_id":"nope"}`, status: 422, message: "source_execution_id: execution nope does not exist"},
		{name: "add from an execution", method: "POST", path: items, body: `{"source_execution_id":"` + x.ID + `"}`, status: 201,
			fields: map[string]any{"data.input.message": "Where is my order?", "data.expected_output": jsonAny(t, x.Output), "data.source_execution_id": x.ID}},
		{name: "add from an execution with its own expected output", method: "POST", path: items, body: `{"source_execution_id":"` + x.ID + `","expected_output":{"content":"Tracking link"}}`, status: 201,
			fields: map[string]any{"data.expected_output.content": "Tracking link"}},
		{name: "add bulk", method: "POST", path: items, body: `{"items":[{"input":{"message":"a"}},{"input":{"message":"b"},"expected_output":null}]}`, status: 201,
			fields: map[string]any{"data.count": 2, "data.items.0.input.message": "a", "data.items.1.expected_output": nil}},
		{name: "add bulk with bad items", method: "POST", path: items, body: `{"items":[{"input":{"message":"ok"}},{"input":{}},{"expected_output":2}]}`, status: 422,
			message: "item 1: input: does not match the dataset's input_schema"},
		{name: "add bulk names every bad item", method: "POST", path: items, body: `{"items":[{"input":{"message":"ok"}},{"input":{}},{"expected_output":2}]}`, status: 422,
			message: "item 2: input: is required"},
		{name: "add empty bulk", method: "POST", path: items, body: `{"items":[]}`, status: 422, message: "items: at least one item"},
		{name: "add bulk wrong type", method: "POST", path: items, body: `{"items":[{"input":"hi"}]}`, status: 400, message: "items[0].input"},
		{name: "add to a missing dataset", method: "POST", path: "/api/v1/datasets/nope/items", body: `{"input":{"message":"x"}}`, status: 404, message: "dataset nope"},
		{name: "dataset after five adds", method: "GET", path: id, status: 200, fields: map[string]any{"data.item_count": 5, "data.version": 4}},

		{name: "jsonl", method: "POST", path: items, header: map[string]string{"Content-Type": "application/x-ndjson"},
			body: "{\"input\":{\"message\":\"l1\"}}\n\n{\"input\":{\"message\":\"l3\"},\"expected_output\":[1,2]}\n", status: 201,
			fields: map[string]any{"data.count": 2, "data.items.1.expected_output": []any{1.0, 2.0}}},
		{name: "jsonl bad lines", method: "POST", path: items, header: map[string]string{"Content-Type": "application/x-ndjson"},
			body: "{\"input\":{\"message\":\"ok\"}}\n{\"input\":\n[1]\n", status: 400, message: "line 2: "},
		{name: "jsonl bad lines names each", method: "POST", path: items, header: map[string]string{"Content-Type": "application/x-ndjson"},
			body: "{\"input\":{\"message\":\"ok\"}}\n{\"input\":\n[1]\n", status: 400, message: "line 3: "},
		{name: "jsonl rule broken by line", method: "POST", path: items, header: map[string]string{"Content-Type": "application/x-ndjson"},
			body: "{\"input\":{\"message\":\"ok\"}}\n\n{\"input\":{\"message\":7}}\n", status: 422, message: "line 3: input: does not match"},
		{name: "jsonl empty", method: "POST", path: items, header: map[string]string{"Content-Type": "application/x-ndjson"}, body: "\n\n", status: 422, message: "holds no item"},
		{name: "nothing half-written", method: "GET", path: id, status: 200, fields: map[string]any{"data.item_count": 7, "data.version": 5}},
		{name: "other media type", method: "POST", path: items, header: map[string]string{"Content-Type": "text/csv"}, body: "a,b", status: 415},
	})
	e.run([]scenario{

		{name: "list items", method: "GET", path: items + "?limit=2", status: 200, fields: map[string]any{"pagination.total": 7, "data.0.input.message": "l3"}},
		{name: "list items of a missing dataset", method: "GET", path: "/api/v1/datasets/nope/items", status: 404},
		{name: "get item", method: "GET", path: items + "/" + itemID, status: 200, fields: map[string]any{"data.input.message": "Hi"}},
		{name: "get item of another dataset path", method: "GET", path: "/api/v1/datasets/nope/items/" + itemID, status: 404},
		{name: "patch item", method: "PATCH", path: items + "/" + itemID, body: `{"input":{"message":"Hi there"},"expected_output":null}`, status: 200,
			fields: map[string]any{"data.input.message": "Hi there", "data.expected_output": nil, "data.metadata.tier": "gold"}},
		{name: "patch item against the schema", method: "PATCH", path: items + "/" + itemID, body: `{"input":{}}`, status: 422, message: "input"},
		{name: "patch item input null", method: "PATCH", path: items + "/" + itemID, body: `{"input":null}`, status: 422, message: "input"},
		{name: "patch missing item", method: "PATCH", path: items + "/nope", body: `{"metadata":{}}`, status: 404, message: "dataset item nope"},
		{name: "version after patch", method: "GET", path: id, status: 200, fields: map[string]any{"data.item_count": 7, "data.version": 6}},

		{name: "patch schema the items break", method: "PATCH", path: id, body: `{"input_schema":{"type":"object","required":["locale"]}}`, status: 422, message: "input_schema: item "},
		{name: "patch schema away", method: "PATCH", path: id, body: `{"input_schema":null,"metadata":{"owner":"cx"}}`, status: 200,
			fields: map[string]any{"data.input_schema": nil, "data.metadata.owner": "cx", "data.version": 6}},
		{name: "any input without a schema", method: "POST", path: items, body: `{"input":{"q":1}}`, status: 201},
		{name: "rename to a taken name", method: "POST", path: "/api/v1/datasets", body: `{"name":"Other"}`, status: 201},
		{name: "rename conflict", method: "PATCH", path: id, body: `{"name":"Other"}`, status: 409, message: "Other"},
		{name: "delete item", method: "DELETE", path: items + "/" + itemID, status: 200, fields: map[string]any{"data.id": itemID}},
		{name: "delete item again", method: "DELETE", path: items + "/" + itemID, status: 404},
		{name: "after delete", method: "GET", path: id, status: 200, fields: map[string]any{"data.item_count": 7, "data.version": 8}},
		{name: "delete dataset", method: "DELETE", path: id, status: 200, fields: map[string]any{"data.item_count": 7}},
		{name: "gone", method: "GET", path: items, status: 404},
	})
}

// TestDatasetBulkLimit adds the most items a request may hold, then one more.
func TestDatasetBulkLimit(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	d, err := e.c.DatasetCreate(ctx, client.DatasetCreateRequest{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range 1001 {
		fmt.Fprintf(&b, "{\"input\":{\"n\":%d}}\n", i)
	}
	_, err = e.c.DatasetItemsPushJSONL(ctx, d.ID, strings.NewReader(b.String()))
	if ce, ok := err.(*client.Error); !ok || ce.Status != 422 || !strings.Contains(ce.Message, "at most 1000") {
		t.Fatalf("1,001 lines: %v", err)
	}
	all := strings.SplitAfterN(b.String(), "\n", 1001)
	batch, err := e.c.DatasetItemsPushJSONL(ctx, d.ID, strings.NewReader(strings.Join(all[:1000], "")))
	if err != nil || batch.Count != 1000 {
		t.Fatalf("1,000 lines: %v", err)
	}
	got, err := e.c.DatasetGet(ctx, d.ID)
	if err != nil || got.ItemCount != 1000 || got.Version != 1 {
		t.Fatalf("after 1,000: %+v %v", got, err)
	}
}

func jsonAny(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
