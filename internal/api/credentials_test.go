package api

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/vault"
)

func TestCredentialRoutes(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	const secret = "sk-proj-ROUTES0123456789abcdefghijklmnopqrstuv-wxyz"
	c, err := e.c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "OpenAI key", Type: "api_key", Provider: "openai",
		Description: "prod key", Metadata: map[string]any{"header": "Authorization"}, Value: secret})
	if err != nil {
		t.Fatal(err)
	}
	if c.MaskedValue != "sk-…wxyz" || c.Provider != "openai" || c.Metadata["header"] != "Authorization" {
		t.Fatalf("created %+v", c)
	}
	id := "/api/v1/credentials/" + c.ID
	noSecret := func(t *testing.T, body map[string]any) {
		if b := mustMarshal(body); strings.Contains(b, secret) || strings.Contains(b, `"value":`) || strings.Contains(b, `"secret":`) {
			t.Fatalf("a response carries the value: %s", b)
		}
	}
	long := strings.Repeat("x", 16<<10+1)
	var dsID string
	e.run([]scenario{
		{name: "list", method: "GET", path: "/api/v1/credentials", status: 200, check: noSecret,
			fields: map[string]any{"pagination.total": 1, "pagination.pages": 1, "data.0.masked_value": "sk-…wxyz", "data.0.name": "OpenAI key"}},
		{name: "list type", method: "GET", path: "/api/v1/credentials?type=oauth2", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list provider", method: "GET", path: "/api/v1/credentials?provider=openai", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list q", method: "GET", path: "/api/v1/credentials?q=PROD", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list bad type", method: "GET", path: "/api/v1/credentials?type=password", status: 400, code: "bad_request", message: "type"},
		{name: "list bad page", method: "GET", path: "/api/v1/credentials?page=-1", status: 400, code: "bad_request", message: "page"},
		{name: "list bad limit", method: "GET", path: "/api/v1/credentials?limit=1000", status: 400, code: "bad_request", message: "limit"},
		{name: "get", method: "GET", path: id, status: 200, check: noSecret,
			fields: map[string]any{"data.id": c.ID, "data.masked_value": "sk-…wxyz", "data.type": "api_key", "data.value": nil}},
		{name: "get missing", method: "GET", path: "/api/v1/credentials/nope", status: 404, code: "not_found", message: "credential nope"},
		{name: "create malformed", method: "POST", path: "/api/v1/credentials", body: `{"name":"x","value":`, status: 400, code: "bad_request"},
		{name: "create value wrong type", method: "POST", path: "/api/v1/credentials", body: `{"name":"x","type":"api_key","value":42}`, status: 400, code: "bad_request", message: "value"},
		{name: "create metadata wrong type", method: "POST", path: "/api/v1/credentials", body: `{"name":"x","type":"api_key","value":"v","metadata":[]}`, status: 400, message: "metadata"},
		{name: "create empty name", method: "POST", path: "/api/v1/credentials", body: `{"name":"","type":"api_key","value":"v"}`, status: 422, code: "validation_error", message: "name"},
		{name: "create long name", method: "POST", path: "/api/v1/credentials", body: `{"name":"` + strings.Repeat("n", 201) + `","type":"api_key","value":"v"}`, status: 422, message: "name"},
		{name: "create bad type", method: "POST", path: "/api/v1/credentials", body: `{"name":"x","type":"password","value":"v"}`, status: 422, message: "type"},
		{name: "create no value", method: "POST", path: "/api/v1/credentials", body: `{"name":"x","type":"api_key"}`, status: 422, message: "value"},
		{name: "create blank value", method: "POST", path: "/api/v1/credentials", body: `{"name":"x","type":"api_key","value":"   "}`, status: 422, message: "value"},
		{name: "create long value", method: "POST", path: "/api/v1/credentials", body: `{"name":"x","type":"api_key","value":"` + long + `"}`, status: 422, message: "value",
			check: func(t *testing.T, b map[string]any) {
				if strings.Contains(mustMarshal(b), "xxxxxxxx") {
					t.Fatal("the error echoes the value")
				}
			}},
		{name: "create short value masked", method: "POST", path: "/api/v1/credentials", body: `{"name":"PIN","type":"basic_auth","value":"1234"}`, status: 201,
			fields: map[string]any{"data.masked_value": "…34", "data.provider": "", "data.metadata": map[string]any{}}},
		{name: "patch name and metadata", method: "PATCH", path: id, body: `{"name":"Renamed","metadata":{"org":"o1"}}`, status: 200, check: noSecret,
			fields: map[string]any{"data.name": "Renamed", "data.metadata": map[string]any{"org": "o1"}, "data.masked_value": "sk-…wxyz", "data.description": "prod key"}},
		{name: "patch value", method: "PATCH", path: id, body: `{"value":"sk-rotated-abcdefghijklmnop-9876"}`, status: 200, fields: map[string]any{"data.masked_value": "sk-…9876"}},
		{name: "patch empty value", method: "PATCH", path: id, body: `{"value":""}`, status: 422, message: "value"},
		{name: "patch empty name", method: "PATCH", path: id, body: `{"name":" "}`, status: 422, message: "name"},
		{name: "patch wrong type", method: "PATCH", path: id, body: `{"provider":1}`, status: 400, message: "provider"},
		{name: "patch missing", method: "PATCH", path: "/api/v1/credentials/nope", body: `{"name":"x"}`, status: 404, code: "not_found"},
		{name: "data source uses it", method: "POST", path: "/api/v1/data-sources", body: `{"name":"Orders","type":"postgres","credential_id":"` + c.ID + `"}`, status: 201,
			check: func(t *testing.T, b map[string]any) { dsID = lookup(b, "data.id").(string) }},
	})
	e.run([]scenario{
		{name: "delete in use", method: "DELETE", path: id, status: 409, code: "conflict", message: dsID},
		{name: "detach", method: "PATCH", path: "/api/v1/data-sources/" + dsID, body: `{"credential_id":null}`, status: 200, fields: map[string]any{"data.credential_id": nil}},
		{name: "delete", method: "DELETE", path: id, status: 200, check: noSecret, fields: map[string]any{"data.id": c.ID, "data.name": "Renamed"}},
		{name: "gone", method: "GET", path: id, status: 404},
		{name: "delete again", method: "DELETE", path: id, status: 404},
	})
	if v, err := vault.CredentialReveal(ctx, e.store, e.ws, c.ID, e.srv.cfg.Secrets); !store.IsNotFound(err) {
		t.Fatalf("reveal deleted: %q %v", v, err)
	}
}

