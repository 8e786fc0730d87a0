package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Agent types and statuses.
var (
	AgentTypes    = []string{"simple", "agent", "chain", "workflow", "multi_agent", "approval"}
	AgentStatuses = []string{"active", "inactive", "archived"}
)

// AgentConfig is what one agent version runs with. Unknown keys are kept in Extra so a newer
// client's settings survive a round trip.
type AgentConfig struct {
	Model           string          `json:"model"`
	SystemPrompt    string          `json:"system_prompt,omitempty"`
	PromptID        string          `json:"prompt_id,omitempty"`
	PromptVersionID string          `json:"prompt_version_id,omitempty"`
	Temperature     *float64        `json:"temperature,omitempty"`
	MaxTokens       int             `json:"max_tokens,omitempty"`
	MaxIterations   int             `json:"max_iterations,omitempty"`
	InputSchema     json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema    json.RawMessage `json:"output_schema,omitempty"`
	Tools           []string        `json:"tools,omitempty"`
	Guardrails      []string        `json:"guardrails,omitempty"`
	Approval        *ApprovalConfig `json:"approval,omitempty"`
	Steps           []AgentStep     `json:"steps,omitempty"`
	SubAgents       []string        `json:"sub_agents,omitempty"`
	Simulation      *Simulation     `json:"simulation,omitempty"`
}

// ApprovalConfig lists the human checkpoints of a run.
type ApprovalConfig struct {
	Checkpoints []Checkpoint `json:"checkpoints"`
}

// Checkpoint is one place where a run waits for a human decision.
type Checkpoint struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	When        string `json:"when"` // before_output | before_tools
}

// AgentStep is one step of a chain or workflow agent.
type AgentStep struct {
	ID          string   `json:"id"`
	Name        string   `json:"name,omitempty"`
	Instruction string   `json:"instruction,omitempty"`
	AgentID     string   `json:"agent_id,omitempty"`
	DependsOn   []string `json:"depends_on,omitempty"`
}

// Simulation tunes the simulated model for this version: latency per token and forced failure.
type Simulation struct {
	LatencyMS int    `json:"latency_ms,omitempty"`
	Fail      bool   `json:"fail,omitempty"`
	FailWith  string `json:"fail_message,omitempty"`
}

// Agent is a named, versioned agent definition; Config is that of its active version.
type Agent struct {
	ID              string       `json:"id"`
	WorkspaceID     string       `json:"workspace_id"`
	Name            string       `json:"name"`
	Description     string       `json:"description"`
	Type            string       `json:"type"`
	Status          string       `json:"status"`
	Tags            Strings      `json:"tags"`
	Metadata        JSONObject   `json:"metadata"`
	ActiveVersionID *string      `json:"active_version_id"`
	ActiveVersion   *int         `json:"active_version"`
	VersionCount    int          `json:"version_count"`
	Config          *AgentConfig `json:"config"`
	CreatedAt       Time         `json:"created_at"`
	UpdatedAt       Time         `json:"updated_at"`
}

// AgentVersion is one immutable configuration of an agent.
type AgentVersion struct {
	ID          string      `json:"id"`
	WorkspaceID string      `json:"workspace_id"`
	AgentID     string      `json:"agent_id"`
	Version     int         `json:"version"`
	Config      AgentConfig `json:"config"`
	Notes       string      `json:"notes"`
	IsActive    bool        `json:"is_active"`
	CreatedAt   Time        `json:"created_at"`
}

// AgentFilter narrows AgentList; empty fields match everything.
type AgentFilter struct {
	Type   string
	Status string
	Query  string // substring of name or description, case-insensitive
}

const agentColumns = `a.id, a.workspace_id, a.name, a.description, a.type, a.status, a.tags, a.metadata,
	a.active_version_id, v.version, a.version_seq, v.config, a.created_at, a.updated_at`

const agentFrom = ` FROM agents a LEFT JOIN agent_versions v ON v.id = a.active_version_id`

func scanAgent(row interface{ Scan(...any) error }) (*Agent, error) {
	var a Agent
	var activeVersion sql.NullInt64
	var config sql.NullString
	if err := row.Scan(&a.ID, &a.WorkspaceID, &a.Name, &a.Description, &a.Type, &a.Status, &a.Tags, &a.Metadata,
		&a.ActiveVersionID, &activeVersion, &a.VersionCount, &config, &a.CreatedAt, &a.UpdatedAt); err != nil {
		return nil, err
	}
	if activeVersion.Valid {
		n := int(activeVersion.Int64)
		a.ActiveVersion = &n
	}
	if config.Valid {
		a.Config = new(AgentConfig)
		if err := json.Unmarshal([]byte(config.String), a.Config); err != nil {
			return nil, fmt.Errorf("decode config of agent %s: %w", a.ID, err)
		}
	}
	return &a, nil
}

