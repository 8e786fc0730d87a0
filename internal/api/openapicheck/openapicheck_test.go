package openapicheck

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// testDoc is a small but realistic OpenAPI 3.1 document.
const testDoc = `{
  "openapi": "3.1.0",
  "info": {"title": "test", "version": "1.0.0"},
  "paths": {
    "/api/v1/agents/{id}": {
      "get": {
        "operationId": "getAgent",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
          "200": {
            "description": "the agent",
            "content": {"application/json": {
              "schema": {"$ref": "#/components/schemas/Agent"},
              "examples": {"one": {"value": {"$ref": "not a reference, just data"}}}
            }}
          },
          "404": {"$ref": "#/components/responses/NotFound"},
          "default": {"$ref": "#/components/responses/Error"}
        }
      },
      "delete": {
        "operationId": "deleteAgent",
        "responses": {"204": {"description": "deleted"}}
      }
    },
    "/api/v1/agents/{id}/versions/{version_id}": {
      "get": {
        "operationId": "getAgentVersion",
        "responses": {
          "200": {"description": "a version", "content": {"application/json": {"schema": {
            "type": "object",
            "required": ["agent_id", "version"],
            "properties": {"agent_id": {"type": "string"}, "version": {"type": "integer", "minimum": 1}},
            "example": {"$ref": "also just data"}
          }}}}
        }
      }
    },
    "/api/v1/mcp-tools/{id}": {
      "get": {
        "operationId": "getTool",
        "responses": {"200": {"description": "a tool", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Tool"}}}}}
      },
      "post": {
        "operationId": "runTool",
        "responses": {"2XX": {"description": "ran", "content": {"application/json": {"schema": {"type": "object"}}}}}
      }
    },
    "/api/v1/mcp-tools/templates": {
      "get": {
        "operationId": "listToolTemplates",
        "responses": {"200": {"description": "templates", "content": {"application/json": {"schema": {
          "type": "array", "items": {"$ref": "#/components/schemas/Template"}
        }}}}}
      }
    },
    "/api/v1/events": {
      "get": {
        "operationId": "events",
        "responses": {"200": {"description": "stream", "content": {"text/event-stream": {"schema": {"type": "string"}}}}}
      }
    }
  },
  "components": {
    "schemas": {
      "Agent": {
        "type": "object",
        "required": ["id", "name"],
        "properties": {
          "id": {"type": "string"},
          "name": {"type": "string"},
          "created_at": {"type": "string", "format": "date-time"},
          "default": {"type": "boolean", "default": false}
        },
        "additionalProperties": false
      },
      "Tool": {
        "type": "object",
        "required": ["id"],
        "properties": {"id": {"type": "string"}}
      },
      "Template": {
        "$schema": "https://spec.openapis.org/oas/3.1/dialect/base",
        "type": "object",
        "required": ["name"],
        "properties": {"name": {"type": "string"}},
        "discriminator": {"propertyName": "name"}
      },
      "Problem": {
        "type": "object",
        "required": ["title", "status"],
        "properties": {"title": {"type": "string"}, "status": {"type": "integer"}}
      }
    },
    "responses": {
      "NotFound": {
        "description": "not found",
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
      },
      "Error": {
        "description": "error",
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
      }
    }
  }
}`

