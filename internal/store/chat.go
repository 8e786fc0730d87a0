package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/agentplane/agentplane/internal/domain"
)

const chatSessionColumns = `id, workspace_id, agent_id, title, metadata, user_id, end_user_id, message_count, active_execution_id,
	last_message_at, created_at, updated_at`

func scanChatSession(row interface{ Scan(...any) error }) (*domain.ChatSession, error) {
	var c domain.ChatSession
	var last domain.Time
	if err := row.Scan(&c.ID, &c.WorkspaceID, &c.AgentID, &c.Title, &c.Metadata, &c.UserID, &c.EndUserID, &c.MessageCount, &c.ActiveExecutionID, &last,
		&c.CreatedAt, &c.UpdatedAt); err != nil {
		return nil, err
	}
	if !last.IsZero() {
		c.LastMessageAt = &last
	}
	return &c, nil
}

// ChatSessionCreate inserts a session.
func (s *Store) ChatSessionCreate(ctx context.Context, c *domain.ChatSession) (*domain.ChatSession, error) {
	if c.ID == "" {
		c.ID = NewID()
	}
	now := domain.Now()
	_, err := s.exec(ctx, `INSERT INTO chat_sessions (id, workspace_id, agent_id, title, metadata, user_id, end_user_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`, c.ID, c.WorkspaceID, c.AgentID, c.Title, c.Metadata, c.UserID, c.EndUserID, now)
	if err != nil {
		return nil, fmt.Errorf("insert chat session: %w", err)
	}
	return s.ChatSessionGet(ctx, c.WorkspaceID, c.ID)
}

// ChatSessionGet returns one session.
func (s *Store) ChatSessionGet(ctx context.Context, ws, id string) (*domain.ChatSession, error) {
	return getByID(ctx, s, "chat session", "chat_sessions", chatSessionColumns, ws, id, scanChatSession)
}

// ChatSessionList returns one page of sessions, newest first.
func (s *Store) ChatSessionList(ctx context.Context, ws string, f domain.ChatSessionFilter, p domain.Page) ([]*domain.ChatSession, int, error) {
	where, args := whereClause("", ws, []cond{{"agent_id = $%d", f.AgentID}, {"end_user_id = $%d", f.EndUserID}})
	return listPage(ctx, s, "chat_sessions", chatSessionColumns, where, args, newestFirst, p, scanChatSession)
}

// ChatSessionUpdate changes a session's title or metadata.
func (s *Store) ChatSessionUpdate(ctx context.Context, ws, id string, p domain.ChatSessionPatch) (*domain.ChatSession, error) {
	if err := s.update(ctx, "chat session", "chat_sessions", ws, id, []set{{"title", p.Title}, {"metadata", p.Metadata}}); err != nil {
		return nil, err
	}
	return s.ChatSessionGet(ctx, ws, id)
}

// ChatSessionDelete removes a session and its messages. A session with a reply in progress
// cannot be deleted (409).
func (s *Store) ChatSessionDelete(ctx context.Context, ws, id string) (*domain.ChatSession, error) {
	return deleteAsWas(ctx, s, "chat session", "chat_sessions", ws, id, (*Store).ChatSessionGet, func(tx *Store, c *domain.ChatSession) error {
		if c.ActiveExecutionID != nil {
			return &ConflictError{Message: fmt.Sprintf("chat session %s is generating a reply (execution %s); cancel it or wait before deleting", id, *c.ActiveExecutionID)}
		}
		return nil
	})
}

