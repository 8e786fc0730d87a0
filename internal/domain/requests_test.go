package domain

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// validateCase is a request whose Validate must answer a FieldError naming field with msg in
// its message, or nil when field is "".
type validateCase struct {
	name       string
	r          interface{ Validate() error }
	field, msg string
}

// runValidate runs each case as a named subtest.
func runValidate(t *testing.T, cases []validateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantField(t, tc.r.Validate(), tc.field, tc.msg) })
	}
}

func TestTriggerCreateRequestValidate(t *testing.T) {
	valid := func() TriggerCreateRequest {
		return TriggerCreateRequest{AgentID: "a1", Type: "webhook", Name: "Orders"}
	}
	many := map[string]string{}
	for i := range 51 {
		many[strings.Repeat("k", i+1)] = "payload.x"
	}
	for _, tc := range []struct {
		name       string
		edit       func(*TriggerCreateRequest)
		field, msg string
	}{
		{"valid", func(*TriggerCreateRequest) {}, "", ""},
		{"a schedule with its input", func(r *TriggerCreateRequest) { r.Type, r.Input = TriggerTypeSchedule, map[string]any{"a": 1} }, "", ""},
		{"a blank name", func(r *TriggerCreateRequest) { r.Name = " \u00a0" }, "name", "must not be empty"},
		{"too many mapped fields", func(r *TriggerCreateRequest) { r.InputMapping = many }, "input_mapping", "at most 50"},
		{"a blank mapped name", func(r *TriggerCreateRequest) { r.InputMapping = map[string]string{" ": "text"} }, "input_mapping", "field names"},
		{"a blank path", func(r *TriggerCreateRequest) { r.InputMapping = map[string]string{"msg": " "} }, "input_mapping.msg", "GJSON path"},
		{"a mapping on a schedule", func(r *TriggerCreateRequest) {
			r.Type, r.InputMapping = TriggerTypeSchedule, map[string]string{"m": "text"}
		}, "input_mapping", "does not apply to a schedule"},
		{"an input on a hook", func(r *TriggerCreateRequest) { r.Input = map[string]any{} }, "input", "only for schedules"},
		{"a webhook URL with a fragment", func(r *TriggerCreateRequest) { r.WebhookURL = "https://example.com/#x" }, "webhook_url", "fragment"},
		{"a webhook secret without a URL", func(r *TriggerCreateRequest) { r.WebhookSecret = secret24 }, "webhook_secret", "needs a webhook_url"},
		{"a malformed webhook secret", func(r *TriggerCreateRequest) {
			r.WebhookURL, r.WebhookSecret = "https://example.com/h", "whsec_x"
		}, "webhook_secret", "standard base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := valid()
			tc.edit(&r)
			wantField(t, r.Validate(), tc.field, tc.msg)
		})
	}
}

func TestTriggerUpdateRequestValidate(t *testing.T) {
	s := func(v string) *string { return &v }
	runValidate(t, []validateCase{
		{"nothing", &TriggerUpdateRequest{}, "", ""},
		{"a new name", &TriggerUpdateRequest{Name: s(" Orders ")}, "", ""},
		{"a blank name", &TriggerUpdateRequest{Name: s("\t")}, "name", "must not be empty"},
		{"an empty mapping restores the default", &TriggerUpdateRequest{InputMapping: &map[string]string{}}, "", ""},
		{"a blank path", &TriggerUpdateRequest{InputMapping: &map[string]string{"m": ""}}, "input_mapping.m", "GJSON path"},
		{"the webhook removed", &TriggerUpdateRequest{WebhookURL: s("")}, "", ""},
		{"a secret beside a removal", &TriggerUpdateRequest{WebhookURL: s(""), WebhookSecret: s(secret24)}, "webhook_secret", "cannot be set"},
		{"a webhook URL with credentials", &TriggerUpdateRequest{WebhookURL: s("https://u:p@example.com/")}, "webhook_url", "credentials"},
	})
}

