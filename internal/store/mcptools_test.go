package store

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/pressly/goose/v3"
)

// Migration 10 renames the http transport (streamable HTTP) and adds the refresh columns.
func TestMigrationRenamesHTTPTransport(t *testing.T) {
	forEachStoreAt(t, 8, func(t *testing.T, s *Store, p *goose.Provider) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		id := NewID()
		if _, err := s.exec(ctx, `INSERT INTO mcp_tools (id, workspace_id, name, transport, url, created_at, updated_at)
			VALUES ($1, $2, 'GitHub', 'http', 'https://api.githubcopilot.com/mcp/', $3, $3)`, id, ws, domain.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Up(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := s.MCPToolGet(ctx, ws, id)
		if err != nil || got.Transport != "streamable_http" || got.RefreshedAt != nil || got.LastError != nil || got.Env == nil || len(got.Env) != 0 {
			t.Fatalf("after the migration: %+v %v", got, err)
		}
	})
}

func TestMCPToolRefreshed(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		tool, err := s.MCPToolCreate(ctx, &domain.MCPTool{WorkspaceID: ws, Name: "Orders", Transport: "streamable_http", URL: "https://x.example/mcp",
			Enabled: true, Tools: []domain.MCPToolDef{{Name: "typed_in"}}})
		if err != nil {
			t.Fatal(err)
		}
		at := domain.Now()
		listed := []domain.MCPToolDef{{Name: "lookup_order", Description: "Look up an order.", InputSchema: json.RawMessage(`{"type":"object"}`)}}
		got, err := s.MCPToolRefreshed(ctx, ws, tool.ID, listed, nil, at)
		if err != nil || len(got.Tools) != 1 || got.Tools[0].Name != "lookup_order" || got.RefreshedAt == nil || !got.RefreshedAt.Equal(at.Time) || got.LastError != nil {
			t.Fatalf("refreshed: %+v %v", got, err)
		}
		later := domain.TimeFromMillis(at.UnixMilli() + 1000)
		got, err = s.MCPToolRefreshed(ctx, ws, tool.ID, nil, errors.New("connection refused"), later)
		if err != nil || len(got.Tools) != 1 || got.Tools[0].Name != "lookup_order" || !got.RefreshedAt.Equal(later.Time) ||
			got.LastError == nil || *got.LastError != "connection refused" {
			t.Fatalf("failed refresh: %+v %v", got, err)
		}
		got, err = s.MCPToolRefreshed(ctx, ws, tool.ID, nil, nil, later)
		if err != nil || len(got.Tools) != 0 || got.LastError != nil {
			t.Fatalf("a server that lists no tools: %+v %v", got, err)
		}
		if _, err := s.MCPToolRefreshed(ctx, mustWorkspace(t, s, "b"), tool.ID, nil, nil, at); !IsNotFound(err) {
			t.Fatalf("another workspace's tool: %v", err)
		}
	})
}

// A config's tools read and write both forms, and a server named in either form cannot be
// deleted.
func TestToolRefs(t *testing.T) {
	var c domain.AgentConfig
	if err := json.Unmarshal([]byte(`{"model":"m","tools":["a",{"mcp_tool_id":"b","names":["x"]},{"mcp_tool_id":"c"}]}`), &c); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(c.Tools)
	if string(raw) != `["a",{"mcp_tool_id":"b","names":["x"]},"c"]` {
		t.Errorf("tools written as %s", raw)
	}
	if err := json.Unmarshal([]byte(`{"tools":[7]}`), &c); err == nil {
		t.Error("a number was read as a tool reference")
	}
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws := mustWorkspace(t, s, "a")
		tool, err := s.MCPToolCreate(ctx, &domain.MCPTool{WorkspaceID: ws, Name: "T", Transport: "sse", URL: "https://x.example/sse", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := s.MCPToolCreate(ctx, &domain.MCPTool{WorkspaceID: ws, Name: "C", Transport: "stdio", Command: "uvx", Env: domain.Env{"TEAM": "T1"}, Enabled: true})
		if err != nil || cmd.Env["TEAM"] != "T1" {
			t.Fatalf("env: %+v %v", cmd, err)
		}
		if cmd, err = s.MCPToolUpdate(ctx, ws, cmd.ID, domain.MCPToolPatch{Env: &domain.Env{"REGION": "eu"}}); err != nil || len(cmd.Env) != 1 || cmd.Env["REGION"] != "eu" {
			t.Fatalf("env patched: %+v %v", cmd, err)
		}
		if _, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "agent", Status: "active"},
			&domain.AgentConfig{Model: "gpt-4o", Tools: []domain.ToolRef{{MCPToolID: tool.ID, Names: []string{"x"}}}}, ""); err != nil {
			t.Fatal(err)
		}
		var ce *ConflictError
		if _, err := s.MCPToolDelete(ctx, ws, tool.ID); !errors.As(err, &ce) {
			t.Fatalf("delete a tool a version names: %v", err)
		}
	})
}
