package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
)

const agentColumns = `a.id, a.workspace_id, a.name, a.description, a.type, a.status, a.tags, a.metadata,
	a.active_version_id, v.version, a.version_seq, v.config, a.created_at, a.updated_at, a.webhook_url, a.webhook_secret IS NOT NULL`

const agentFrom = ` FROM agents a LEFT JOIN agent_versions v ON v.id = a.active_version_id`

func scanAgent(row interface{ Scan(...any) error }) (*domain.Agent, error) {
	var a domain.Agent
	var activeVersion sql.NullInt64
	var config sql.NullString
	if err := row.Scan(&a.ID, &a.WorkspaceID, &a.Name, &a.Description, &a.Type, &a.Status, &a.Tags, &a.Metadata,
		&a.ActiveVersionID, &activeVersion, &a.VersionCount, &config, &a.CreatedAt, &a.UpdatedAt, &a.WebhookURL, &a.WebhookSecretSet); err != nil {
		return nil, err
	}
	if activeVersion.Valid {
		n := int(activeVersion.Int64)
		a.ActiveVersion = &n
	}
	if config.Valid {
		a.Config = new(domain.AgentConfig)
		if err := json.Unmarshal([]byte(config.String), a.Config); err != nil {
			return nil, fmt.Errorf("decode config of agent %s: %w", a.ID, err)
		}
	}
	return &a, nil
}

// AgentList returns one page of a workspace's agents, newest first, and the total count.
func (s *Store) AgentList(ctx context.Context, ws string, f domain.AgentFilter, p domain.Page) ([]*domain.Agent, int, error) {
	where, args := whereClause("a", ws, []cond{
		{"a.type = $%d", f.Type},
		{"a.status = $%d", f.Status},
		{likeBoth("a.name", "a.description"), likePattern(f.Query)},
	})
	page, pargs := pageClause("a", p, args)
	rows, err := s.r.QueryContext(ctx, "SELECT "+agentColumns+agentFrom+where+page, pargs...)
	if err != nil {
		return nil, 0, fmt.Errorf("list agents: %w", err)
	}
	items, err := collect(rows, scanAgent)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "agents a"+where, args)
	return items, total, err
}

// AgentGet returns one agent of the workspace.
func (s *Store) AgentGet(ctx context.Context, ws, id string) (*domain.Agent, error) {
	a, err := scanAgent(s.r.QueryRowContext(ctx, "SELECT "+agentColumns+agentFrom+" WHERE a.workspace_id = $1 AND a.id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("agent", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get agent %s: %w", id, err)
	}
	return a, nil
}