func TestAgentRequestsValidate(t *testing.T) {
	s := func(v string) *string { return &v }
	t.Run("create", func(t *testing.T) {
		runValidate(t, []validateCase{
			{"a name", &AgentCreateRequest{Name: "Support"}, "", ""},
			{"a blank name", &AgentCreateRequest{Name: "  "}, "name", "must not be empty"},
			{"a webhook", &AgentCreateRequest{Name: "S", WebhookURL: s("https://example.com/h"), WebhookSecret: s(secret24)}, "", ""},
			{"a secret without a URL", &AgentCreateRequest{Name: "S", WebhookSecret: s(secret24)}, "webhook_secret", "needs a webhook_url"},
			{"a URL that is not http", &AgentCreateRequest{Name: "S", WebhookURL: s("ftp://example.com/")}, "webhook_url", "absolute"},
		})
	})
	t.Run("update", func(t *testing.T) {
		runValidate(t, []validateCase{
			{"nothing", &AgentUpdateRequest{}, "", ""},
			{"a blank name", &AgentUpdateRequest{Name: s("")}, "name", "must not be empty"},
			{"a secret alone (the agent may have a URL)", &AgentUpdateRequest{WebhookSecret: s(secret24)}, "", ""},
			{"a secret beside a removal", &AgentUpdateRequest{WebhookURL: s(""), WebhookSecret: s(secret24)}, "webhook_secret", "cannot be set"},
		})
	})
}

func TestPromptRequestsValidate(t *testing.T) {
	s := func(v string) *string { return &v }
	runValidate(t, []validateCase{
		{"create", &PromptCreateRequest{Name: "Greeting", Tags: []string{"a"}, Template: "Hi {{name}}"}, "", ""},
		{"create with a blank name", &PromptCreateRequest{Name: "\u00a0", Template: "x"}, "name", "must not be empty"},
		{"create with a blank tag", &PromptCreateRequest{Name: "G", Tags: []string{"a", " "}, Template: "x"}, "tags[1]", "must not be empty"},
		{"create with a template that does not parse", &PromptCreateRequest{Name: "G", Template: "{{#open}}"}, "template", ""},
		{"update nothing", &PromptUpdateRequest{}, "", ""},
		{"update to a blank name", &PromptUpdateRequest{Name: s(" ")}, "name", "must not be empty"},
		{"update to a blank tag", &PromptUpdateRequest{Tags: &[]string{"\t"}}, "tags[0]", "must not be empty"},
		{"a version", &PromptVersionCreateRequest{Template: "{{a}}"}, "", ""},
		{"a version with a blank template", &PromptVersionCreateRequest{Template: "\n"}, "template", "must not be empty"},
		{"a version with a partial", &PromptVersionCreateRequest{Template: "{{> other}}"}, "template", ""},
	})
}

func TestWorkspaceRequestsValidate(t *testing.T) {
	runValidate(t, []validateCase{
		{"a login", &LoginRequest{Email: "a@example.com", Password: "pw"}, "", ""},
		{"a blank email", &LoginRequest{Email: " ", Password: "pw"}, "email", "must not be empty"},
		{"a blank password", &LoginRequest{Email: "a@example.com", Password: "\u00a0"}, "password", "must not be empty"},
		{"a workspace", &WorkspaceCreateRequest{Name: "Acme", Slug: "acme-2"}, "", ""},
		{"a blank name", &WorkspaceCreateRequest{Name: " ", Slug: "acme"}, "name", "must not be empty"},
		{"an upper-case slug", &WorkspaceCreateRequest{Name: "Acme", Slug: "Acme"}, "slug", "lower-case"},
		{"a slug starting with a dash", &WorkspaceCreateRequest{Name: "Acme", Slug: "-acme"}, "slug", "starting with"},
		{"a slug of 64 characters", &WorkspaceCreateRequest{Name: "Acme", Slug: strings.Repeat("a", 64)}, "slug", "1 to 63"},
		{"an empty slug", &WorkspaceCreateRequest{Name: "Acme"}, "slug", "1 to 63"},
	})
}

