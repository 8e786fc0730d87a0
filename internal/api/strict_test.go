package api

import (
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

func TestUnknownConfigFields(t *testing.T) {
	e := newTestEnv(t)
	var agent, withSchema string
	e.run([]scenario{
		{name: "agent config typo", method: "POST", path: "/api/v1/agents", body: `{"name":"A","type":"simple","config":{"model":"gpt-4o-mini","temprature":0.2}}`,
			status: 422, code: "validation_error", message: "config.temprature: unknown field; did you mean temperature?"},
		{name: "nested typo", method: "POST", path: "/api/v1/agents",
			body:   `{"name":"C","type":"chain","config":{"model":"gpt-4o-mini","steps":[{"id":"a","instruction":"x"},{"id":"b","instrucion":"y"}]}}`,
			status: 422, message: "config.steps[1].instrucion: unknown field; did you mean instruction?"},
		{name: "no close name", method: "POST", path: "/api/v1/agents", body: `{"name":"A","type":"simple","config":{"model":"gpt-4o-mini","colour":"red"}}`,
			status: 422, message: "config.colour: unknown field",
			check: func(t *testing.T, b map[string]any) {
				if strings.Contains(lookup(b, "message").(string), "did you mean") {
					t.Fatalf("suggested something for colour: %v", b)
				}
			}},
		{name: "schemas stay free-form", method: "POST", path: "/api/v1/agents",
			body:   `{"name":"S","type":"simple","config":{"model":"gpt-4o-mini","input_schema":{"type":"object","required":["message"],"x-anything":1,"properties":{"message":{"type":"string"}}}}}`,
			status: 201, check: func(t *testing.T, b map[string]any) { withSchema = lookup(b, "data.id").(string) }},
		{name: "top-level unknown fields are ignored", method: "POST", path: "/api/v1/agents",
			body:   `{"name":"A","type":"simple","colour":"red","config":{"model":"gpt-4o-mini","temperature":0.5,"system_prompt":"Be brief."}}`,
			status: 201, check: func(t *testing.T, b map[string]any) { agent = lookup(b, "data.id").(string) }},
		{name: "prompt config typo", method: "POST", path: "/api/v1/prompts", body: `{"name":"P","template":"Hi","config":{"model":"gpt-4o","max_token":5}}`,
			status: 422, message: "config.max_token: unknown field; did you mean max_tokens?"},
		{name: "data source config typo", method: "POST", path: "/api/v1/data-sources", body: `{"name":"D","type":"postgres","config":{"hots":"db"}}`,
			status: 422, message: "config.hots: unknown field; did you mean host?"},
	})
	e.run([]scenario{
		{name: "version typo", method: "POST", path: "/api/v1/agents/" + agent + "/versions", body: `{"config":{"model":"gpt-4o-mini","max_iteration":3}}`,
			status: 422, message: "config.max_iteration: unknown field; did you mean max_iterations?"},
		{name: "playground typo", method: "POST", path: "/api/v1/agents/" + agent + "/playground", body: `{"config":{"model":"gpt-4o-mini","sytem_prompt":"x"},"input":{}}`,
			status: 422, message: "config.sytem_prompt: unknown field; did you mean system_prompt?"},
		{name: "preview typo", method: "POST", path: "/api/v1/agents/" + agent + "/preview", body: `{"config":{"model":"gpt-4o-mini","tool":["x"]},"input":{}}`,
			status: 422, message: "config.tool: unknown field; did you mean tools?"},
		{name: "execute without input needs no input without a schema", method: "POST", path: "/api/v1/agents/" + agent + "/execute", body: `{}`, status: 200},
		{name: "execute without input when there is a schema", method: "POST", path: "/api/v1/agents/" + withSchema + "/execute", body: `{}`,
			status: 422, message: "input: is required"},
		{name: "a null input is no input", method: "POST", path: "/api/v1/agents/" + withSchema + "/execute", body: `{"input":null}`,
			status: 422, message: "input: is required"},
		{name: "an input is validated", method: "POST", path: "/api/v1/agents/" + withSchema + "/execute", body: `{"input":{}}`,
			status: 422, message: "input"},
		{name: "a valid input runs", method: "POST", path: "/api/v1/agents/" + withSchema + "/execute", body: `{"input":{"message":"hi"}}`, status: 200},
	})
}

func TestVersionFromBase(t *testing.T) {
	e := newTestEnv(t)
	var agent, v1 string
	e.run([]scenario{
		{name: "agent", method: "POST", path: "/api/v1/agents",
			body:   `{"name":"A","type":"simple","config":{"model":"gpt-4o-mini","temperature":0.5,"system_prompt":"A","input_schema":{"type":"object","properties":{"a":{"type":"string"}}}}}`,
			status: 201, check: func(t *testing.T, b map[string]any) {
				agent, v1 = lookup(b, "data.id").(string), lookup(b, "data.active_version_id").(string)
			}},
	})
	base := "/api/v1/agents/" + agent + "/versions"
	e.run([]scenario{
		{name: "patch the active version", method: "POST", path: base,
			body:   `{"base":"active","config":{"system_prompt":"B","temperature":null,"input_schema":{"properties":{"b":{"type":"number"}}}},"notes":"tweak"}`,
			status: 201, fields: map[string]any{"data.version": 2, "data.config.model": "gpt-4o-mini", "data.config.system_prompt": "B",
				"data.config.temperature": nil, "data.config.input_schema.properties.a.type": "string", "data.config.input_schema.properties.b.type": "number"}},
		{name: "patch a named version", method: "POST", path: base, body: `{"base_version_id":"` + v1 + `","config":{"max_tokens":100}}`,
			status: 201, fields: map[string]any{"data.version": 3, "data.config.system_prompt": "A", "data.config.temperature": 0.5, "data.config.max_tokens": 100}},
		{name: "a copy without config", method: "POST", path: base, body: `{"base_version_id":"` + v1 + `"}`,
			status: 201, fields: map[string]any{"data.version": 4, "data.config.system_prompt": "A"}},
		{name: "a full snapshot replaces everything", method: "POST", path: base, body: `{"config":{"model":"gpt-4o"}}`,
			status: 201, fields: map[string]any{"data.version": 5, "data.config.system_prompt": nil, "data.config.temperature": nil}},
		{name: "both bases", method: "POST", path: base, body: `{"base":"active","base_version_id":"` + v1 + `","config":{}}`, status: 422, message: "base"},
		{name: "unknown base", method: "POST", path: base, body: `{"base":"latest","config":{}}`, status: 422, message: "base"},
		{name: "missing base version", method: "POST", path: base, body: `{"base_version_id":"nope","config":{}}`, status: 422, message: "base_version_id"},
		{name: "a patch is an object", method: "POST", path: base, body: `{"base":"active","config":[]}`, status: 400, message: "config"},
		{name: "deleting the model", method: "POST", path: base, body: `{"base":"active","config":{"model":null}}`, status: 422, message: "config.model"},
		{name: "a typo in a patch", method: "POST", path: base, body: `{"base":"active","config":{"temprature":1}}`, status: 422, message: "did you mean temperature"},
	})
}

func TestEndUsers(t *testing.T) {
	e := newTestEnv(t)
	var agent, session string
	e.run([]scenario{
		{name: "agent", method: "POST", path: "/api/v1/agents", body: `{"name":"A","type":"simple"}`, status: 201,
			check: func(t *testing.T, b map[string]any) { agent = lookup(b, "data.id").(string) }},
	})
	e.run([]scenario{
		{name: "execute for an end user", method: "POST", path: "/api/v1/agents/" + agent + "/execute", body: `{"input":{},"end_user_id":"cust-42"}`,
			status: 200, fields: map[string]any{"data.end_user_id": "cust-42", "data.user_id": nil}},
		{name: "execute for nobody", method: "POST", path: "/api/v1/agents/" + agent + "/execute", body: `{"input":{}}`,
			status: 200, fields: map[string]any{"data.end_user_id": nil}},
		{name: "playground for an end user", method: "POST", path: "/api/v1/agents/" + agent + "/playground",
			body: `{"config":{"model":"gpt-4o-mini"},"input":{},"end_user_id":"cust-7"}`, status: 200, fields: map[string]any{"data.end_user_id": "cust-7"}},
		{name: "too long", method: "POST", path: "/api/v1/agents/" + agent + "/execute", body: `{"input":{},"end_user_id":"` + strings.Repeat("x", 201) + `"}`,
			status: 422, message: "end_user_id"},
		{name: "filter", method: "GET", path: "/api/v1/executions?end_user_id=cust-42", status: 200,
			fields: map[string]any{"pagination.total": 1, "data.0.end_user_id": "cust-42"}},
		{name: "session for an end user", method: "POST", path: "/api/v1/chat/sessions", body: `{"agent_id":"` + agent + `","end_user_id":"cust-42"}`,
			status: 201, fields: map[string]any{"data.end_user_id": "cust-42", "data.user_id": nil},
			check: func(t *testing.T, b map[string]any) { session = lookup(b, "data.id").(string) }},
		{name: "session too long", method: "POST", path: "/api/v1/chat/sessions", body: `{"agent_id":"` + agent + `","end_user_id":"` + strings.Repeat("x", 201) + `"}`,
			status: 422, message: "end_user_id"},
		{name: "sessions filter", method: "GET", path: "/api/v1/chat/sessions?end_user_id=cust-42", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "sessions filter none", method: "GET", path: "/api/v1/chat/sessions?end_user_id=cust-1", status: 200, fields: map[string]any{"pagination.total": 0}},
	})
	e.run([]scenario{
		{name: "a message runs for the session's end user", method: "POST", path: "/api/v1/chat/sessions/" + session + "/messages", body: `{"content":"hi"}`, status: 200},
		{name: "or the one it names", method: "POST", path: "/api/v1/chat/sessions/" + session + "/messages", body: `{"content":"again","end_user_id":"cust-9"}`, status: 200},
		{name: "chat runs", method: "GET", path: "/api/v1/executions?source=chat&end_user_id=cust-42", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "chat runs named", method: "GET", path: "/api/v1/executions?source=chat&end_user_id=cust-9", status: 200, fields: map[string]any{"pagination.total": 1}},
	})
}

// A signed-in user's runs and sessions carry their user id.
func TestUserIDOnRuns(t *testing.T) {
	e := newServerEnv(t)
	u := newUser(t, e, "ada@example.com", "x", e.ws, domain.RoleMember)
	tok := token(t, u)
	var agent string
	e.run([]scenario{
		{name: "agent", method: "POST", path: "/api/v1/agents", body: `{"name":"A","type":"simple"}`, status: 201,
			check: func(t *testing.T, b map[string]any) { agent = lookup(b, "data.id").(string) }},
	})
	bearer := map[string]string{"Authorization": "Bearer " + tok, "X-Workspace-ID": "test", "X-API-Key": ""}
	e.run([]scenario{
		{name: "a user's run (workspace by slug)", method: "POST", path: "/api/v1/agents/" + agent + "/execute", body: `{"input":{}}`, header: bearer,
			status: 200, fields: map[string]any{"data.user_id": u.ID}},
		{name: "a user's session", method: "POST", path: "/api/v1/chat/sessions", body: `{"agent_id":"` + agent + `"}`, header: bearer,
			status: 201, fields: map[string]any{"data.user_id": u.ID}},
		{name: "a key's run", method: "POST", path: "/api/v1/agents/" + agent + "/execute", body: `{"input":{}}`,
			status: 200, fields: map[string]any{"data.user_id": nil}},
		{name: "a key as a bearer token", method: "GET", path: "/api/v1/agents", header: map[string]string{"Authorization": "Bearer " + e.key, "X-API-Key": ""},
			status: 200},
	})
}
