package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// GuardrailScanner is one check of a guardrail: a scanner type of package guardrail and its
// options.
type GuardrailScanner struct {
	Type   string     `json:"type" required:"true"`
	Config JSONObject `json:"config"`
}

// Guardrail is a named set of scanners run on an agent's input, output or both; agent configs
// list its id in "guardrails".
type Guardrail struct {
	ID          string             `json:"id"`
	WorkspaceID string             `json:"workspace_id"`
	Name        string             `json:"name"`
	Description string             `json:"description"`
	AppliesTo   string             `json:"applies_to" enum:"input,output,both"`
	Action      string             `json:"action" enum:"block,warn,redact" doc:"What happens when a scanner fails, unless the scanner's config.action says otherwise."`
	Enabled     bool               `json:"enabled"`
	Scanners    []GuardrailScanner `json:"scanners"`
	CreatedAt   Time               `json:"created_at"`
	UpdatedAt   Time               `json:"updated_at"`
}

// GuardrailFilter narrows GuardrailList; zero fields match everything.
type GuardrailFilter struct {
	Enabled *bool
	Query   string // substring of name or description, case-insensitive
}

const guardrailColumns = `id, workspace_id, name, description, applies_to, action, enabled, scanners, created_at, updated_at`

func scanGuardrail(row interface{ Scan(...any) error }) (*Guardrail, error) {
	var g Guardrail
	if err := row.Scan(&g.ID, &g.WorkspaceID, &g.Name, &g.Description, &g.AppliesTo, &g.Action, &g.Enabled,
		jsonCol{&g.Scanners}, &g.CreatedAt, &g.UpdatedAt); err != nil {
		return nil, err
	}
	if g.Scanners == nil {
		g.Scanners = []GuardrailScanner{}
	}
	for i := range g.Scanners {
		if g.Scanners[i].Config == nil {
			g.Scanners[i].Config = JSONObject{}
		}
	}
	return &g, nil
}

// GuardrailList returns one page of a workspace's guardrails, newest first, and the total count.
func (s *Store) GuardrailList(ctx context.Context, ws string, f GuardrailFilter, p Page) ([]*Guardrail, int, error) {
	where, args := whereClause("", ws, []cond{
		enabledCond(f.Enabled),
		{likeBoth("name", "description"), likePattern(f.Query)},
	})
	q, qargs := pagedSelect(guardrailColumns, "guardrails", where, args, p)
	rows, err := s.r.QueryContext(ctx, q, qargs...)
	if err != nil {
		return nil, 0, fmt.Errorf("list guardrails: %w", err)
	}
	items, err := collect(rows, scanGuardrail)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "guardrails"+where, args)
	return items, total, err
}

// GuardrailGet returns one guardrail of the workspace.
func (s *Store) GuardrailGet(ctx context.Context, ws, id string) (*Guardrail, error) {
	g, err := scanGuardrail(s.r.QueryRowContext(ctx, "SELECT "+guardrailColumns+" FROM guardrails WHERE workspace_id = $1 AND id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("guardrail", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get guardrail %s: %w", id, err)
	}
	return g, nil
}

// GuardrailCreate inserts a guardrail; a preset ID (from seed data or fixtures) is kept.
func (s *Store) GuardrailCreate(ctx context.Context, g *Guardrail) (*Guardrail, error) {
	if g.ID == "" {
		g.ID = NewID()
	}
	scanners, err := jsonValue(nonNil(g.Scanners))
	if err != nil {
		return nil, fmt.Errorf("encode scanners: %w", err)
	}
	_, err = s.exec(ctx, `INSERT INTO guardrails (id, workspace_id, name, description, applies_to, action, enabled, scanners,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		g.ID, g.WorkspaceID, g.Name, g.Description, g.AppliesTo, g.Action, g.Enabled, scanners, Now())
	if err != nil {
		if isUniqueViolation(err) {
			return nil, &ConflictError{Message: fmt.Sprintf("guardrail %s already exists", g.ID)}
		}
		return nil, fmt.Errorf("insert guardrail: %w", err)
	}
	return s.GuardrailGet(ctx, g.WorkspaceID, g.ID)
}

// GuardrailPatch holds the fields of a guardrail to change; nil fields stay as they are.
type GuardrailPatch struct {
	Name        *string
	Description *string
	AppliesTo   *string
	Action      *string
	Enabled     *bool
	Scanners    *[]GuardrailScanner
}

// GuardrailUpdate changes the given fields of a guardrail.
func (s *Store) GuardrailUpdate(ctx context.Context, ws, id string, p GuardrailPatch) (*Guardrail, error) {
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
func (s *Store) GuardrailDelete(ctx context.Context, ws, id string) (*Guardrail, error) {
	var g *Guardrail
	err := s.InTx(ctx, func(tx *Store) error {
		var err error
		if g, err = tx.GuardrailGet(ctx, ws, id); err != nil {
			return err
		}
		if err := tx.refuseIfConfigured(ctx, ws, "guardrail", id, func(c *AgentConfig) []string { return c.Guardrails }); err != nil {
			return err
		}
		return tx.deleteRow(ctx, "guardrail", "guardrails", ws, id)
	})
	return g, err
}
