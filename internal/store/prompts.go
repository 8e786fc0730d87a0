package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/jsonfields"
)

const promptColumns = `p.id, p.workspace_id, p.name, p.description, p.tags, p.metadata, p.active_version_id, v.version,
	(SELECT count(*) FROM prompt_versions c WHERE c.prompt_id = p.id), v.template, p.created_at, p.updated_at`

const promptFrom = ` FROM prompts p LEFT JOIN prompt_versions v ON v.id = p.active_version_id`

func scanPrompt(row interface{ Scan(...any) error }) (*domain.Prompt, error) {
	var p domain.Prompt
	var activeVersion sql.NullInt64
	var template sql.NullString
	if err := row.Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.Description, &p.Tags, &p.Metadata,
		&p.ActiveVersionID, &activeVersion, &p.VersionCount, &template, &p.CreatedAt, &p.UpdatedAt); err != nil {
		return nil, err
	}
	if activeVersion.Valid {
		n := int(activeVersion.Int64)
		p.ActiveVersion = &n
	}
	p.Template = template.String
	p.Variables = domain.TemplateVariables(p.Template)
	return &p, nil
}

// tagPattern matches one element of a tags column (a JSON array) with LIKE; "" for no filter.
func tagPattern(tag string) string {
	return strings.ToLower(jsonElementPattern(tag))
}

// PromptList returns one page of a workspace's prompts, newest first, and the total count.
func (s *Store) PromptList(ctx context.Context, ws string, f domain.PromptFilter, p domain.Page) ([]*domain.Prompt, int, error) {
	where, args := whereClause("p", ws, []cond{
		{likeBoth("p.name", "p.description"), likePattern(f.Query)},
		{`lower(p.tags) LIKE $%d ESCAPE '\'`, tagPattern(f.Tag)},
	})
	page, pargs := pageClause("p", p, args)
	rows, err := s.r.QueryContext(ctx, "SELECT "+promptColumns+promptFrom+where+page, pargs...)
	if err != nil {
		return nil, 0, fmt.Errorf("list prompts: %w", err)
	}
	items, err := collect(rows, scanPrompt)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "prompts p"+where, args)
	return items, total, err
}

// PromptGet returns one prompt of the workspace.
func (s *Store) PromptGet(ctx context.Context, ws, id string) (*domain.Prompt, error) {
	p, err := scanPrompt(s.r.QueryRowContext(ctx, "SELECT "+promptColumns+promptFrom+" WHERE p.workspace_id = $1 AND p.id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("prompt", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get prompt %s: %w", id, err)
	}
	return p, nil
}

// PromptCreate inserts a prompt (with p.ID when set). When first is non-nil it also creates
// version 1 from it and makes that version active, in the same transaction.
func (s *Store) PromptCreate(ctx context.Context, p *domain.Prompt, first *domain.PromptVersion) (*domain.Prompt, error) {
	if p.ID == "" {
		p.ID = NewID()
	}
	now := domain.Now()
	err := s.InTx(ctx, func(tx *Store) error {
		_, err := tx.exec(ctx, `INSERT INTO prompts (id, workspace_id, name, description, tags, metadata, version_seq, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $7)`,
			p.ID, p.WorkspaceID, p.Name, p.Description, p.Tags, p.Metadata, now)
		if err != nil {
			if isUniqueViolation(err) {
				return &ConflictError{Message: fmt.Sprintf("prompt %s already exists", p.ID)}
			}
			return fmt.Errorf("insert prompt: %w", err)
		}
		if first == nil {
			return nil
		}
		first.WorkspaceID, first.PromptID = p.WorkspaceID, p.ID
		v, err := tx.PromptVersionCreate(ctx, first)
		if err != nil {
			return err
		}
		return tx.PromptVersionPromote(ctx, p.WorkspaceID, p.ID, v.ID)
	})
	if err != nil {
		return nil, err
	}
	return s.PromptGet(ctx, p.WorkspaceID, p.ID)
}

// PromptUpdate changes the given fields of a prompt. Its template changes only through a new
// version that is then promoted.
func (s *Store) PromptUpdate(ctx context.Context, ws, id string, p domain.PromptPatch) (*domain.Prompt, error) {
	err := s.update(ctx, "prompt", "prompts", ws, id, []set{
		{"name", p.Name}, {"description", p.Description}, {"tags", p.Tags}, {"metadata", p.Metadata},
	})
	if err != nil {
		return nil, err
	}
	return s.PromptGet(ctx, ws, id)
}

