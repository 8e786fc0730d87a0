package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// LLMModel is an entry of the model catalog, shared by every workspace; prices are USD per
// million tokens and drive the cost of each execution.
type LLMModel struct {
	ID                    string  `json:"id"`
	Provider              string  `json:"provider"`
	Name                  string  `json:"name"`
	Description           string  `json:"description"`
	ContextWindow         int     `json:"context_window"`
	MaxOutputTokens       int     `json:"max_output_tokens"`
	InputPricePerMillion  float64 `json:"input_price_per_million"`
	OutputPricePerMillion float64 `json:"output_price_per_million"`
	Capabilities          Strings `json:"capabilities"`
	CreatedAt             Time    `json:"created_at"`
}

// LLMModelFilter narrows LLMModelList.
type LLMModelFilter struct {
	Provider   string
	Capability string
	Query      string
}

const llmModelColumns = `id, provider, name, description, context_window, max_output_tokens, input_price_per_million,
	output_price_per_million, capabilities, created_at`

func scanLLMModel(row interface{ Scan(...any) error }) (*LLMModel, error) {
	var m LLMModel
	err := row.Scan(&m.ID, &m.Provider, &m.Name, &m.Description, &m.ContextWindow, &m.MaxOutputTokens,
		&m.InputPricePerMillion, &m.OutputPricePerMillion, &m.Capabilities, &m.CreatedAt)
	return &m, err
}

// LLMModelList returns one page of the catalog, ordered by provider then id.
func (s *Store) LLMModelList(ctx context.Context, f LLMModelFilter, p Page) ([]*LLMModel, int, error) {
	where := " WHERE 1 = 1"
	var args []any
	if f.Provider != "" {
		args = append(args, f.Provider)
		where += fmt.Sprintf(" AND provider = $%d", len(args))
	}
	if f.Capability != "" {
		args = append(args, `%"`+f.Capability+`"%`)
		where += fmt.Sprintf(" AND capabilities LIKE $%d", len(args))
	}
	if q := likePattern(f.Query); q != "" {
		args = append(args, q)
		where += fmt.Sprintf(" AND "+likeBoth("id", "name"), len(args))
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+llmModelColumns+" FROM llm_models"+where+" ORDER BY provider, id"+limitClause(p), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list llm models: %w", err)
	}
	items, err := collect(rows, scanLLMModel)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "SELECT count(*) FROM llm_models"+where, args)
	return items, total, err
}

// LLMModelGet returns one catalog entry.
func (s *Store) LLMModelGet(ctx context.Context, id string) (*LLMModel, error) {
	m, err := scanLLMModel(s.r.QueryRowContext(ctx, "SELECT "+llmModelColumns+" FROM llm_models WHERE id = $1", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("llm model", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get llm model %s: %w", id, err)
	}
	return m, nil
}

// LLMModelUpsert inserts a catalog entry or replaces the one with its id.
func (s *Store) LLMModelUpsert(ctx context.Context, m *LLMModel) error {
	if m.CreatedAt.IsZero() {
		m.CreatedAt = Now()
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