// AgentList returns one page of a workspace's agents, newest first, and the total count.
func (s *Store) AgentList(ctx context.Context, ws string, f AgentFilter, p Page) ([]*Agent, int, error) {
	where, args := whereClause("a", ws, []cond{
		{"a.type = $%d", f.Type},
		{"a.status = $%d", f.Status},
		{likeBoth("a.name", "a.description"), likePattern(f.Query)},
	})
	rows, err := s.r.QueryContext(ctx, "SELECT "+agentColumns+agentFrom+where+pageClause("a", p), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list agents: %w", err)
	}
	items, err := collect(rows, scanAgent)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "SELECT count(*) FROM agents a"+where, args)
	return items, total, err
}

// cachedAgent is an agent as read at an agents generation.
type cachedAgent struct {
	gen uint64
	a   *Agent
}

// AgentGet returns one agent of the workspace. On SQLite, reads outside a transaction are
// served from a cache that any commit writing the agents table invalidates; callers get
// their own copy of the struct (its maps and config are shared and must not be modified).
func (s *Store) AgentGet(ctx context.Context, ws, id string) (*Agent, error) {
	if s.agentCache == nil || s.inTx {
		return s.agentGet(ctx, ws, id)
	}
	key := ws + "\x00" + id
	gen := s.agentsGen.Load() // before the read: a write meanwhile makes this entry stale
	if v, ok := s.agentCache.Load(key); ok && v.(cachedAgent).gen == gen {
		a := *v.(cachedAgent).a
		return &a, nil
	}
	a, err := s.agentGet(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	s.agentCache.Store(key, cachedAgent{gen: gen, a: a})
	c := *a
	return &c, nil
}

func (s *Store) agentGet(ctx context.Context, ws, id string) (*Agent, error) {
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
func (s *Store) AgentCreate(ctx context.Context, a *Agent, config *AgentConfig, notes string) (*Agent, error) {
	if a.ID == "" {
		a.ID = NewID()
	}
	now := Now()
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
			v := &AgentVersion{WorkspaceID: a.WorkspaceID, AgentID: a.ID, Config: *config, Notes: notes}
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

// AgentPatch holds the fields of an agent to change; nil fields stay as they are.
type AgentPatch struct {
	Name        *string
	Description *string
	Status      *string
	Tags        *Strings
	Metadata    *JSONObject
}

// AgentUpdate changes the given fields of an agent.
func (s *Store) AgentUpdate(ctx context.Context, ws, id string, p AgentPatch) (*Agent, error) {
	err := s.update(ctx, "agent", "agents", ws, id, []set{
		{"name", p.Name}, {"description", p.Description}, {"status", p.Status}, {"tags", p.Tags}, {"metadata", p.Metadata},
	})
	if err != nil {
		return nil, err
	}
	return s.AgentGet(ctx, ws, id)
}

// AgentDelete removes an agent with its versions and returns it as it was.
func (s *Store) AgentDelete(ctx context.Context, ws, id string) (*Agent, error) {
	var a *Agent
	err := s.InTx(ctx, func(tx *Store) error {
		var err error
		if a, err = tx.AgentGet(ctx, ws, id); err != nil {
			return err
		}
		return tx.deleteRow(ctx, "agent", "agents", ws, id)
	})
	return a, err
}

const agentVersionColumns = `v.id, v.workspace_id, v.agent_id, v.version, v.config, v.notes, v.created_at,
	(a.active_version_id IS NOT NULL AND a.active_version_id = v.id)`

func scanAgentVersion(row interface{ Scan(...any) error }) (*AgentVersion, error) {
	var v AgentVersion
	if err := row.Scan(&v.ID, &v.WorkspaceID, &v.AgentID, &v.Version, jsonCol{&v.Config}, &v.Notes, &v.CreatedAt, &v.IsActive); err != nil {
		return nil, err
	}
	return &v, nil
}

// AgentVersionList returns one page of an agent's versions, newest first.
func (s *Store) AgentVersionList(ctx context.Context, ws, agentID string, p Page) ([]*AgentVersion, int, error) {
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
	total, err := s.listCount(ctx, p, len(items), "SELECT count(*) FROM agent_versions WHERE workspace_id = $1 AND agent_id = $2", []any{ws, agentID})
	return items, total, err
}

// AgentVersionGet returns one version of an agent.
func (s *Store) AgentVersionGet(ctx context.Context, ws, agentID, versionID string) (*AgentVersion, error) {
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
func (s *Store) AgentVersionCreate(ctx context.Context, v *AgentVersion) (*AgentVersion, error) {
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
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, v.ID, v.WorkspaceID, v.AgentID, v.Version, config, v.Notes, Now())
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
			versionID, Now(), ws, agentID)
		return err
	})
}

func likePattern(q string) string {
	q = strings.TrimSpace(q)
	if q == "" {
		return ""
	}
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + strings.ToLower(r.Replace(q)) + "%"
}