func TestModelAndAssetRequestsValidate(t *testing.T) {
	s := func(v string) *string { return &v }
	caps := make([]string, 33)
	for i := range caps {
		caps[i] = "chat"
	}
	runValidate(t, []validateCase{
		{"a model", &LlmModelCreateRequest{ID: "llama3.1:8b", Provider: "ollama", Capabilities: []string{"chat"}}, "", ""},
		{"a blank id", &LlmModelCreateRequest{ID: " ", Provider: "ollama"}, "id", "must not be empty"},
		{"an id with a tab", &LlmModelCreateRequest{ID: "a\tb", Provider: "ollama"}, "id", "control characters"},
		{"a blank provider", &LlmModelCreateRequest{ID: "m", Provider: "\u00a0"}, "provider", "must not be empty"},
		{"33 capabilities", &LlmModelCreateRequest{ID: "m", Provider: "p", Capabilities: caps}, "capabilities", "at most 32"},
		{"a blank capability", &LlmModelCreateRequest{ID: "m", Provider: "p", Capabilities: []string{"chat", " "}}, "capabilities", "entry 1"},
		{"a model change", &LlmModelUpdateRequest{Provider: s("ollama"), Name: s("Llama")}, "", ""},
		{"a blank provider change", &LlmModelUpdateRequest{Provider: s(" ")}, "provider", "must not be empty"},
		{"a long capability", &LlmModelUpdateRequest{Capabilities: &[]string{strings.Repeat("c", 51)}}, "capabilities", "entry 0"},
		{"an upload", &AssetUploadRequest{MimeType: "image/png; charset=x", Name: "cat.png", Data: "eA=="}, "", ""},
		{"a media type without a subtype", &AssetUploadRequest{MimeType: "image", Data: "eA=="}, "mime_type", "media type"},
		{"a blank media type", &AssetUploadRequest{MimeType: " ", Data: "eA=="}, "mime_type", "must not be empty"},
		{"a name with a slash", &AssetUploadRequest{MimeType: "text/plain", Name: "../x", Data: "eA=="}, "name", "slashes"},
		{"a name with a newline", &AssetUploadRequest{MimeType: "text/plain", Name: "a\nb", Data: "eA=="}, "name", "control"},
	})
}

func TestMemoryRequestsValidate(t *testing.T) {
	s := func(v string) *string { return &v }
	runValidate(t, []validateCase{
		{"a memory", &MemoryCreateRequest{Content: "likes tea"}, "", ""},
		{"blank content", &MemoryCreateRequest{Content: "\u00a0\n"}, "content", "must not be empty"},
		{"64 KiB of content", &MemoryCreateRequest{Content: strings.Repeat("a", MemoryContentMaxBytes)}, "", ""},
		{"content over 64 KiB in bytes", &MemoryCreateRequest{Content: strings.Repeat("é", MemoryContentMaxBytes/2+1)}, "content", "at most 65536 bytes"},
		{"a change without content", &MemoryUpdateRequest{Key: s("k")}, "", ""},
		{"a change to blank content", &MemoryUpdateRequest{Content: s(" ")}, "content", "must not be empty"},
	})
}

func TestAnnotationRequestsValidate(t *testing.T) {
	s := func(v string) *string { return &v }
	runValidate(t, []validateCase{
		{"a queue", &AnnotationQueueCreateRequest{Name: "weekly", ScoreConfigIDs: []string{"c1"}}, "", ""},
		{"a blank queue name", &AnnotationQueueCreateRequest{Name: " \u00a0", ScoreConfigIDs: []string{"c1"}}, "name", "must not be empty"},
		{"a queue change", &AnnotationQueueUpdateRequest{Description: s("")}, "", ""},
		{"a blank new name", &AnnotationQueueUpdateRequest{Name: s("\t")}, "name", "must not be empty"},
		{"executions", &AnnotationItemsAddRequest{ExecutionIDs: []string{"e1", "e2"}}, "", ""},
		{"a blank execution id", &AnnotationItemsAddRequest{ExecutionIDs: []string{"e1", " "}}, "execution_ids", "item 1 is empty"},
		{"scores", &AnnotationCompleteRequest{Scores: []AnnotationScore{{ConfigID: "c1"}}}, "", ""},
		{"a blank config id", &AnnotationCompleteRequest{Scores: []AnnotationScore{{ConfigID: "c1"}, {ConfigID: " "}}}, "scores[1].config_id", "must not be empty"},
	})
}