// PromptDelete removes a prompt with its versions and returns it as it was. A prompt that a
// version of an agent refers to (config.prompt_id) is not deleted: that is a *ConflictError
// naming the agent.
func (s *Store) PromptDelete(ctx context.Context, ws, id string) (*domain.Prompt, error) {
	return deleteAsWas(ctx, s, "prompt", "prompts", ws, id, (*Store).PromptGet, func(tx *Store, _ *domain.Prompt) error {
		if err := tx.promptUnused(ctx, ws, id); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, "DELETE FROM prompt_versions WHERE workspace_id = $1 AND prompt_id = $2", ws, id); err != nil {
			return fmt.Errorf("delete versions of prompt %s: %w", id, err)
		}
		return nil
	})
}

// promptUnused returns a *ConflictError when an agent version's config names the prompt.
// LIKE narrows the candidates (it ignores case on SQLite); decoding the config decides.
func (s *Store) promptUnused(ctx context.Context, ws, id string) error {
	needle, _ := json.Marshal(id)
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	pattern := `%"prompt_id":` + r.Replace(string(needle)) + `%`
	rows, err := s.r.QueryContext(ctx, `SELECT agent_id, version, config FROM agent_versions
		WHERE workspace_id = $1 AND config LIKE $2 ESCAPE '\' ORDER BY agent_id, version`, ws, pattern)
	if err != nil {
		return fmt.Errorf("find agents using prompt %s: %w", id, err)
	}
	defer rows.Close()
	var users []string
	var firstVersion int
	for rows.Next() {
		var agentID, config string
		var version int
		if err := rows.Scan(&agentID, &version, &config); err != nil {
			return err
		}
		var cfg struct {
			PromptID string `json:"prompt_id"`
		}
		if err := json.Unmarshal([]byte(config), &cfg); err != nil || cfg.PromptID != id {
			continue
		}
		if len(users) == 0 {
			firstVersion = version
		}
		if len(users) == 0 || users[len(users)-1] != agentID {
			users = append(users, agentID)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(users) == 0 {
		return nil
	}
	msg := fmt.Sprintf("prompt %s is used by agent %s (version %d)", id, users[0], firstVersion)
	if n := len(users) - 1; n == 1 {
		msg += " and 1 other agent"
	} else if n > 1 {
		msg += fmt.Sprintf(" and %d other agents", n)
	}
	return &ConflictError{Message: msg + "; point those agent versions at another prompt or delete them first"}
}

const promptVersionColumns = `v.id, v.workspace_id, v.prompt_id, v.version, v.template, v.config, v.notes, v.created_at,
	(p.active_version_id IS NOT NULL AND p.active_version_id = v.id)`

const promptVersionFrom = ` FROM prompt_versions v JOIN prompts p ON p.id = v.prompt_id`

func scanPromptVersion(row interface{ Scan(...any) error }) (*domain.PromptVersion, error) {
	var v domain.PromptVersion
	if err := row.Scan(&v.ID, &v.WorkspaceID, &v.PromptID, &v.Version, &v.Template, &v.Config, &v.Notes, &v.CreatedAt, &v.IsActive); err != nil {
		return nil, err
	}
	if v.Config == nil {
		v.Config = domain.JSONObject{}
	}
	v.Variables = domain.TemplateVariables(v.Template)
	return &v, nil
}

// PromptVersionList returns one page of a prompt's versions, newest first.
func (s *Store) PromptVersionList(ctx context.Context, ws, promptID string, p domain.Page) ([]*domain.PromptVersion, int, error) {
	if _, err := s.PromptGet(ctx, ws, promptID); err != nil {
		return nil, 0, err
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+promptVersionColumns+promptVersionFrom+`
		WHERE v.workspace_id = $1 AND v.prompt_id = $2 ORDER BY v.version DESC`+limitClause(p), ws, promptID)
	if err != nil {
		return nil, 0, fmt.Errorf("list prompt versions: %w", err)
	}
	items, err := collect(rows, scanPromptVersion)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "prompt_versions WHERE workspace_id = $1 AND prompt_id = $2", []any{ws, promptID})
	return items, total, err
}

// PromptVersionGet returns one version of a prompt.
func (s *Store) PromptVersionGet(ctx context.Context, ws, promptID, versionID string) (*domain.PromptVersion, error) {
	v, err := scanPromptVersion(s.r.QueryRowContext(ctx, "SELECT "+promptVersionColumns+promptVersionFrom+`
		WHERE v.workspace_id = $1 AND v.prompt_id = $2 AND v.id = $3`, ws, promptID, versionID))
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := s.PromptGet(ctx, ws, promptID); err != nil {
			return nil, err
		}
		return nil, notFound("prompt version", versionID)
	}
	if err != nil {
		return nil, fmt.Errorf("get prompt version %s: %w", versionID, err)
	}
	return v, nil
}