// mutate decodes testDoc, applies f and re-encodes it.
func mutate(t *testing.T, f func(doc map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(testDoc), &doc); err != nil {
		t.Fatal(err)
	}
	f(doc)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func schemas(doc map[string]any) map[string]any {
	return doc["components"].(map[string]any)["schemas"].(map[string]any)
}

func TestValidateDocumentValid(t *testing.T) {
	if err := ValidateDocument([]byte(testDoc)); err != nil {
		t.Fatalf("valid document rejected: %v", err)
	}
}

func TestValidateDocumentInvalid(t *testing.T) {
	tests := []struct {
		name    string
		doc     []byte
		wantErr []string
	}{
		{
			name:    "not JSON",
			doc:     []byte(`{"openapi": `),
			wantErr: []string{"not valid JSON"},
		},
		{
			name: "openapi is a number",
			doc: mutate(t, func(doc map[string]any) {
				doc["openapi"] = 3
			}),
			wantErr: []string{"OpenAPI 3.1 schema", "/openapi"},
		},
		{
			name: "openapi 3.0",
			doc: mutate(t, func(doc map[string]any) {
				doc["openapi"] = "3.0.3"
			}),
			wantErr: []string{"OpenAPI 3.1 schema"},
		},
		{
			name: "missing info",
			doc: mutate(t, func(doc map[string]any) {
				delete(doc, "info")
			}),
			wantErr: []string{"OpenAPI 3.1 schema", "info"},
		},
		{
			name: "broken $ref",
			doc: mutate(t, func(doc map[string]any) {
				schemas(doc)["Tool"].(map[string]any)["properties"].(map[string]any)["owner"] =
					map[string]any{"$ref": "#/components/schemas/Nope"}
			}),
			wantErr: []string{"unresolved $ref", "#/components/schemas/Nope", "/components/schemas/Tool/properties/owner"},
		},
		{
			name: "broken response $ref",
			doc: mutate(t, func(doc map[string]any) {
				delete(doc["components"].(map[string]any)["responses"].(map[string]any), "NotFound")
			}),
			wantErr: []string{"unresolved $ref", "#/components/responses/NotFound"},
		},
		{
			name: "external $ref",
			doc: mutate(t, func(doc map[string]any) {
				schemas(doc)["Tool"] = map[string]any{"$ref": "other.json#/Tool"}
			}),
			wantErr: []string{"outside the document"},
		},
		{
			name: "invalid component schema",
			doc: mutate(t, func(doc map[string]any) {
				schemas(doc)["Tool"].(map[string]any)["required"] = "id"
			}),
			wantErr: []string{"components/schemas/Tool", "JSON Schema 2020-12"},
		},
		{
			name: "malformed discriminator (OAS base vocabulary)",
			doc: mutate(t, func(doc map[string]any) {
				schemas(doc)["Tool"].(map[string]any)["discriminator"] = map[string]any{"mapping": map[string]any{}}
			}),
			wantErr: []string{"components/schemas/Tool", "propertyName"},
		},
		{
			name: "invalid component schema type keyword",
			doc: mutate(t, func(doc map[string]any) {
				schemas(doc)["Agent"].(map[string]any)["properties"].(map[string]any)["id"] =
					map[string]any{"type": "str"}
			}),
			wantErr: []string{"components/schemas/Agent"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateDocument(tt.doc)
			if err == nil {
				t.Fatal("invalid document accepted")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
		})
	}
}

func newValidator(t *testing.T) *ResponseValidator {
	t.Helper()
	v, err := NewResponseValidator([]byte(testDoc))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestResponseValidatorAccepts(t *testing.T) {
	v := newValidator(t)
	tests := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/api/v1/agents/ag_1", 200, `{"id": "ag_1", "name": "a", "created_at": "2025-01-02T03:04:05Z"}`},
		{"get", "/api/v1/agents/ag_1?expand=all", 200, `{"id": "ag_1", "name": "a"}`},
		{"GET", "/api/v1/agents/ag%201", 200, `{"id": "ag 1", "name": "a"}`},
		{"GET", "/api/v1/agents/ag_1", 404, `{"title": "Not Found", "status": 404}`},
		{"GET", "/api/v1/agents/ag_1", 500, `{"title": "boom", "status": 500}`},
		{"GET", "/api/v1/agents/ag_1/versions/3", 200, `{"agent_id": "ag_1", "version": 3}`},
		{"DELETE", "/api/v1/agents/ag_1", 204, ``},
		{"HEAD", "/api/v1/agents/ag_1", 200, ``},
		{"GET", "/api/v1/mcp-tools/templates", 200, `[{"name": "fs"}]`},
		{"GET", "/api/v1/mcp-tools/tool_1", 200, `{"id": "tool_1"}`},
		// POST is documented only on /mcp-tools/{id}, so it serves this path.
		{"POST", "/api/v1/mcp-tools/templates", 202, `{}`},
		// Non-JSON media types are not checked.
		{"GET", "/api/v1/events", 200, "data: x\n\n"},
	}
	for _, tt := range tests {
		if err := v.Validate(tt.method, tt.path, tt.status, []byte(tt.body)); err != nil {
			t.Errorf("%s %s %d rejected: %v", tt.method, tt.path, tt.status, err)
		}
	}
}

func TestResponseValidatorRejects(t *testing.T) {
	v := newValidator(t)
	tests := []struct {
		name         string
		method, path string
		status       int
		body         string
		wantErr      []string
	}{
		{
			name: "wrong-typed field", method: "GET", path: "/api/v1/agents/ag_1", status: 200,
			body:    `{"id": 7, "name": "a"}`,
			wantErr: []string{"GET /api/v1/agents/ag_1 -> 200", "/id", "want string"},
		},
		{
			name: "missing required field", method: "GET", path: "/api/v1/agents/ag_1", status: 200,
			body:    `{"id": "ag_1"}`,
			wantErr: []string{"name"},
		},
		{
			name: "extra field", method: "GET", path: "/api/v1/agents/ag_1", status: 200,
			body:    `{"id": "ag_1", "name": "a", "secret": "x"}`,
			wantErr: []string{"secret"},
		},
		{
			name: "bad date-time format", method: "GET", path: "/api/v1/agents/ag_1", status: 200,
			body:    `{"id": "ag_1", "name": "a", "created_at": "yesterday"}`,
			wantErr: []string{"created_at", "date-time"},
		},
		{
			name: "error body via $ref response", method: "GET", path: "/api/v1/agents/ag_1", status: 404,
			body:    `{"title": "Not Found", "status": "404"}`,
			wantErr: []string{"-> 404", "application/problem+json", "/status"},
		},
		{
			name: "not JSON", method: "GET", path: "/api/v1/agents/ag_1", status: 200,
			body:    `{"id": "ag_1"`,
			wantErr: []string{"not valid JSON"},
		},
		{
			name: "literal route preferred", method: "GET", path: "/api/v1/mcp-tools/templates", status: 200,
			body:    `{"id": "templates"}`, // a Tool, which /mcp-tools/{id} would accept
			wantErr: []string{"/api/v1/mcp-tools/templates", "want array"},
		},
		{
			name: "undocumented status", method: "DELETE", path: "/api/v1/agents/ag_1", status: 409,
			body:    `{}`,
			wantErr: []string{"DELETE /api/v1/agents/ag_1 -> 409", "undocumented status", "204"},
		},
		{
			name: "undocumented path", method: "GET", path: "/api/v1/nothing", status: 200,
			body:    `{}`,
			wantErr: []string{"GET /api/v1/nothing -> 200", "undocumented path"},
		},
		{
			name: "trailing slash is another path", method: "GET", path: "/api/v1/agents/", status: 200,
			body:    `{}`,
			wantErr: []string{"undocumented path"},
		},
		{
			name: "undocumented method", method: "PUT", path: "/api/v1/agents/ag_1", status: 200,
			body:    `{}`,
			wantErr: []string{"undocumented method"},
		},
		{
			name: "body on no-content response", method: "DELETE", path: "/api/v1/agents/ag_1", status: 204,
			body:    `{"ok": true}`,
			wantErr: []string{"no content"},
		},
		{
			name: "version below minimum", method: "GET", path: "/api/v1/agents/ag_1/versions/0", status: 200,
			body:    `{"agent_id": "ag_1", "version": 0}`,
			wantErr: []string{"/version"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.Validate(tt.method, tt.path, tt.status, []byte(tt.body))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
		})
	}
}

func TestResponseValidatorConcurrent(t *testing.T) {
	v := newValidator(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if err := v.Validate("GET", "/api/v1/agents/x", 200, []byte(`{"id":"x","name":"n"}`)); err != nil {
					errs <- err
				}
				if err := v.Validate("GET", "/api/v1/mcp-tools/templates", 200, []byte(`[]`)); err != nil {
					errs <- err
				}
				if i%2 == 0 {
					if err := v.Validate("GET", "/api/v1/agents/x", 200, []byte(`{"id":1}`)); err == nil {
						errs <- errString("wrong body accepted")
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestNewResponseValidatorErrors(t *testing.T) {
	if _, err := NewResponseValidator([]byte(`nope`)); err == nil {
		t.Error("non-JSON accepted")
	}
	if _, err := NewResponseValidator([]byte(`{"openapi":"3.1.0"}`)); err == nil {
		t.Error("document without paths accepted")
	}
	if _, err := NewResponseValidator([]byte(`[]`)); err == nil {
		t.Error("array document accepted")
	}
}

func TestMetaSchemaEmbedded(t *testing.T) {
	var m struct {
		ID     string `json:"$id"`
		Schema string `json:"$schema"`
	}
	if err := json.Unmarshal(oas31Schema, &m); err != nil {
		t.Fatal(err)
	}
	if m.ID != MetaSchemaID || m.Schema != "https://json-schema.org/draft/2020-12/schema" {
		t.Fatalf("embedded meta-schema is %q (%q), want %q", m.ID, m.Schema, MetaSchemaID)
	}
}

func TestPatternSegments(t *testing.T) {
	doc := `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{
	  "/files/{name}.json": {"get": {"responses": {"200": {"description": "json"}}}},
	  "/files/{name}": {"get": {"responses": {"201": {"description": "other"}}}}
	}}`
	if err := ValidateDocument([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	v, err := NewResponseValidator([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate("GET", "/files/a.json", 200, nil); err != nil {
		t.Errorf("mixed segment should win: %v", err)
	}
	if err := v.Validate("GET", "/files/a.txt", 201, nil); err != nil {
		t.Errorf("param segment: %v", err)
	}
}

// streamDoc documents one SSE operation whose frames are `content` or `done`.
const streamDoc = `{
  "openapi": "3.1.0",
  "info": {"title": "stream", "version": "1.0.0"},
  "paths": {"/runs/{id}/stream": {"get": {
    "responses": {
      "200": {"description": "events", "content": {"text/event-stream": {"schema": {"$ref": "#/components/schemas/Frame"}}}},
      "404": {"description": "missing", "content": {"application/json": {"schema": {"type": "object"}}}}
    }
  }}},
  "components": {"schemas": {
    "Frame": {"oneOf": [{"$ref": "#/components/schemas/Content"}, {"$ref": "#/components/schemas/Done"}],
      "discriminator": {"propertyName": "event"}},
    "Content": {"type": "object", "required": ["id", "event", "data"], "properties": {
      "id": {"type": "integer"}, "event": {"enum": ["content"]},
      "data": {"type": "object", "required": ["content"], "properties": {"content": {"type": "string"}}}}},
    "Done": {"type": "object", "required": ["id", "event", "data"], "properties": {
      "id": {"type": "integer"}, "event": {"enum": ["done"]},
      "data": {"type": "object", "required": ["time"], "properties": {"time": {"type": "number"}}}}}
  }}
}`

func TestValidateStream(t *testing.T) {
	v, err := NewResponseValidator([]byte(streamDoc))
	if err != nil {
		t.Fatal(err)
	}
	good := "id: 1\nevent: content\ndata: {\"content\": \"Hel\"}\n\n: ping\n\nid: 2\r\nevent: content\r\ndata: {\"content\":\r\ndata: \"lo\"}\r\n\r\nid: 3\nevent: done\ndata: {\"time\": 0.5}\n\n"
	if err := v.ValidateStream("GET", "/runs/x/stream", 200, []byte(good)); err != nil {
		t.Fatalf("a valid stream was rejected: %v", err)
	}
	for name, tc := range map[string]struct {
		status int
		body   string
		want   string
	}{
		"wrong data":          {200, "id: 1\nevent: content\ndata: {\"text\": \"x\"}\n\n", "frame 0 (content)"},
		"unknown event":       {200, "id: 1\nevent: thinking\ndata: {\"content\": \"x\"}\n\n", "frame 0 (thinking)"},
		"id not a number":     {200, "id: abc\nevent: done\ndata: {\"time\": 1}\n\n", "frame 0 (done)"},
		"data not JSON":       {200, "id: 1\nevent: done\ndata: {time\n\n", "not JSON"},
		"second frame bad":    {200, "id: 1\nevent: done\ndata: {\"time\": 1}\n\nid: 2\nevent: done\n\n", "frame 1 (done)"},
		"undocumented status": {500, "", "undocumented status"},
		"no stream content":   {404, "", "no text/event-stream content"},
	} {
		err := v.ValidateStream("GET", "/runs/x/stream", tc.status, []byte(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", name, err, tc.want)
		}
	}
	if err := v.ValidateStream("GET", "/nope", 200, nil); err == nil {
		t.Error("an undocumented path was accepted")
	}
}
