package seed

import (
	"context"
	"encoding/json"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/guardrail"
	"github.com/agentplane/agentplane/internal/mcpspec"
)

// mcpToolEntry is one entry of mcp_tools.json.
type mcpToolEntry struct {
	ID           string              `json:"id"`
	Name         string              `json:"name"`
	Description  string              `json:"description"`
	Transport    string              `json:"transport"`
	Command      string              `json:"command"`
	Args         []string            `json:"args"`
	Env          domain.Env          `json:"env"`
	URL          string              `json:"url"`
	CredentialID *string             `json:"credential_id"`
	Enabled      *bool               `json:"enabled"` // defaults to true
	Tools        []domain.MCPToolDef `json:"tools"`
}

// mcpTool loads one MCP server, checked by the same rules as the API; its credential must
// already be loaded.
func (l *loader) mcpTool(ctx context.Context, e json.RawMessage) error {
	var m mcpToolEntry
	if err := strict(e, &m); err != nil {
		return err
	}
	t := &domain.MCPTool{ID: m.ID, WorkspaceID: l.ws, Name: m.Name, Description: m.Description, Transport: mcpspec.NormalizeTransport(m.Transport),
		Command: m.Command, Args: m.Args, Env: m.Env, URL: m.URL, CredentialID: m.CredentialID, Enabled: m.Enabled == nil || *m.Enabled, Tools: m.Tools}
	if err := mcpspec.Validate(ctx, l.st, l.ws, t); err != nil {
		return err
	}
	if err := mcpspec.ValidateTools(t.Tools); err != nil {
		return err
	}
	_, err := l.st.MCPToolCreate(ctx, t)
	return err
}

// guardrailEntry is one entry of guardrails.json.
type guardrailEntry struct {
	ID          string                    `json:"id"`
	Name        string                    `json:"name"`
	Description string                    `json:"description"`
	AppliesTo   string                    `json:"applies_to"`
	Action      string                    `json:"action"`
	Enabled     *bool                     `json:"enabled"` // defaults to true
	Scanners    []domain.GuardrailScanner `json:"scanners"`
}

// guardrail loads one guardrail, checked by the same rules as the API.
func (l *loader) guardrail(ctx context.Context, e json.RawMessage) error {
	var g guardrailEntry
	if err := strict(e, &g); err != nil {
		return err
	}
	for i := range g.Scanners {
		if g.Scanners[i].Config == nil {
			g.Scanners[i].Config = domain.JSONObject{}
		}
	}
	gr := &domain.Guardrail{ID: g.ID, WorkspaceID: l.ws, Name: g.Name, Description: g.Description, AppliesTo: g.AppliesTo,
		Action: g.Action, Enabled: g.Enabled == nil || *g.Enabled, Scanners: g.Scanners}
	if err := guardrail.Validate(gr); err != nil {
		return err
	}
	_, err := l.st.GuardrailCreate(ctx, gr)
	return err
}
