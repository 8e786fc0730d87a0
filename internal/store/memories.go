package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/agentplane/agentplane/internal/domain"
)

const memoryColumns = `id, workspace_id, agent_id, session_id, end_user_id, key, content, metadata, created_at, updated_at`

func scanMemory(row interface{ Scan(...any) error }) (*domain.Memory, error) {
	var m domain.Memory
	if err := row.Scan(&m.ID, &m.WorkspaceID, &m.AgentID, &m.SessionID, &m.EndUserID, &m.Key, &m.Content, &m.Metadata, &m.CreatedAt, &m.UpdatedAt); err != nil {
		return nil, err
	}
	if m.Metadata == nil {
		m.Metadata = domain.JSONObject{}
	}
	return &m, nil
}

// MemoryList returns one page of a workspace's memories, newest first, and the total count.
func (s *Store) MemoryList(ctx context.Context, ws string, f domain.MemoryFilter, p domain.Page) ([]*domain.Memory, int, error) {
	where, args := whereClause("", ws, []cond{
		{"agent_id = $%d", f.AgentID},
		{"session_id = $%d", f.SessionID},
		{"end_user_id = $%d", f.EndUserID},
		{"key = $%d", f.Key},
		{likeBoth("key", "content"), likePattern(f.Query)},
	})
	return listPage(ctx, s, "memories", memoryColumns, where, args, "", p, scanMemory)
}

// MemoryGet returns one memory of the workspace.
func (s *Store) MemoryGet(ctx context.Context, ws, id string) (*domain.Memory, error) {
	return getByID(ctx, s, "memory", "memories", memoryColumns, ws, id, scanMemory)
}

// MemoryCreate inserts a memory; a preset ID is kept.
func (s *Store) MemoryCreate(ctx context.Context, m *domain.Memory) (*domain.Memory, error) {
	if m.ID == "" {
		m.ID = NewID()
	}
	_, err := s.exec(ctx, `INSERT INTO memories (id, workspace_id, agent_id, session_id, end_user_id, key, content, metadata, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`, m.ID, m.WorkspaceID, emptyAsNull(m.AgentID), emptyAsNull(m.SessionID),
		emptyAsNull(m.EndUserID), m.Key, m.Content, m.Metadata, domain.Now())
	if err != nil {
		if isUniqueViolation(err) {
			return nil, &ConflictError{Message: fmt.Sprintf("memory %s already exists", m.ID)}
		}
		return nil, fmt.Errorf("insert memory: %w", err)
	}
	return s.MemoryGet(ctx, m.WorkspaceID, m.ID)
}

// MemoryUpdate changes the given fields of a memory.
func (s *Store) MemoryUpdate(ctx context.Context, ws, id string, p domain.MemoryPatch) (*domain.Memory, error) {
	var agent **string
	if p.AgentID != nil {
		agent = domain.PtrTo(emptyAsNull(p.AgentID))
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
func (s *Store) MemoryDelete(ctx context.Context, ws, id string) (*domain.Memory, error) {
	return deleteAsWas(ctx, s, "memory", "memories", ws, id, (*Store).MemoryGet, nil)
}

// where is the scope's condition, with its argument numbered n.
func memoryScopeWhere(sc domain.MemoryScope, n int) (string, any, error) {
	switch {
	case sc.AgentID != "":
		// An agent's own memories: not those its runs keep for one session or end user, which
		// other sessions and end users must not see.
		return fmt.Sprintf("m.agent_id = $%d AND m.session_id IS NULL AND m.end_user_id IS NULL", n), sc.AgentID, nil
	case sc.SessionID != "":
		return fmt.Sprintf("m.session_id = $%d", n), sc.SessionID, nil
	case sc.EndUserID != "":
		return fmt.Sprintf("m.end_user_id = $%d", n), sc.EndUserID, nil
	}
	return "", nil, errors.New("memory scope: no agent, session or end user")
}

// MemoryMatch returns up to limit memories of the scope that match a word of text, the most
// relevant first (full-text match: SQLite FTS5 with Porter stemming, PostgreSQL tsvector in
// English; any of the text's words counts, English stop words aside), newest first among
// equals: what a run puts into its prompt. A text without words (or only stop words) matches
// nothing.
func (s *Store) MemoryMatch(ctx context.Context, ws string, sc domain.MemoryScope, text string, limit int) ([]*domain.Memory, error) {
	cond, arg, err := memoryScopeWhere(sc, 2)
	if err != nil {
		return nil, err
	}
	words := searchWords(text)
	if len(words) == 0 {
		return []*domain.Memory{}, nil
	}
	cols := "m.id, m.workspace_id, m.agent_id, m.session_id, m.end_user_id, m.key, m.content, m.metadata, m.created_at, m.updated_at"
	var q string
	args := []any{ws, arg}
	if s.dialect == Postgres {
		q = "SELECT " + cols + ` FROM memories m WHERE m.workspace_id = $1 AND ` + cond + ` AND m.search @@ to_tsquery('english', $3)
			ORDER BY ts_rank(m.search, to_tsquery('english', $3)) DESC, m.created_at DESC, m.id DESC LIMIT $4`
		args = append(args, strings.Join(words, " | "), limit)
	} else {
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = `"` + w + `"`
		}
		q = "SELECT " + cols + ` FROM memories m JOIN (SELECT rowid, bm25(memories_fts) AS score FROM memories_fts WHERE memories_fts MATCH $3) f
			ON f.rowid = m.rowid WHERE m.workspace_id = $1 AND ` + cond + `
			ORDER BY f.score, m.created_at DESC, m.id DESC LIMIT $4`
		args = append(args, strings.Join(quoted, " OR "), limit)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("search memories: %w", err)
	}
	return collect(rows, scanMemory)
}

// maxSearchWords bounds the words of a memory search, so a long input makes a bounded query.
const maxSearchWords = 32

// searchWords are the distinct words (letters and digits, lower case) of text that are not
// stop words, at most maxSearchWords, safe to put into an FTS5 or tsquery expression.
func searchWords(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(f) < 2 || seen[f] || stopWords[f] {
			continue
		}
		seen[f] = true
		out = append(out, f)
		if len(out) == maxSearchWords {
			break
		}
	}
	return out
}

// stopWords are PostgreSQL's English stop words (the Snowball list), which its tsquery drops:
// leaving them out on SQLite too makes both dialects match the same memories, and keeps
// "what is my …" from matching every memory that says "is" or "my".
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
		she her hers herself it its itself they them their theirs themselves what which who whom this that these those am is are
		was were be been being have has had having do does did doing a an the and but if or because as until while of at by for
		with about against between into through during before after above below to from up down in out on off over under again
		further then once here there when where why how all any both each few more most other some such no nor not only own same
		so than too very s t can will just don should now`) {
		m[w] = true
	}
	return m
}()
