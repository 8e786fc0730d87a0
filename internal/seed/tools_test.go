package seed

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

const testWorkspace = "2o0yqLDGdJdFRBTuhdfPNEZdAvX"

// newFileStore opens a store on a SQLite file, so the test can also reach the tables with raw
// SQL (to add the credentials that mcp_tools.json refers to).
func newFileStore(t *testing.T) (*store.Store, *sql.DB) {
	t.Helper()
	ctx := context.Background()
	path := dbs.SQLiteFile(t)
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.WorkspaceCreate(ctx, &domain.Workspace{ID: testWorkspace, Name: "Test", Slug: "test"}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return st, db
}

// insertSeedCredentials adds rows for the ids of credentials.json without going through the
// credentials code.
func insertSeedCredentials(t *testing.T, db *sql.DB) {
	t.Helper()
	raw, err := data.ReadFile("data/credentials.json")
	if err != nil {
		t.Fatal(err)
	}
	var creds []struct {
		ID, Name, Type string
	}
	if err := json.Unmarshal(raw, &creds); err != nil {
		t.Fatal(err)
	}
	for _, c := range creds {
		if _, err := db.Exec(`INSERT INTO credentials (id, workspace_id, name, type, secret, masked_value, created_at, updated_at)
			VALUES ($1, $2, $3, $4, 'x', '…', 0, 0)`, c.ID, testWorkspace, c.Name, c.Type); err != nil {
			t.Fatal(err)
		}
	}
}

func seedEntries(t *testing.T, file string) []json.RawMessage {
	t.Helper()
	raw, err := data.ReadFile("data/" + file)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := splitEntries(file, raw)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestSeedMCPToolsAndGuardrails(t *testing.T) {
	ctx := context.Background()
	st, db := newFileStore(t)
	insertSeedCredentials(t, db)
	l := &loader{st: st, ws: testWorkspace}
	tools := seedEntries(t, "mcp_tools.json")
	for i, e := range tools {
		if err := l.mcpTool(ctx, e); err != nil {
			t.Fatalf("mcp_tools.json entry %d%s: %v", i, entryID(e), err)
		}
	}
	guardrails := seedEntries(t, "guardrails.json")
	for i, e := range guardrails {
		if err := l.guardrail(ctx, e); err != nil {
			t.Fatalf("guardrails.json entry %d%s: %v", i, entryID(e), err)
		}
	}
	n, err := st.StoreStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n["mcp_tools"] != len(tools) || n["guardrails"] != len(guardrails) {
		t.Fatalf("counts %v", n)
	}
	gh, err := st.MCPToolGet(ctx, testWorkspace, "2rfFpVFrPvMpEWlIPR6aUigLnlI")
	if err != nil {
		t.Fatal(err)
	}
	if gh.Transport != "streamable_http" || gh.CredentialID == nil || *gh.CredentialID != "2rfFpEcK0JerZzF3kGBRzpSq7yL" || len(gh.Tools) != 4 || !gh.Enabled {
		t.Fatalf("github server %+v", gh)
	}
	g, err := st.GuardrailGet(ctx, testWorkspace, "2rfFqC60oa2plLafJ3t4RLSRFV0")
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Scanners) != 4 || g.Scanners[1].Config["action"] != "redact" {
		t.Fatalf("guardrail %+v", g)
	}
}

func TestSeedToolEntriesAreChecked(t *testing.T) {
	ctx := context.Background()
	st, _ := newFileStore(t)
	l := &loader{st: st, ws: testWorkspace}
	for _, c := range []struct {
		name  string
		load  func(context.Context, json.RawMessage) error
		entry string
		want  string // substring of the error
	}{
		{"unknown field", l.mcpTool, `{"name":"x","transport":"stdio","command":"npx","comand":"typo"}`, "comand"},
		{"missing credential", l.mcpTool, `{"name":"x","transport":"http","url":"https://mcp.example.com/","credential_id":"nope"}`, "credential_id"},
		{"bad url", l.mcpTool, `{"name":"x","transport":"http","url":"ftp://example.com"}`, "url"},
		{"bad input schema", l.mcpTool, `{"name":"x","transport":"stdio","command":"npx","tools":[{"name":"a"},{"name":"b","input_schema":{"type":"object","properties":{"q":{"type":"nope"}}}}]}`, "tools[1].input_schema"},
		{"guardrail unknown field", l.guardrail, `{"name":"g","applies_to":"both","action":"block","scanners":[],"extra":1}`, "extra"},
		{"guardrail bad option", l.guardrail, `{"name":"g","applies_to":"both","action":"block","scanners":[{"type":"pii","config":{"entities":["email","dna"]}}]}`, "scanners[0].config.entities[1]"},
		{"guardrail without action", l.guardrail, `{"name":"g","applies_to":"both","scanners":[{"type":"secrets"}]}`, "action"},
	} {
		err := c.load(ctx, json.RawMessage(c.entry))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s", c.name, err, c.want)
		}
	}
	// A scanner without config is stored with an empty one.
	if err := l.guardrail(ctx, json.RawMessage(`{"id":"g1","name":"g","applies_to":"input","action":"block","enabled":false,"scanners":[{"type":"secrets"}]}`)); err != nil {
		t.Fatal(err)
	}
	g, err := st.GuardrailGet(ctx, testWorkspace, "g1")
	if err != nil || g.Enabled || g.Scanners[0].Config == nil {
		t.Fatalf("%+v %v", g, err)
	}
	var ve *store.ValidationError
	if err := l.guardrail(ctx, json.RawMessage(`{"name":"","applies_to":"input","action":"block","scanners":[{"type":"secrets"}]}`)); !errors.As(err, &ve) || ve.Field != "name" {
		t.Fatalf("blank name: %v", err)
	}
}
