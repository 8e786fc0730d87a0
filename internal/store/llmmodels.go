package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
)

const llmModelColumns = `id, provider, name, description, context_window, max_output_tokens, input_price_per_million,
	output_price_per_million, capabilities, created_at`

// modelsUnion is the catalog and one workspace's models ($1) as one relation.
const modelsUnion = `(SELECT ` + llmModelColumns + `, created_at AS updated_at, 'catalog' AS source FROM llm_models
	UNION ALL SELECT ` + llmModelColumns + `, updated_at, 'workspace' AS source FROM workspace_llm_models WHERE workspace_id = $1) m`

func scanLLMModel(row interface{ Scan(...any) error }) (*domain.LLMModel, error) {
	var m domain.LLMModel
	err := row.Scan(&m.ID, &m.Provider, &m.Name, &m.Description, &m.ContextWindow, &m.MaxOutputTokens,
		&m.InputPricePerMillion, &m.OutputPricePerMillion, &m.Capabilities, &m.CreatedAt, &m.UpdatedAt, &m.Source)
	return &m, err
}

// LLMModelList returns one page of the catalog and the workspace's own models, ordered by
// provider then id.
func (s *Store) LLMModelList(ctx context.Context, ws string, f domain.LLMModelFilter, p domain.Page) ([]*domain.LLMModel, int, error) {
	where := " WHERE 1 = 1"
	args := []any{ws}
	if f.Provider != "" {
		args = append(args, f.Provider)
		where += fmt.Sprintf(" AND provider = $%d", len(args))
	}
	if c := jsonElementPattern(f.Capability); c != "" {
		args = append(args, c)
		where += fmt.Sprintf(` AND capabilities LIKE $%d ESCAPE '\'`, len(args))
	}
	if q := likePattern(f.Query); q != "" {
		args = append(args, q)
		where += fmt.Sprintf(" AND "+likeBoth("id", "name"), len(args))
	}
	if f.Source != "" {
		args = append(args, f.Source)
		where += fmt.Sprintf(" AND source = $%d", len(args))
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+llmModelColumns+", updated_at, source FROM "+modelsUnion+where+" ORDER BY provider, id, source"+limitClause(p), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list llm models: %w", err)
	}
	items, err := collect(rows, scanLLMModel)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), modelsUnion+where, args)
	return items, total, err
}

// LLMModelGet returns the model a workspace means by id: the catalog entry, else the
// workspace's own (a workspace cannot register a catalog id, see LLMModelCreate).
func (s *Store) LLMModelGet(ctx context.Context, ws, id string) (*domain.LLMModel, error) {
	m, err := scanLLMModel(s.r.QueryRowContext(ctx, "SELECT "+llmModelColumns+", updated_at, source FROM "+modelsUnion+
		" WHERE id = $2 ORDER BY source LIMIT 1", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("llm model", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get llm model %s: %w", id, err)
	}
	return m, nil
}

// LLMModelUpsert inserts a catalog entry or replaces the one with its id.
func (s *Store) LLMModelUpsert(ctx context.Context, m *domain.LLMModel) error {
	if m.CreatedAt.IsZero() {
		m.CreatedAt = domain.Now()
	}
	_, err := s.exec(ctx, `INSERT INTO llm_models (`+llmModelColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (id) DO UPDATE SET provider = excluded.provider, name = excluded.name, description = excluded.description,
		context_window = excluded.context_window, max_output_tokens = excluded.max_output_tokens,
		input_price_per_million = excluded.input_price_per_million, output_price_per_million = excluded.output_price_per_million,
		capabilities = excluded.capabilities`,
		m.ID, m.Provider, m.Name, m.Description, m.ContextWindow, m.MaxOutputTokens, m.InputPricePerMillion,
		m.OutputPricePerMillion, m.Capabilities, m.CreatedAt)
	if err != nil {
		return fmt.Errorf("upsert llm model %s: %w", m.ID, err)
	}
	return nil
}

// LLMModelCreate registers a model of workspace ws. An id of the catalog, or one the
// workspace registered already, is a *ConflictError.
func (s *Store) LLMModelCreate(ctx context.Context, ws string, m *domain.LLMModel) (*domain.LLMModel, error) {
	err := s.InTx(ctx, func(tx *Store) error {
		var x int
		err := tx.w.QueryRowContext(ctx, "SELECT 1 FROM llm_models WHERE id = $1", m.ID).Scan(&x)
		if err == nil {
			return &ConflictError{Message: fmt.Sprintf("llm model %s is a built-in catalog model; register the workspace model under another id", m.ID)}
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("check llm model %s: %w", m.ID, err)
		}
		now := domain.Now()
		_, err = tx.exec(ctx, `INSERT INTO workspace_llm_models (workspace_id, `+llmModelColumns+`, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
			ws, m.ID, m.Provider, m.Name, m.Description, m.ContextWindow, m.MaxOutputTokens, m.InputPricePerMillion,
			m.OutputPricePerMillion, m.Capabilities, now)
		if isUniqueViolation(err) {
			return &ConflictError{Message: fmt.Sprintf("llm model %s already exists in this workspace", m.ID)}
		}
		if err != nil {
			return fmt.Errorf("insert llm model %s: %w", m.ID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.LLMModelGet(ctx, ws, m.ID)
}

// LLMModelUpdate changes a workspace model (catalog entries are not the workspace's: not found).
func (s *Store) LLMModelUpdate(ctx context.Context, ws, id string, p domain.LLMModelPatch) (*domain.LLMModel, error) {
	var caps *jsonArg
	if p.Capabilities != nil {
		caps = &jsonArg{v: []string(*p.Capabilities)}
	}
	err := s.update(ctx, "llm model", "workspace_llm_models", ws, id, []set{
		{"provider", p.Provider}, {"name", p.Name}, {"description", p.Description}, {"context_window", p.ContextWindow},
		{"max_output_tokens", p.MaxOutputTokens}, {"input_price_per_million", p.InputPricePerMillion},
		{"output_price_per_million", p.OutputPricePerMillion}, {"capabilities", caps},
	})
	if err != nil {
		return nil, err
	}
	return s.LLMModelGet(ctx, ws, id)
}

// LLMModelDelete removes a workspace model and returns it as it was.
func (s *Store) LLMModelDelete(ctx context.Context, ws, id string) (*domain.LLMModel, error) {
	return deleteAsWas(ctx, s, "llm model", "workspace_llm_models", ws, id, (*Store).LLMModelGet, nil)
}
