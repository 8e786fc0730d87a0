package store

import (
	"context"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
)

const guardrailColumns = `id, workspace_id, name, description, applies_to, action, enabled, scanners, created_at, updated_at`

func scanGuardrail(row interface{ Scan(...any) error }) (*domain.Guardrail, error) {
	var g domain.Guardrail
	if err := row.Scan(&g.ID, &g.WorkspaceID, &g.Name, &g.Description, &g.AppliesTo, &g.Action, &g.Enabled,
		jsonCol{&g.Scanners}, &g.CreatedAt, &g.UpdatedAt); err != nil {
		return nil, err
	}
	if g.Scanners == nil {
		g.Scanners = []domain.GuardrailScanner{}
	}
	for i := range g.Scanners {
		if g.Scanners[i].Config == nil {
			g.Scanners[i].Config = domain.JSONObject{}
		}
	}
	return &g, nil
}

// GuardrailList returns one page of a workspace's guardrails, newest first, and the total count.
func (s *Store) GuardrailList(ctx context.Context, ws string, f domain.GuardrailFilter, p domain.Page) ([]*domain.Guardrail, int, error) {
	where, args := whereClause("", ws, []cond{
		enabledCond(f.Enabled),
		{likeBoth("name", "description"), likePattern(f.Query)},
	})
	return listPage(ctx, s, "guardrails", guardrailColumns, where, args, "", p, scanGuardrail)
}

// GuardrailGet returns one guardrail of the workspace.
func (s *Store) GuardrailGet(ctx context.Context, ws, id string) (*domain.Guardrail, error) {
	return getByID(ctx, s, "guardrail", "guardrails", guardrailColumns, ws, id, scanGuardrail)
}

// GuardrailCreate inserts a guardrail; a preset ID (from seed data or fixtures) is kept.
func (s *Store) GuardrailCreate(ctx context.Context, g *domain.Guardrail) (*domain.Guardrail, error) {
	if g.ID == "" {
		g.ID = NewID()
	}
	scanners, err := jsonValue(nonNil(g.Scanners))
	if err != nil {
		return nil, fmt.Errorf("encode scanners: %w", err)
	}
	_, err = s.exec(ctx, `INSERT INTO guardrails (id, workspace_id, name, description, applies_to, action, enabled, scanners,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		g.ID, g.WorkspaceID, g.Name, g.Description, g.AppliesTo, g.Action, g.Enabled, scanners, domain.Now())
	if err != nil {
		if isUniqueViolation(err) {
			return nil, &ConflictError{Message: fmt.Sprintf("guardrail %s already exists", g.ID)}
		}
		return nil, fmt.Errorf("insert guardrail: %w", err)
	}
	return s.GuardrailGet(ctx, g.WorkspaceID, g.ID)
}

// GuardrailUpdate changes the given fields of a guardrail.
func (s *Store) GuardrailUpdate(ctx context.Context, ws, id string, p domain.GuardrailPatch) (*domain.Guardrail, error) {
	var scanners *jsonArg
	if p.Scanners != nil {
		scanners = &jsonArg{nonNil(*p.Scanners)}
	}
	err := s.update(ctx, "guardrail", "guardrails", ws, id, []set{
		{"name", p.Name}, {"description", p.Description}, {"applies_to", p.AppliesTo}, {"action", p.Action},
		{"enabled", p.Enabled}, {"scanners", scanners},
	})
	if err != nil {
		return nil, err
	}
	return s.GuardrailGet(ctx, ws, id)
}

// GuardrailDelete removes a guardrail and returns it as it was. It refuses with a
// *ConflictError while any agent version lists the guardrail in its guardrails.
func (s *Store) GuardrailDelete(ctx context.Context, ws, id string) (*domain.Guardrail, error) {
	return deleteAsWas(ctx, s, "guardrail", "guardrails", ws, id, (*Store).GuardrailGet, func(tx *Store, _ *domain.Guardrail) error {
		return tx.refuseIfConfigured(ctx, ws, "guardrail", id, func(c *domain.AgentConfig) []string { return c.Guardrails })
	})
}