func TestChatMessageRequestValidate(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		field         string
	}{
		{"a message", "hello", ""},
		{"white space only", " \u00a0\n", "content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ChatMessageRequest{Content: tc.content}
			wantField(t, r.Validate(), tc.field, "")
		})
	}
}

func TestScoreRequestsValidate(t *testing.T) {
	s := func(v string) *string { return &v }
	runValidate(t, []validateCase{
		{"a config", &ScoreConfigCreateRequest{Name: "helpful", DataType: "boolean"}, "", ""},
		{"a blank config name", &ScoreConfigCreateRequest{Name: " ", DataType: "boolean"}, "name", "must not be empty"},
		{"a config change", &ScoreConfigUpdateRequest{Archived: new(bool)}, "", ""},
		{"a blank new config name", &ScoreConfigUpdateRequest{Name: s("\u00a0")}, "name", "must not be empty"},
		{"a score by name", &ScoreCreateRequest{Name: "helpful"}, "", ""},
		{"a score by config", &ScoreCreateRequest{ConfigID: s("c1")}, "", ""},
		{"a score by config with a blank name", &ScoreCreateRequest{ConfigID: s("c1"), Name: " "}, "", ""},
		{"a score naming nothing", &ScoreCreateRequest{}, "name", "is required without config_id"},
		{"a score with an empty config id and a blank name", &ScoreCreateRequest{ConfigID: s(""), Name: "\t"}, "name", "is required without config_id"},
	})
}

func TestEvalRequestsValidate(t *testing.T) {
	runValidate(t, []validateCase{
		{"a dataset", &DatasetCreateRequest{Name: "golden"}, "", ""},
		{"a blank dataset name", &DatasetCreateRequest{Name: "\u00a0"}, "name", "must not be empty"},
		{"an evaluator", &EvaluatorCreateRequest{Name: "exact", Type: "exact_match"}, "", ""},
		{"a blank evaluator name", &EvaluatorCreateRequest{Name: " \t", Type: "exact_match"}, "name", "must not be empty"},
	})
}

func TestCredentialRequestsValidate(t *testing.T) {
	s := func(v string) *string { return &v }
	v := func(v string) *SecretValue { return (*SecretValue)(&v) }
	big := SecretValue(strings.Repeat("é", CredentialValueMaxBytes/2+1)) // within 16,384 characters, over the bytes
	runValidate(t, []validateCase{
		{"a credential", &CredentialCreateRequest{Name: "OpenAI", Type: "api_key", Value: "sk-x"}, "", ""},
		{"a blank name", &CredentialCreateRequest{Name: " ", Type: "api_key", Value: "sk-x"}, "name", "must not be empty"},
		{"a blank value", &CredentialCreateRequest{Name: "OpenAI", Type: "api_key", Value: " \n"}, "value", "must not be empty"},
		{"a value over the bytes", &CredentialCreateRequest{Name: "OpenAI", Type: "api_key", Value: big}, "value", "at most 16384 bytes"},
		{"a change", &CredentialUpdateRequest{Name: s("Renamed"), Value: v("sk-y")}, "", ""},
		{"a blank new name", &CredentialUpdateRequest{Name: s("\t")}, "name", "must not be empty"},
		{"a blank new value", &CredentialUpdateRequest{Value: v(" ")}, "value", "must not be empty"},
		{"a new value over the bytes", &CredentialUpdateRequest{Value: &big}, "value", "at most 16384 bytes"},
	})
}