func TestCredentialRevealAfterRotation(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	c, err := e.c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "GitHub", Type: "bearer_token", Value: "github_pat_first_0000000000000000"})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := vault.CredentialReveal(ctx, e.store, e.ws, c.ID, e.srv.cfg.Secrets); err != nil || v != "github_pat_first_0000000000000000" {
		t.Fatalf("reveal: %q %v", v, err)
	}
	next := "github_pat_second_111111111111111"
	if _, err := e.c.CredentialUpdate(ctx, c.ID, client.CredentialUpdateRequest{Value: &next}); err != nil {
		t.Fatal(err)
	}
	if v, err := vault.CredentialReveal(ctx, e.store, e.ws, c.ID, e.srv.cfg.Secrets); err != nil || v != next {
		t.Fatalf("reveal after rotation: %q %v", v, err)
	}
}

// TestCredentialSecretNeverLeaks drives every credential route (and the data source routes
// that refer to credentials) on a SQLite file store and then looks for the raw values in
// every response, in the log, and in the bytes of the database files.
func TestCredentialSecretNeverLeaks(t *testing.T) {
	ctx := context.Background()
	path := dbs.SQLiteFile(t)
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			st.Close()
		}
	})
	e := newTestEnv(t, onStore(st))
	secrets := []string{
		"sk-LEAKCHECK-Zq8w3e5r7t9y1u3i5o7p9a1s3d5f7g9h",
		"postgres://svc:LEAKCHECK-pw-Kf83Jd92Lm@db.internal:5432/orders",
		"LEAKCHECK-rotated-Vb61Nm27Qw48Er93Ty05",
	}
	var bodies [][]byte
	do := func(method, path, body string, header http.Header, want int) []byte {
		t.Helper()
		var raw []byte
		if body != "" {
			raw = []byte(body)
		}
		status, resp, respHeader, err := e.c.Raw(ctx, method, path, raw, header)
		if err != nil {
			t.Fatal(err)
		}
		if status != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, status, want, resp)
		}
		bodies = append(bodies, resp)
		for k, vs := range respHeader {
			bodies = append(bodies, []byte(k+": "+strings.Join(vs, ",")))
		}
		return resp
	}
	idem := http.Header{"Idempotency-Key": {"leak-1"}}
	create := `{"name":"LeakCheck credential","type":"api_key","provider":"openai","value":"` + secrets[0] + `"}`
	first := do("POST", "/api/v1/credentials", create, idem, 201)
	do("POST", "/api/v1/credentials", create, idem, 201) // replayed from the idempotency store
	var created struct {
		Data struct{ ID string } `json:"data"`
	}
	mustJSON(t, json.RawMessage(first), &created)
	id := created.Data.ID
	do("POST", "/api/v1/credentials", `{"name":"LeakCheck DB","type":"database_url","value":"`+secrets[1]+`"}`, nil, 201)
	do("GET", "/api/v1/credentials", "", nil, 200)
	do("GET", "/api/v1/credentials?q=leakcheck", "", nil, 200)
	do("GET", "/api/v1/credentials/"+id, "", nil, 200)
	do("PATCH", "/api/v1/credentials/"+id, `{"value":"`+secrets[2]+`"}`, nil, 200)
	do("PATCH", "/api/v1/credentials/"+id, `{"value":"`+secrets[2]+strings.Repeat("y", 16<<10)+`"}`, nil, 422)
	do("POST", "/api/v1/credentials", `{"name":"","type":"api_key","value":"`+secrets[0]+`"}`, nil, 422)
	do("POST", "/api/v1/credentials", `{"name":"x","type":"nope","value":"`+secrets[0]+`"}`, nil, 422)
	do("POST", "/api/v1/credentials", `{"name":"x","type":"api_key","value":"`+secrets[0]+`","metadata":"bad"}`, nil, 400)
	do("POST", "/api/v1/credentials", `{"name":"x","type":"api_key","value":"`+secrets[0]+`"`, nil, 400)
	ds := do("POST", "/api/v1/data-sources", `{"name":"LeakCheck orders","type":"postgres","credential_id":"`+id+`"}`, nil, 201)
	var dsCreated struct {
		Data struct{ ID string } `json:"data"`
	}
	mustJSON(t, json.RawMessage(ds), &dsCreated)
	do("GET", "/api/v1/data-sources/"+dsCreated.Data.ID, "", nil, 200)
	do("DELETE", "/api/v1/credentials/"+id, "", nil, 409)
	do("DELETE", "/api/v1/data-sources/"+dsCreated.Data.ID, "", nil, 200)
	do("GET", "/api/v1/credentials/"+id, "", nil, 200)
	do("DELETE", "/api/v1/credentials/"+id, "", nil, 200)
	if v, err := vault.CredentialReveal(ctx, st, testWorkspace, id, e.srv.cfg.Secrets); !store.IsNotFound(err) {
		t.Fatalf("deleted credential revealed: %q %v", v, err)
	}
	for _, b := range bodies {
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Fatalf("a response carries a raw value: %s", b)
			}
		}
	}
	logs := e.logBuf.String()
	if !strings.Contains(logs, "/api/v1/credentials") {
		t.Fatalf("the log captured nothing: %q", logs)
	}
	for _, s := range secrets {
		if strings.Contains(logs, s) || strings.Contains(logs, "LEAKCHECK") {
			t.Fatalf("the log carries a raw value: %s", logs)
		}
	}

	e.ts.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	var disk []byte
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		disk = append(disk, b...)
	}
	if !strings.Contains(string(disk), "LeakCheck credential") || !strings.Contains(string(disk), "sk-…") {
		t.Fatal("the database files do not hold the credential rows: the check would prove nothing")
	}
	for _, s := range secrets {
		if strings.Contains(string(disk), s) || strings.Contains(string(disk), "LEAKCHECK") {
			t.Fatalf("the database files hold the raw value %q", s)
		}
	}
}

// mustMarshal is v as JSON text, for searching a decoded response.
func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
