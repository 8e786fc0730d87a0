package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
)

const scoreConfigColumns = `id, workspace_id, name, data_type, min_value, max_value, categories, description, archived, created_at, updated_at`

func scanScoreConfig(row interface{ Scan(...any) error }) (*domain.ScoreConfig, error) {
	var c domain.ScoreConfig
	if err := row.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.DataType, &c.Min, &c.Max, jsonCol{&c.Categories}, &c.Description,
		&c.Archived, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return nil, err
	}
	c.Categories = nonNil(c.Categories)
	return &c, nil
}

// ScoreConfigList returns one page of a workspace's score configs, newest first, and the
// total count.
func (s *Store) ScoreConfigList(ctx context.Context, ws string, f domain.ScoreConfigFilter, p domain.Page) ([]*domain.ScoreConfig, int, error) {
	archived := cond{}
	if f.Archived != nil {
		archived = cond{sql: "(CASE WHEN archived THEN 'true' ELSE 'false' END) = $%d", arg: fmt.Sprint(*f.Archived)}
	}
	where, args := whereClause("", ws, []cond{
		{"data_type = $%d", f.DataType},
		archived,
		{likeBoth("name", "description"), likePattern(f.Query)},
	})
	return listPage(ctx, s, "score_configs", scoreConfigColumns, where, args, "", p, scanScoreConfig)
}

// ScoreConfigGet returns one score config of the workspace.
func (s *Store) ScoreConfigGet(ctx context.Context, ws, id string) (*domain.ScoreConfig, error) {
	return getByID(ctx, s, "score config", "score_configs", scoreConfigColumns, ws, id, scanScoreConfig)
}

// ScoreConfigCreate checks and inserts a score config; a name the workspace already uses is
// a *ConflictError.
func (s *Store) ScoreConfigCreate(ctx context.Context, c *domain.ScoreConfig) (*domain.ScoreConfig, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if c.ID == "" {
		c.ID = NewID()
	}
	cats, err := jsonValue(nonNil(c.Categories))
	if err != nil {
		return nil, fmt.Errorf("encode categories: %w", err)
	}
	_, err = s.exec(ctx, `INSERT INTO score_configs (id, workspace_id, name, data_type, min_value, max_value, categories, description, archived, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
		c.ID, c.WorkspaceID, c.Name, c.DataType, c.Min, c.Max, cats, c.Description, c.Archived, domain.Now())
	if isUniqueViolation(err) {
		return nil, s.scoreConfigNameTaken(ctx, c.WorkspaceID, c.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("insert score config: %w", err)
	}
	return s.ScoreConfigGet(ctx, c.WorkspaceID, c.ID)
}

// scoreConfigNameTaken is the conflict of a second config named name, naming the first.
func (s *Store) scoreConfigNameTaken(ctx context.Context, ws, name string) error {
	var id string
	if err := s.r.QueryRowContext(ctx, "SELECT id FROM score_configs WHERE workspace_id = $1 AND name = $2", ws, name).Scan(&id); err != nil {
		return &ConflictError{Message: fmt.Sprintf("name: a score config named %q already exists", name)}
	}
	return &ConflictError{Message: fmt.Sprintf("name: score config %s is already named %q; names are unique in a workspace", id, name)}
}

// ScoreConfigUpdate changes the given fields of a score config; the config they make must
// pass Check. Scores already given keep their values.
func (s *Store) ScoreConfigUpdate(ctx context.Context, ws, id string, p domain.ScoreConfigPatch) (*domain.ScoreConfig, error) {
	var out *domain.ScoreConfig
	err := s.InTx(ctx, func(tx *Store) error {
		c, err := tx.ScoreConfigGet(ctx, ws, id)
		if err != nil {
			return err
		}
		if p.Min != nil || p.ClearMin {
			c.Min = p.Min
		}
		if p.Max != nil || p.ClearMax {
			c.Max = p.Max
		}
		if p.Categories != nil {
			c.Categories = *p.Categories
		}
		if err := c.Check(); err != nil {
			return err
		}
		var cats *jsonArg
		if p.Categories != nil {
			cats = &jsonArg{nonNil(*p.Categories)}
		}
		var minV, maxV **float64
		if p.Min != nil || p.ClearMin {
			minV = &c.Min
		}
		if p.Max != nil || p.ClearMax {
			maxV = &c.Max
		}
		err = tx.update(ctx, "score config", "score_configs", ws, id, []set{
			{"name", p.Name}, {"description", p.Description}, {"archived", p.Archived},
			{"min_value", minV}, {"max_value", maxV}, {"categories", cats},
		})
		if isUniqueViolation(err) {
			return tx.scoreConfigNameTaken(ctx, ws, *p.Name)
		}
		if err != nil {
			return err
		}
		out, err = tx.ScoreConfigGet(ctx, ws, id)
		return err
	})
	return out, err
}

// applyUnconfigured checks a score given by name without a config: numeric needs a value and
// no label, categorical a label (its value is kept as sent, or null), boolean as with a config.
func applyUnconfigured(dataType string, value *float64, label *string) (*float64, *string, error) {
	switch dataType {
	case domain.ScoreNumeric:
		if label != nil {
			return nil, nil, &ValidationError{Field: "string_value", Message: "a numeric score has no string_value: send value"}
		}
		if value == nil {
			return nil, nil, &ValidationError{Field: "value", Message: "is required for a numeric score"}
		}
		return value, nil, nil
	case domain.ScoreCategorical:
		if label == nil || strings.TrimSpace(*label) == "" {
			return nil, nil, &ValidationError{Field: "string_value", Message: "is required for a categorical score: the category's label"}
		}
		return value, label, nil
	case domain.ScoreBoolean:
		return domain.ApplyBoolean(value, label)
	}
	return nil, nil, &ValidationError{Field: "data_type", Message: fmt.Sprintf("must be one of %s, got %q", strings.Join(domain.ScoreDataTypes, ", "), dataType)}
}