func TestSecretValueUnmarshal(t *testing.T) {
	for _, tc := range []struct {
		name, body, want, field string
	}{
		{"text", `{"value":"sk-\u00e9"}`, "sk-é", ""},
		{"a surrogate pair", `{"value":"\ud83d\ude00"}`, "😀", ""},
		{"a lone low surrogate", `{"value":"a\udc80"}`, "", "value"},
		{"a high surrogate without its low half", `{"value":"\ud83dx"}`, "", "value"},
		{"an escaped backslash before u", `{"value":"\\udc80"}`, `\udc80`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r CredentialCreateRequest
			err := json.Unmarshal([]byte(tc.body), &r)
			wantField(t, err, tc.field, "")
			if err == nil && string(r.Value) != tc.want {
				t.Fatalf("value %q, want %q", r.Value, tc.want)
			}
		})
	}
	t.Run("a number names the field", func(t *testing.T) {
		var r CredentialCreateRequest
		var te *json.UnmarshalTypeError
		if err := json.Unmarshal([]byte(`{"value":7}`), &r); !errors.As(err, &te) || te.Field != "value" || te.Value != "number" {
			t.Fatalf("got %v, want a type error on value", err)
		}
	})
}

func TestAPIKeyCreateRequestValidate(t *testing.T) {
	s := func(v string) *string { return &v }
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	key := func(edit func(*APIKeyCreateRequest)) *APIKeyCreateRequest {
		r := &APIKeyCreateRequest{Name: "ci", Scopes: []string{"*"}}
		edit(r)
		return r
	}
	runValidate(t, []validateCase{
		{"a key", key(func(*APIKeyCreateRequest) {}), "", ""},
		{"a blank name", key(func(r *APIKeyCreateRequest) { r.Name = " " }), "name", "must not be empty"},
		{"addresses and ranges", key(func(r *APIKeyCreateRequest) { r.AllowedIPs = []string{" 10.0.0.1 ", "2001:db8::/32"} }), "", ""},
		{"a bad address", key(func(r *APIKeyCreateRequest) { r.AllowedIPs = []string{"10.0.0.1", "10.0.0.300"} }), "allowed_ips[1]", `"10.0.0.300": not an IP address`},
		{"a zoned address", key(func(r *APIKeyCreateRequest) { r.AllowedIPs = []string{"fe80::1%eth0"} }), "allowed_ips[0]", "zoned"},
		{"an origin", key(func(r *APIKeyCreateRequest) { r.AllowedOrigins = []string{"HTTPS://App.Example:443"} }), "", ""},
		{"an ftp origin", key(func(r *APIKeyCreateRequest) { r.AllowedOrigins = []string{"ftp://x"} }), "allowed_origins[0]", `"ftp://x"`},
		{"an expiry", key(func(r *APIKeyCreateRequest) { r.ExpiresAt = s(future) }), "", ""},
		{"an expiry that is not RFC 3339", key(func(r *APIKeyCreateRequest) { r.ExpiresAt = s("tomorrow") }), "expires_at", "RFC 3339"},
		{"an expiry in the past", key(func(r *APIKeyCreateRequest) { r.ExpiresAt = s("2001-01-01T00:00:00Z") }), "expires_at", "in the future"},
	})
	t.Run("the key", func(t *testing.T) {
		r := &APIKeyCreateRequest{Name: " ci ", Scopes: []string{"agents:read"}, AllowedIPs: []string{" 10.0.0.1"},
			AllowedOrigins: []string{"HTTPS://App.Example:443", "https://app.example"}, ExpiresAt: s("2030-01-02T15:04:05.123456+01:00")}
		k := r.APIKey("ws1")
		if k.WorkspaceID != "ws1" || k.Name != "ci" || k.AllowedIPs[0] != "10.0.0.1" || len(k.AllowedOrigins) != 1 || k.AllowedOrigins[0] != "https://app.example" ||
			k.ExpiresAt.Format(time.RFC3339Nano) != "2030-01-02T14:04:05.123Z" {
			t.Fatalf("key %+v, expires %v", k, k.ExpiresAt)
		}
	})
}