// PromptVersionCreate adds the next version of a prompt without changing the active one.
// Version numbers come from a per-prompt counter, so they are never reused; a preset v.ID,
// and a v.Version past the counter, are kept (seed data and fixtures use them). The template
// must parse and the known config settings must be valid (*ValidationError, *ReferenceError).
func (s *Store) PromptVersionCreate(ctx context.Context, v *domain.PromptVersion) (*domain.PromptVersion, error) {
	if v.ID == "" {
		v.ID = NewID()
	}
	if v.Config == nil {
		v.Config = domain.JSONObject{}
	}
	if err := s.checkPromptVersion(ctx, v); err != nil {
		return nil, err
	}
	err := s.InTx(ctx, func(tx *Store) error {
		n, err := tx.nextVersion(ctx, "prompt", "prompts", v.WorkspaceID, v.PromptID, v.Version)
		if err != nil {
			return err
		}
		v.Version = n
		_, err = tx.exec(ctx, `INSERT INTO prompt_versions (id, workspace_id, prompt_id, version, template, config, notes, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, v.ID, v.WorkspaceID, v.PromptID, v.Version, v.Template, v.Config, v.Notes, domain.Now())
		if isUniqueViolation(err) {
			return &ConflictError{Message: fmt.Sprintf("prompt version %s or number %d already exists", v.ID, v.Version)}
		}
		if err != nil {
			return fmt.Errorf("insert prompt version: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.PromptVersionGet(ctx, v.WorkspaceID, v.PromptID, v.ID)
}

// checkPromptVersion applies the rules every prompt version obeys, whoever writes it: the
// template parses, the config has only known keys, and the settings the runtime reads
// (model, temperature, max_tokens) are valid.
func (s *Store) checkPromptVersion(ctx context.Context, v *domain.PromptVersion) error {
	if err := jsonfields.CheckKeys(v.Config, domain.PromptConfigKeys, "config"); err != nil {
		return &ValidationError{Field: err.Path, Message: err.Message()}
	}
	if strings.TrimSpace(v.Template) == "" {
		return &ValidationError{Field: "template", Message: "is required and must not be empty"}
	}
	if err := domain.CheckTemplate(v.Template); err != nil {
		return &ValidationError{Field: "template", Message: err.Error()}
	}
	if m, ok := v.Config["model"]; ok {
		id, isString := m.(string)
		if !isString || strings.TrimSpace(id) == "" {
			return &ValidationError{Field: "config.model", Message: "must be a model id from the catalog (GET /api/v1/llm-models)"}
		}
		if err := s.CheckRefs(ctx, v.WorkspaceID, domain.KindLLMModel, "config.model", id); err != nil {
			return err
		}
	}
	if t, ok := v.Config["temperature"]; ok {
		f, isNumber := number(t)
		if !isNumber || math.IsNaN(f) || f < 0 || f > 2 {
			return &ValidationError{Field: "config.temperature", Message: "must be a number between 0 and 2"}
		}
	}
	if mt, ok := v.Config["max_tokens"]; ok {
		f, isNumber := number(mt)
		if !isNumber || f != math.Trunc(f) || f < 1 || f > 1_000_000 {
			return &ValidationError{Field: "config.max_tokens", Message: "must be an integer between 1 and 1000000"}
		}
	}
	return nil
}

// number reads a JSON number, decoded (float64, json.Number) or set from Go code (int).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// PromptVersionPromote makes a version the prompt's active one.
func (s *Store) PromptVersionPromote(ctx context.Context, ws, promptID, versionID string) error {
	return s.InTx(ctx, func(tx *Store) error {
		ok, err := tx.PromptVersionBelongs(ctx, ws, promptID, versionID)
		if err != nil {
			return fmt.Errorf("promote prompt version %s: %w", versionID, err)
		}
		if !ok {
			if _, err := tx.PromptGet(ctx, ws, promptID); err != nil {
				return err
			}
			return notFound("prompt version", versionID)
		}
		if _, err := tx.exec(ctx, "UPDATE prompts SET active_version_id = $1, updated_at = $2 WHERE workspace_id = $3 AND id = $4",
			versionID, domain.Now(), ws, promptID); err != nil {
			return fmt.Errorf("promote prompt version %s: %w", versionID, err)
		}
		return nil
	})
}
