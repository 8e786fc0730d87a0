package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
)

const evaluatorColumns = `id, workspace_id, name, description, type, config, score_name, score_config_id, data_type, created_at, updated_at`

func scanEvaluator(row interface{ Scan(...any) error }) (*domain.Evaluator, error) {
	var e domain.Evaluator
	if err := row.Scan(&e.ID, &e.WorkspaceID, &e.Name, &e.Description, &e.Type, &e.Config, &e.ScoreName, &e.ScoreConfigID,
		&e.DataType, &e.CreatedAt, &e.UpdatedAt); err != nil {
		return nil, err
	}
	if e.Config == nil {
		e.Config = domain.JSONObject{}
	}
	return &e, nil
}

// EvaluatorList returns one page of a workspace's evaluators, newest first, and the total count.
func (s *Store) EvaluatorList(ctx context.Context, ws string, f domain.EvaluatorFilter, p domain.Page) ([]*domain.Evaluator, int, error) {
	where, args := whereClause("", ws, []cond{{"type = $%d", f.Type}, {"name = $%d", f.Name},
		{likeBoth("name", "description"), likePattern(f.Query)}})
	return listPage(ctx, s, "evaluators", evaluatorColumns, where, args, "", p, scanEvaluator)
}

// EvaluatorGet returns one evaluator of the workspace.
func (s *Store) EvaluatorGet(ctx context.Context, ws, id string) (*domain.Evaluator, error) {
	return getByID(ctx, s, "evaluator", "evaluators", evaluatorColumns, ws, id, scanEvaluator)
}

// EvaluatorCreate inserts an evaluator (checked by the caller, package eval); a name already
// used in the workspace is a *ConflictError.
func (s *Store) EvaluatorCreate(ctx context.Context, e *domain.Evaluator) (*domain.Evaluator, error) {
	if e.ID == "" {
		e.ID = NewID()
	}
	_, err := s.exec(ctx, `INSERT INTO evaluators (id, workspace_id, name, description, type, config, score_name, score_config_id, data_type,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
		e.ID, e.WorkspaceID, e.Name, e.Description, e.Type, nonNilObject(e.Config), e.ScoreName, e.ScoreConfigID, e.DataType, domain.Now())
	if isUniqueViolation(err) {
		return nil, &ConflictError{Message: fmt.Sprintf("an evaluator named %q already exists in this workspace", e.Name)}
	}
	if err != nil {
		return nil, fmt.Errorf("insert evaluator: %w", err)
	}
	return s.EvaluatorGet(ctx, e.WorkspaceID, e.ID)
}

// EvaluatorReplace writes every changeable field of an evaluator (the caller merged a patch
// into the stored one and checked the result); a name already used is a *ConflictError.
func (s *Store) EvaluatorReplace(ctx context.Context, e *domain.Evaluator) (*domain.Evaluator, error) {
	var cfg = nonNilObject(e.Config)
	var scoreConfig = sql.NullString{String: domain.Deref(e.ScoreConfigID), Valid: e.ScoreConfigID != nil}
	err := s.update(ctx, "evaluator", "evaluators", e.WorkspaceID, e.ID, []set{
		{"name", &e.Name}, {"description", &e.Description}, {"type", &e.Type}, {"config", &cfg}, {"score_name", &e.ScoreName},
		{"score_config_id", &scoreConfig}, {"data_type", &e.DataType},
	})
	if isUniqueViolation(err) {
		return nil, &ConflictError{Message: fmt.Sprintf("an evaluator named %q already exists in this workspace", e.Name)}
	}
	if err != nil {
		return nil, err
	}
	return s.EvaluatorGet(ctx, e.WorkspaceID, e.ID)
}

// EvaluatorDelete removes an evaluator and returns it as it was; the scores it wrote stay.
func (s *Store) EvaluatorDelete(ctx context.Context, ws, id string) (*domain.Evaluator, error) {
	e, err := s.EvaluatorGet(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	return e, s.deleteRow(ctx, "evaluator", "evaluators", ws, id)
}