func TestDataSourceRequestsValidate(t *testing.T) {
	s := func(v string) *string { return &v }
	runValidate(t, []validateCase{
		{"a source", &DataSourceCreateRequest{Name: "shop", Type: "postgres"}, "", ""},
		{"a blank name", &DataSourceCreateRequest{Name: "\u00a0", Type: "postgres"}, "name", "must not be empty"},
		{"a change", &DataSourceUpdateRequest{Name: s("shop")}, "", ""},
		{"a blank new name", &DataSourceUpdateRequest{Name: s(" ")}, "name", "must not be empty"},
		{"a version", &DataSourceVersionCreateRequest{Config: map[string]any{}}, "", ""},
		{"a version without its config", &DataSourceVersionCreateRequest{Notes: "n"}, "config", "is required"},
	})
}

func TestAgentVersionAndPreviewRequestsValidate(t *testing.T) {
	runValidate(t, []validateCase{
		{"a whole config", &AgentVersionCreateRequest{Config: AgentConfig{Model: "gpt-4o"}}, "", ""},
		{"a patch of the active version", &AgentVersionCreateRequest{Base: "active"}, "", ""},
		{"a patch of a version", &AgentVersionCreateRequest{BaseVersionID: "v1"}, "", ""},
		{"both bases", &AgentVersionCreateRequest{BaseVersionID: "v1", Base: "active"}, "base", "not both"},
		{"an unknown base", &AgentVersionCreateRequest{Base: "latest"}, "base", `must be "active", got "latest"`},
		{"a preview of a version", &AgentPreviewRequest{VersionID: "v1"}, "", ""},
		{"a preview of a config", &AgentPreviewRequest{Config: &AgentConfig{Model: "gpt-4o"}}, "", ""},
		{"a version and a config", &AgentPreviewRequest{VersionID: "v1", Config: &AgentConfig{Model: "gpt-4o"}}, "config", "not both"},
	})
}

