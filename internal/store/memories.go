package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Memory is a piece of long-term knowledge kept for a workspace, or for one agent of it when
// AgentID is set; it is deleted with its agent.
type Memory struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	AgentID     *string    `json:"agent_id" doc:"The agent the memory belongs to; null for a workspace-wide memory."`
	Key         string     `json:"key" doc:"Optional lookup key, e.g. \"user.preferences\"."`
	Content     string     `json:"content"`
	Metadata    JSONObject `json:"metadata"`
	CreatedAt   Time       `json:"created_at"`
	UpdatedAt   Time       `json:"updated_at"`
}

// MemoryFilter narrows MemoryList; empty fields match everything.
type MemoryFilter struct {
	AgentID string
	Key     string // exact key
	Query   string // substring of key or content, case-insensitive
}

const memoryColumns = `id, workspace_id, agent_id, key, content, metadata, created_at, updated_at`

func scanMemory(row interface{ Scan(...any) error }) (*Memory, error) {
	var m Memory
	if err := row.Scan(&m.ID, &m.WorkspaceID, &m.AgentID, &m.Key, &m.Content, &m.Metadata, &m.CreatedAt, &m.UpdatedAt); err != nil {
		return nil, err
	}
	if m.Metadata == nil {
		m.Metadata = JSONObject{}
	}
	return &m, nil
}

// MemoryList returns one page of a workspace's memories, newest first, and the total count.
func (s *Store) MemoryList(ctx context.Context, ws string, f MemoryFilter, p Page) ([]*Memory, int, error) {
	where, args := whereClause("", ws, []cond{
		{"agent_id = $%d", f.AgentID},
		{"key = $%d", f.Key},
		{likeBoth("key", "content"), likePattern(f.Query)},
	})
	rows, err := s.r.QueryContext(ctx, "SELECT "+memoryColumns+" FROM memories"+where+pageClause("", p), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list memories: %w", err)
	}
	items, err := collect(rows, scanMemory)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "SELECT count(*) FROM memories"+where, args)
	return items, total, err
}

// MemoryGet returns one memory of the workspace.
func (s *Store) MemoryGet(ctx context.Context, ws, id string) (*Memory, error) {
	m, err := scanMemory(s.r.QueryRowContext(ctx, "SELECT "+memoryColumns+" FROM memories WHERE workspace_id = $1 AND id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("memory", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get memory %s: %w", id, err)
	}
	return m, nil
}

// MemoryCreate inserts a memory; a preset ID is kept.
func (s *Store) MemoryCreate(ctx context.Context, m *Memory) (*Memory, error) {
	if m.ID == "" {
		m.ID = NewID()
	}
	_, err := s.exec(ctx, `INSERT INTO memories (id, workspace_id, agent_id, key, content, metadata, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`, m.ID, m.WorkspaceID, emptyAsNull(m.AgentID), m.Key, m.Content, m.Metadata, Now())
	if err != nil {
		if isUniqueViolation(err) {
			return nil, &ConflictError{Message: fmt.Sprintf("memory %s already exists", m.ID)}
		}
		return nil, fmt.Errorf("insert memory: %w", err)
	}
	return s.MemoryGet(ctx, m.WorkspaceID, m.ID)
}

// MemoryPatch holds the fields of a memory to change; nil fields stay as they are. AgentID
// pointing to "" makes the memory workspace-wide.
type MemoryPatch struct {
	AgentID  *string
	Key      *string
	Content  *string
	Metadata *JSONObject
}

// MemoryUpdate changes the given fields of a memory.
func (s *Store) MemoryUpdate(ctx context.Context, ws, id string, p MemoryPatch) (*Memory, error) {
	var agent **string
	if p.AgentID != nil {
		agent = ptrTo(emptyAsNull(p.AgentID))
	}
	err := s.update(ctx, "memory", "memories", ws, id, []set{
		{"agent_id", agent}, {"key", p.Key}, {"content", p.Content}, {"metadata", p.Metadata},
	})
	if err != nil {
		return nil, err
	}
	return s.MemoryGet(ctx, ws, id)
}

// MemoryDelete removes a memory and returns it as it was.
func (s *Store) MemoryDelete(ctx context.Context, ws, id string) (*Memory, error) {
	var m *Memory
	err := s.InTx(ctx, func(tx *Store) error {
		var err error
		if m, err = tx.MemoryGet(ctx, ws, id); err != nil {
			return err
		}
		return tx.deleteRow(ctx, "memory", "memories", ws, id)
	})
	return m, err
}
