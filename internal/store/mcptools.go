package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
)

const mcpToolColumns = `id, workspace_id, name, description, transport, command, args, env, url, credential_id, enabled, tools,
	refreshed_at, last_error, created_at, updated_at`

func scanMCPTool(row interface{ Scan(...any) error }) (*domain.MCPTool, error) {
	var t domain.MCPTool
	var refreshed domain.Time
	if err := row.Scan(&t.ID, &t.WorkspaceID, &t.Name, &t.Description, &t.Transport, &t.Command, &t.Args, jsonCol{&t.Env}, &t.URL,
		&t.CredentialID, &t.Enabled, jsonCol{&t.Tools}, &refreshed, &t.LastError, &t.CreatedAt, &t.UpdatedAt); err != nil {
		return nil, err
	}
	if !refreshed.IsZero() {
		t.RefreshedAt = &refreshed
	}
	if t.Args == nil {
		t.Args = domain.Strings{}
	}
	if t.Env == nil {
		t.Env = domain.Env{}
	}
	if t.Tools == nil {
		t.Tools = []domain.MCPToolDef{}
	}
	return &t, nil
}

// enabledCond filters a boolean column with a string argument, so one SQL text serves
// SQLite (integers) and PostgreSQL (booleans).
func enabledCond(v *bool) cond {
	if v == nil {
		return cond{}
	}
	c := cond{sql: "(CASE WHEN enabled THEN 'true' ELSE 'false' END) = $%d", arg: "false"}
	if *v {
		c.arg = "true"
	}
	return c
}

// MCPToolList returns one page of a workspace's MCP servers, newest first, and the total count.
func (s *Store) MCPToolList(ctx context.Context, ws string, f domain.MCPToolFilter, p domain.Page) ([]*domain.MCPTool, int, error) {
	where, args := whereClause("", ws, []cond{
		{"transport = $%d", f.Transport},
		enabledCond(f.Enabled),
		{likeBoth("name", "description"), likePattern(f.Query)},
	})
	return listPage(ctx, s, "mcp_tools", mcpToolColumns, where, args, "", p, scanMCPTool)
}

// MCPToolGet returns one MCP server of the workspace.
func (s *Store) MCPToolGet(ctx context.Context, ws, id string) (*domain.MCPTool, error) {
	return getByID(ctx, s, "mcp tool", "mcp_tools", mcpToolColumns, ws, id, scanMCPTool)
}

// MCPToolCreate inserts an MCP server; a preset ID (from seed data or fixtures) is kept.
func (s *Store) MCPToolCreate(ctx context.Context, t *domain.MCPTool) (*domain.MCPTool, error) {
	if t.ID == "" {
		t.ID = NewID()
	}
	tools, err := jsonValue(nonNil(t.Tools))
	if err != nil {
		return nil, fmt.Errorf("encode tools: %w", err)
	}
	env, err := jsonValue(envOf(t.Env))
	if err != nil {
		return nil, fmt.Errorf("encode env: %w", err)
	}
	_, err = s.exec(ctx, `INSERT INTO mcp_tools (id, workspace_id, name, description, transport, command, args, env, url, credential_id,
		enabled, tools, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)`,
		t.ID, t.WorkspaceID, t.Name, t.Description, t.Transport, t.Command, t.Args, env, t.URL, emptyAsNull(t.CredentialID),
		t.Enabled, tools, domain.Now())
	if err != nil {
		if isUniqueViolation(err) {
			return nil, &ConflictError{Message: fmt.Sprintf("mcp tool %s already exists", t.ID)}
		}
		return nil, fmt.Errorf("insert mcp tool: %w", err)
	}
	return s.MCPToolGet(ctx, t.WorkspaceID, t.ID)
}