func TestOpenAIRequestsValidate(t *testing.T) {
	msgs := []OpenAIMessage{{Role: "user", Content: json.RawMessage(`"Hi"`)}}
	chat := func(edit func(*OpenAIChatRequest)) *OpenAIChatRequest {
		r := &OpenAIChatRequest{Model: "Helper", Messages: msgs}
		edit(r)
		return r
	}
	resp := func(edit func(*OpenAIResponsesRequest)) *OpenAIResponsesRequest {
		r := &OpenAIResponsesRequest{Model: "Helper", Input: json.RawMessage(`"Hi"`)}
		edit(r)
		return r
	}
	no := false
	runValidate(t, []validateCase{
		{"a chat", chat(func(*OpenAIChatRequest) {}), "", ""},
		{"a chat of a version", chat(func(r *OpenAIChatRequest) { r.Model = "Helper@2" }), "", ""},
		{"a blank model", chat(func(r *OpenAIChatRequest) { r.Model = " " }), "model", "is required"},
		{"a version that is not a number", chat(func(r *OpenAIChatRequest) { r.Model = "Helper@x" }), "model", "version number"},
		{"version 0", chat(func(r *OpenAIChatRequest) { r.Model = "Helper@0" }), "model", "version number"},
		{"no tools", chat(func(r *OpenAIChatRequest) { r.Tools = json.RawMessage(`[]`) }), "", ""},
		{"client tools", chat(func(r *OpenAIChatRequest) { r.Tools = json.RawMessage(`[{"type":"function"}]`) }), "tools", "not supported"},
		{"a long user", chat(func(r *OpenAIChatRequest) { r.User = strings.Repeat("u", 201) }), "user", "at most 200"},
		{"json output", chat(func(r *OpenAIChatRequest) { r.ResponseFormat = &OpenAIResponseFormat{Type: "json_object"} }), "", ""},
		{"a schema", chat(func(r *OpenAIChatRequest) {
			r.ResponseFormat = &OpenAIResponseFormat{Type: "json_schema", JSONSchema: &OpenAIJSONSchema{Schema: json.RawMessage(`{"type":"object"}`)}}
		}), "", ""},
		{"json_schema without its schema", chat(func(r *OpenAIChatRequest) { r.ResponseFormat = &OpenAIResponseFormat{Type: "json_schema"} }),
			"response_format.json_schema.schema", "is required"},
		{"a schema that does not compile", chat(func(r *OpenAIChatRequest) {
			r.ResponseFormat = &OpenAIResponseFormat{Type: "json_schema", JSONSchema: &OpenAIJSONSchema{Schema: json.RawMessage(`{"type":12}`)}}
		}), "response_format.json_schema.schema", "not a valid JSON Schema"},
		{"an unknown format", chat(func(r *OpenAIChatRequest) { r.ResponseFormat = &OpenAIResponseFormat{Type: "xml"} }), "response_format.type", `not "xml"`},
		{"a conversation", chat(func(r *OpenAIChatRequest) {
			r.Messages = []OpenAIMessage{{Role: "system"}, {Role: "developer"}, {Role: "assistant"}, {Role: "user"}}
		}), "", ""},
		{"no messages", chat(func(r *OpenAIChatRequest) { r.Messages = nil }), "messages", "at least one message"},
		{"a tool message", chat(func(r *OpenAIChatRequest) { r.Messages = []OpenAIMessage{{Role: "tool"}, {Role: "user"}} }), "messages[0].role", `"tool" is not supported`},
		{"the last not the user's", chat(func(r *OpenAIChatRequest) { r.Messages = []OpenAIMessage{{Role: "user"}, {Role: "assistant"}} }),
			"messages[1].role", `must be the user's, not "assistant"`},
		{"a response", resp(func(*OpenAIResponsesRequest) {}), "", ""},
		{"a response continuing one", resp(func(r *OpenAIResponsesRequest) { r.PreviousResponseID = "resp_x" }), "", ""},
		{"a response with client tools", resp(func(r *OpenAIResponsesRequest) { r.Tools = json.RawMessage(`[{}]`) }), "tools", "not supported"},
		{"a response with a bad version", resp(func(r *OpenAIResponsesRequest) { r.Model = "Helper@-1" }), "model", "version number"},
		{"an unstored response", resp(func(r *OpenAIResponsesRequest) { r.Store = &no }), "", ""},
		{"an unstored response continuing one", resp(func(r *OpenAIResponsesRequest) { r.Store, r.PreviousResponseID = &no, "resp_x" }),
			"previous_response_id", "store false"},
	})
	t.Run("model refs", func(t *testing.T) {
		for model, want := range map[string]struct {
			ref     string
			version int
		}{"Helper": {"Helper", 0}, "Helper@3": {"Helper", 3}, "a@b@2": {"a@b", 2}, "@1": {"@1", 0}} {
			ref, v, err := ParseModelRef(model)
			if err != nil || ref != want.ref || v != want.version {
				t.Errorf("%q: %q %d %v", model, ref, v, err)
			}
		}
	})
}

func TestAgentConfigCheckInput(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["q"],"properties":{"q":{"type":"string"}}}`)
	for _, tc := range []struct {
		name   string
		schema json.RawMessage
		input  map[string]any
		field  string
	}{
		{"no schema", nil, map[string]any{"anything": 1}, ""},
		{"a null schema is none", json.RawMessage(`null`), map[string]any{}, ""},
		{"an input the schema takes", schema, map[string]any{"q": "tea"}, ""},
		{"an input it refuses", schema, map[string]any{"q": 1}, "input"},
		{"a schema that does not compile", json.RawMessage(`{"type":12}`), map[string]any{}, "config.input_schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &AgentConfig{Model: "m", InputSchema: tc.schema}
			wantField(t, c.CheckInput(tc.input), tc.field, "")
		})
	}
}