// AgentCreate inserts an agent. When config is non-nil it also creates version 1 from it and
// makes that version active, in the same transaction.
func (s *Store) AgentCreate(ctx context.Context, a *domain.Agent, config *domain.AgentConfig, notes string) (*domain.Agent, error) {
	if a.ID == "" {
		a.ID = NewID()
	}
	now := domain.Now()
	err := s.InTx(ctx, func(tx *Store) error {
		_, err := tx.exec(ctx, `INSERT INTO agents (id, workspace_id, name, description, type, status, tags, metadata,
			version_seq, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, $9)`,
			a.ID, a.WorkspaceID, a.Name, a.Description, a.Type, a.Status, a.Tags, a.Metadata, now)
		if err != nil {
			if isUniqueViolation(err) {
				return &ConflictError{Message: fmt.Sprintf("agent %s already exists", a.ID)}
			}
			return fmt.Errorf("insert agent: %w", err)
		}
		if config != nil {
			v := &domain.AgentVersion{WorkspaceID: a.WorkspaceID, AgentID: a.ID, Config: *config, Notes: notes}
			if _, err := tx.AgentVersionCreate(ctx, v); err != nil {
				return err
			}
			return tx.AgentVersionPromote(ctx, a.WorkspaceID, a.ID, v.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.AgentGet(ctx, a.WorkspaceID, a.ID)
}

// AgentUpdate changes the given fields of an agent.
func (s *Store) AgentUpdate(ctx context.Context, ws, id string, p domain.AgentPatch) (*domain.Agent, error) {
	err := s.update(ctx, "agent", "agents", ws, id, []set{
		{"name", p.Name}, {"description", p.Description}, {"status", p.Status}, {"tags", p.Tags}, {"metadata", p.Metadata},
	})
	if err != nil {
		return nil, err
	}
	return s.AgentGet(ctx, ws, id)
}

// AgentDelete removes an agent with its versions and returns it as it was.
func (s *Store) AgentDelete(ctx context.Context, ws, id string) (*domain.Agent, error) {
	return deleteAsWas(ctx, s, "agent", "agents", ws, id, (*Store).AgentGet, nil)
}

const agentVersionColumns = `v.id, v.workspace_id, v.agent_id, v.version, v.config, v.notes, v.created_at,
	(a.active_version_id IS NOT NULL AND a.active_version_id = v.id)`

func scanAgentVersion(row interface{ Scan(...any) error }) (*domain.AgentVersion, error) {
	var v domain.AgentVersion
	if err := row.Scan(&v.ID, &v.WorkspaceID, &v.AgentID, &v.Version, jsonCol{&v.Config}, &v.Notes, &v.CreatedAt, &v.IsActive); err != nil {
		return nil, err
	}
	return &v, nil
}

// AgentVersionList returns one page of an agent's versions, newest first.
func (s *Store) AgentVersionList(ctx context.Context, ws, agentID string, p domain.Page) ([]*domain.AgentVersion, int, error) {
	if _, err := s.AgentGet(ctx, ws, agentID); err != nil {
		return nil, 0, err
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+agentVersionColumns+` FROM agent_versions v JOIN agents a ON a.id = v.agent_id
		WHERE v.workspace_id = $1 AND v.agent_id = $2 ORDER BY v.version DESC`+limitClause(p), ws, agentID)
	if err != nil {
		return nil, 0, fmt.Errorf("list agent versions: %w", err)
	}
	items, err := collect(rows, scanAgentVersion)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "agent_versions WHERE workspace_id = $1 AND agent_id = $2", []any{ws, agentID})
	return items, total, err
}

// AgentVersionGet returns one version of an agent.
func (s *Store) AgentVersionGet(ctx context.Context, ws, agentID, versionID string) (*domain.AgentVersion, error) {
	v, err := scanAgentVersion(s.r.QueryRowContext(ctx, "SELECT "+agentVersionColumns+` FROM agent_versions v JOIN agents a ON a.id = v.agent_id
		WHERE v.workspace_id = $1 AND v.agent_id = $2 AND v.id = $3`, ws, agentID, versionID))
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := s.AgentGet(ctx, ws, agentID); err != nil {
			return nil, err
		}
		return nil, notFound("agent version", versionID)
	}
	if err != nil {
		return nil, fmt.Errorf("get agent version %s: %w", versionID, err)
	}
	return v, nil
}

// AgentVersionCreate adds the next version of an agent without changing the active one.
// Version numbers come from a per-agent counter, so they are never reused.
func (s *Store) AgentVersionCreate(ctx context.Context, v *domain.AgentVersion) (*domain.AgentVersion, error) {
	if v.ID == "" {
		v.ID = NewID()
	}
	config, err := jsonValue(v.Config)
	if err != nil {
		return nil, err
	}
	err = s.InTx(ctx, func(tx *Store) error {
		n, err := tx.nextVersion(ctx, "agent", "agents", v.WorkspaceID, v.AgentID, v.Version)
		if err != nil {
			return err
		}
		v.Version = n
		_, err = tx.exec(ctx, `INSERT INTO agent_versions (id, workspace_id, agent_id, version, config, notes, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, v.ID, v.WorkspaceID, v.AgentID, v.Version, config, v.Notes, domain.Now())
		if isUniqueViolation(err) {
			return &ConflictError{Message: fmt.Sprintf("agent version %s or number %d already exists", v.ID, v.Version)}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.AgentVersionGet(ctx, v.WorkspaceID, v.AgentID, v.ID)
}

// AgentVersionPromote makes a version the agent's active one.
func (s *Store) AgentVersionPromote(ctx context.Context, ws, agentID, versionID string) error {
	return s.InTx(ctx, func(tx *Store) error {
		if _, err := tx.AgentVersionGet(ctx, ws, agentID, versionID); err != nil {
			return err
		}
		_, err := tx.exec(ctx, "UPDATE agents SET active_version_id = $1, updated_at = $2 WHERE workspace_id = $3 AND id = $4",
			versionID, domain.Now(), ws, agentID)
		return err
	})
}

// AgentsNamed returns the workspace's agents with exactly this name, newest first, at most
// two: names are not unique, and a caller addressing an agent by name needs to know when
// the name is ambiguous.
func (s *Store) AgentsNamed(ctx context.Context, ws, name string) ([]*domain.Agent, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+agentColumns+agentFrom+
		" WHERE a.workspace_id = $1 AND a.name = $2 ORDER BY a.created_at DESC, a.id DESC LIMIT 2", ws, name)
	if err != nil {
		return nil, fmt.Errorf("find agents named %q: %w", name, err)
	}
	return collect(rows, scanAgent)
}

// AgentVersionNumbered returns version number n of an agent.
func (s *Store) AgentVersionNumbered(ctx context.Context, ws, agentID string, n int) (*domain.AgentVersion, error) {
	v, err := scanAgentVersion(s.r.QueryRowContext(ctx, "SELECT "+agentVersionColumns+` FROM agent_versions v JOIN agents a ON a.id = v.agent_id
		WHERE v.workspace_id = $1 AND v.agent_id = $2 AND v.version = $3`, ws, agentID, n))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("agent version", fmt.Sprintf("%s@%d", agentID, n))
	}
	if err != nil {
		return nil, fmt.Errorf("get version %d of agent %s: %w", n, agentID, err)
	}
	return v, nil
}