// MCPToolUpdate changes the given fields of an MCP server.
func (s *Store) MCPToolUpdate(ctx context.Context, ws, id string, p domain.MCPToolPatch) (*domain.MCPTool, error) {
	var tools, env *jsonArg
	if p.Tools != nil {
		tools = &jsonArg{nonNil(*p.Tools)}
	}
	if p.Env != nil {
		env = &jsonArg{envOf(*p.Env)}
	}
	var cred **string
	if p.CredentialID != nil {
		cred = domain.PtrTo(emptyAsNull(p.CredentialID))
	}
	err := s.update(ctx, "mcp tool", "mcp_tools", ws, id, []set{
		{"name", p.Name}, {"description", p.Description}, {"transport", p.Transport}, {"command", p.Command},
		{"args", p.Args}, {"env", env}, {"url", p.URL}, {"credential_id", cred}, {"enabled", p.Enabled}, {"tools", tools},
	})
	if err != nil {
		return nil, err
	}
	return s.MCPToolGet(ctx, ws, id)
}

// MCPToolRefreshed records a refresh of an MCP server at a time: on success (failure nil)
// the tools it listed, which replace the stored ones; on failure its message, keeping the
// tools as they were.
func (s *Store) MCPToolRefreshed(ctx context.Context, ws, id string, tools []domain.MCPToolDef, failure error, at domain.Time) (*domain.MCPTool, error) {
	q, args := "UPDATE mcp_tools SET tools = $1, refreshed_at = $2, last_error = NULL WHERE workspace_id = $3 AND id = $4", []any{nil, at, ws, id}
	if failure != nil {
		q, args = "UPDATE mcp_tools SET refreshed_at = $1, last_error = $2 WHERE workspace_id = $3 AND id = $4", []any{at, failure.Error(), ws, id}
	} else {
		raw, err := jsonValue(nonNil(tools))
		if err != nil {
			return nil, fmt.Errorf("encode tools: %w", err)
		}
		args[0] = raw
	}
	res, err := s.exec(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("record refresh of mcp tool %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, notFound("mcp tool", id)
	}
	return s.MCPToolGet(ctx, ws, id)
}

// MCPToolDelete removes an MCP server and returns it as it was. It refuses with a
// *ConflictError while any agent version lists the server in its tools.
func (s *Store) MCPToolDelete(ctx context.Context, ws, id string) (*domain.MCPTool, error) {
	return deleteAsWas(ctx, s, "mcp tool", "mcp_tools", ws, id, (*Store).MCPToolGet, func(tx *Store, _ *domain.MCPTool) error {
		return tx.refuseIfConfigured(ctx, ws, "mcp tool", id, (*domain.AgentConfig).ToolIDs)
	})
}

// refuseIfConfigured returns a *ConflictError naming the first agent (and version) whose
// config lists id among the ids that field returns.
func (s *Store) refuseIfConfigured(ctx context.Context, ws, resource, id string, field func(*domain.AgentConfig) []string) error {
	// The LIKE narrows the scan to configs that mention the id; decoding confirms the field.
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(id)
	rows, err := s.r.QueryContext(ctx, `SELECT a.id, a.name, v.version, v.config FROM agent_versions v JOIN agents a ON a.id = v.agent_id
		WHERE v.workspace_id = $1 AND v.config LIKE $2 ESCAPE '\' ORDER BY a.created_at, a.id, v.version`, ws, `%"`+esc+`"%`)
	if err != nil {
		return fmt.Errorf("find agents using %s %s: %w", resource, id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var agentID, name, config string
		var version int
		if err := rows.Scan(&agentID, &name, &version, &config); err != nil {
			return err
		}
		var c domain.AgentConfig
		if err := json.Unmarshal([]byte(config), &c); err != nil {
			return fmt.Errorf("decode config of agent %s version %d: %w", agentID, version, err)
		}
		if slices.Contains(field(&c), id) {
			return &ConflictError{Message: fmt.Sprintf("%s %s is used by agent %q (%s), version %d",
				resource, id, name, agentID, version)}
		}
	}
	return rows.Err()
}

// envOf makes a nil Env encode as {} rather than null.
func envOf(e domain.Env) domain.Env {
	if e == nil {
		return domain.Env{}
	}
	return e
}

// emptyAsNull stores a missing or empty optional id as NULL.
func emptyAsNull(p *string) *string {
	if p == nil || *p == "" {
		return nil
	}
	return p
}

// nonNil makes a nil slice encode as [] rather than null.
func nonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}