// ChatSessionLock marks a session busy with an execution; a session already busy is a 409.
func (s *Store) ChatSessionLock(ctx context.Context, ws, id, executionID string) error {
	res, err := s.exec(ctx, "UPDATE chat_sessions SET active_execution_id = $1 WHERE workspace_id = $2 AND id = $3 AND active_execution_id IS NULL",
		executionID, ws, id)
	if err != nil {
		return fmt.Errorf("lock chat session %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		c, err := s.ChatSessionGet(ctx, ws, id)
		if err != nil {
			return err
		}
		busy := ""
		if c.ActiveExecutionID != nil {
			busy = *c.ActiveExecutionID
		}
		return &ConflictError{Message: fmt.Sprintf("chat session %s is still generating a reply (execution %s); wait for it to finish or cancel it", id, busy)}
	}
	return nil
}

// ChatSessionUnlock clears the session's busy mark if executionID holds it.
func (s *Store) ChatSessionUnlock(ctx context.Context, ws, id, executionID string) error {
	_, err := s.exec(ctx, "UPDATE chat_sessions SET active_execution_id = NULL WHERE workspace_id = $1 AND id = $2 AND active_execution_id = $3",
		ws, id, executionID)
	return err
}

// ChatMessageAppend adds messages to a session in order and updates its counters.
func (s *Store) ChatMessageAppend(ctx context.Context, ws, sessionID string, msgs ...*domain.ChatMessage) error {
	return s.InTx(ctx, func(tx *Store) error {
		var count int
		if err := tx.w.QueryRowContext(ctx, "SELECT message_count FROM chat_sessions WHERE workspace_id = $1 AND id = $2", ws, sessionID).Scan(&count); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return notFound("chat session", sessionID)
			}
			return err
		}
		now := domain.Now()
		for _, m := range msgs {
			if m.ID == "" {
				m.ID = NewID()
			}
			count++
			m.WorkspaceID, m.SessionID, m.CreatedAt = ws, sessionID, now
			m.TokenUsage.TotalTokens = m.TokenUsage.PromptTokens + m.TokenUsage.CompletionTokens
			if _, err := tx.exec(ctx, `INSERT INTO chat_messages (id, workspace_id, session_id, seq, role, content, execution_id, user_message_id,
				prompt_tokens, completion_tokens, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
				m.ID, ws, sessionID, count, m.Role, m.Content, m.ExecutionID, m.UserMessageID, m.TokenUsage.PromptTokens,
				m.TokenUsage.CompletionTokens, now); err != nil {
				return fmt.Errorf("insert chat message: %w", err)
			}
		}
		_, err := tx.exec(ctx, "UPDATE chat_sessions SET message_count = $1, last_message_at = $2, updated_at = $2 WHERE workspace_id = $3 AND id = $4",
			count, now, ws, sessionID)
		return err
	})
}

const chatMessageColumns = `id, workspace_id, session_id, role, content, execution_id, user_message_id, prompt_tokens, completion_tokens, created_at`

func scanChatMessage(row interface{ Scan(...any) error }) (*domain.ChatMessage, error) {
	var m domain.ChatMessage
	if err := row.Scan(&m.ID, &m.WorkspaceID, &m.SessionID, &m.Role, &m.Content, &m.ExecutionID, &m.UserMessageID,
		&m.TokenUsage.PromptTokens, &m.TokenUsage.CompletionTokens, &m.CreatedAt); err != nil {
		return nil, err
	}
	m.TokenUsage.TotalTokens = m.TokenUsage.PromptTokens + m.TokenUsage.CompletionTokens
	return &m, nil
}

// ChatMessageList returns one page of a session's messages, oldest first.
func (s *Store) ChatMessageList(ctx context.Context, ws, sessionID string, p domain.Page) ([]*domain.ChatMessage, int, error) {
	c, err := s.ChatSessionGet(ctx, ws, sessionID)
	if err != nil {
		return nil, 0, err
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+chatMessageColumns+" FROM chat_messages WHERE workspace_id = $1 AND session_id = $2 ORDER BY seq"+limitClause(p),
		ws, sessionID)
	if err != nil {
		return nil, 0, fmt.Errorf("list chat messages: %w", err)
	}
	items, err := collect(rows, scanChatMessage)
	return items, c.MessageCount, err
}

// chatTailBatch is how many messages ChatHistoryTail reads at a time.
const chatTailBatch = 100

// ChatHistoryTail returns the newest messages of a session that fit, oldest first, and how
// many older ones it left out. It reads the session newest first, along its (session_id, seq)
// key, and stops at the first message fit refuses: a turn of a long session reads only what
// its model can take, not the whole history.
func (s *Store) ChatHistoryTail(ctx context.Context, ws, sessionID string, fit func(*domain.ChatMessage) bool) ([]*domain.ChatMessage, int, error) {
	var kept []*domain.ChatMessage
	before, dropped := int64(math.MaxInt64), 0
	for more := true; more; {
		rows, err := s.r.QueryContext(ctx, "SELECT seq, "+chatMessageColumns+" FROM chat_messages WHERE workspace_id = $1 AND session_id = $2 AND seq < $3"+
			fmt.Sprintf(" ORDER BY seq DESC LIMIT %d", chatTailBatch), ws, sessionID, before)
		if err != nil {
			return nil, 0, fmt.Errorf("load chat history: %w", err)
		}
		n := 0
		err = func() error {
			defer rows.Close()
			for rows.Next() {
				var m domain.ChatMessage
				if err := rows.Scan(&before, &m.ID, &m.WorkspaceID, &m.SessionID, &m.Role, &m.Content, &m.ExecutionID, &m.UserMessageID,
					&m.TokenUsage.PromptTokens, &m.TokenUsage.CompletionTokens, &m.CreatedAt); err != nil {
					return err
				}
				n++
				m.TokenUsage.TotalTokens = m.TokenUsage.PromptTokens + m.TokenUsage.CompletionTokens
				if !fit(&m) {
					// Sequence numbers count a session's messages from 1, so this one and
					// every older one are left out.
					dropped, more = int(before), false
					return nil
				}
				kept = append(kept, &m)
			}
			return rows.Err()
		}()
		if err != nil {
			return nil, 0, fmt.Errorf("load chat history: %w", err)
		}
		more = more && n == chatTailBatch
	}
	slices.Reverse(kept)
	return kept, dropped, nil
}

// ChatMessageGet returns one message.
func (s *Store) ChatMessageGet(ctx context.Context, ws, id string) (*domain.ChatMessage, error) {
	m, err := scanChatMessage(s.r.QueryRowContext(ctx, "SELECT "+chatMessageColumns+" FROM chat_messages WHERE workspace_id = $1 AND id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("chat message", id)
	}
	return m, err
}

// ChatReplyOf returns the last assistant message an execution produced (its reply, or the
// question it asks while it waits for the answer).
func (s *Store) ChatReplyOf(ctx context.Context, ws, executionID string) (*domain.ChatMessage, error) {
	m, err := scanChatMessage(s.r.QueryRowContext(ctx, "SELECT "+chatMessageColumns+
		" FROM chat_messages WHERE workspace_id = $1 AND execution_id = $2 AND role = 'assistant' ORDER BY seq DESC LIMIT 1", ws, executionID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("reply of execution", executionID)
	}
	return m, err
}
