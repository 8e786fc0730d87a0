package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
)

// CheckRefs returns a *ReferenceError for the first of ids that is not a resource of kind in
// the workspace (the model catalog is shared by every workspace). field names the request
// field, and "[i]" is appended for lists of more than one id.
func (s *Store) CheckRefs(ctx context.Context, ws string, kind domain.Kind, field string, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	var missing []string
	var err error
	if kind == domain.KindLLMModel {
		missing, err = s.missingModelIDs(ctx, ws, ids)
	} else {
		missing, err = s.missingIDs(ctx, kindTable(kind), ws, ids)
	}
	if err != nil || len(missing) == 0 {
		return err
	}
	for i, id := range ids {
		if id == missing[0] {
			f := field
			if len(ids) > 1 || field != "" && field[len(field)-1] == 's' {
				f = fmt.Sprintf("%s[%d]", field, i)
			}
			return &ReferenceError{Field: f, Resource: string(kind), ID: id}
		}
	}
	return nil
}

// missingModelIDs returns those of ids that are neither catalog models nor models of the
// workspace, in order.
func (s *Store) missingModelIDs(ctx context.Context, ws string, ids []string) ([]string, error) {
	var missing []string
	for _, id := range ids {
		var x int
		err := s.r.QueryRowContext(ctx, "SELECT 1 FROM "+modelsUnion+" WHERE id = $2", ws, id).Scan(&x)
		if errors.Is(err, sql.ErrNoRows) {
			missing = append(missing, id)
		} else if err != nil {
			return nil, fmt.Errorf("check llm model ids: %w", err)
		}
	}
	return missing, nil
}

// PromptVersionBelongs reports whether versionID is a version of promptID in the workspace.
func (s *Store) PromptVersionBelongs(ctx context.Context, ws, promptID, versionID string) (bool, error) {
	var x int
	err := s.r.QueryRowContext(ctx, "SELECT 1 FROM prompt_versions WHERE workspace_id = $1 AND prompt_id = $2 AND id = $3",
		ws, promptID, versionID).Scan(&x)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// PromptTemplate returns the template text of a prompt's version: versionID, or the prompt's
// active version when versionID is empty.
func (s *Store) PromptTemplate(ctx context.Context, ws, promptID, versionID string) (string, error) {
	var text string
	var err error
	if versionID != "" {
		err = s.r.QueryRowContext(ctx, "SELECT template FROM prompt_versions WHERE workspace_id = $1 AND prompt_id = $2 AND id = $3",
			ws, promptID, versionID).Scan(&text)
	} else {
		err = s.r.QueryRowContext(ctx, `SELECT v.template FROM prompts p JOIN prompt_versions v ON v.id = p.active_version_id
			WHERE p.workspace_id = $1 AND p.id = $2`, ws, promptID).Scan(&text)
	}
	if errors.Is(err, sql.ErrNoRows) {
		if versionID != "" {
			return "", notFound("prompt version", versionID)
		}
		return "", notFound("prompt", promptID)
	}
	if err != nil {
		return "", fmt.Errorf("read prompt %s template: %w", promptID, err)
	}
	return text, nil
}
