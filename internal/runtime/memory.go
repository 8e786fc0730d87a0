package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
)

// A version with config.memory enabled uses the memories of its scope: the agent's own, the
// run's chat session's, or the run's end user's. The most relevant ones to the user's message
// (store.MemoryMatch: a full-text match, newest first among equals) go into the system
// message, as a "memory.retrieve" span lists; an agent-type agent also gets a remember tool
// that stores one memory of the scope per call ("memory.remember" spans).

// defaultMemoryItems is how many memories a prompt gets when config.memory.max_items is unset.
const defaultMemoryItems = 10

// Bounds of a memory the remember tool stores: those of POST /memories.
const (
	maxRememberBytes  = 64 << 10
	maxRememberKeyLen = 200
)

// memoryPreview is how much of a memory's content the retrieve span shows.
const memoryPreview = 120

// memoryOn reports whether the run's version uses memories.
func (r *run) memoryOn() bool { return r.cfg.Memory != nil && r.cfg.Memory.Enabled }

// memoryScope is the scope of the run's memories, or, when the run has no key for it (no
// chat session, no end_user_id), why it has none.
func (r *run) memoryScope() (scope string, sc domain.MemoryScope, missing string) {
	scope = r.cfg.Memory.Scope
	if scope == "" {
		scope = "agent"
	}
	switch scope {
	case "session":
		if r.x.SessionID == nil || *r.x.SessionID == "" {
			return scope, sc, "the run belongs to no chat session (memory scope session uses chat runs only)"
		}
		sc.SessionID = *r.x.SessionID
	case "end_user":
		if r.x.EndUserID == nil || *r.x.EndUserID == "" {
			return scope, sc, "the run has no end_user_id (memory scope end_user needs one on execute or chat)"
		}
		sc.EndUserID = *r.x.EndUserID
	default:
		sc.AgentID = r.x.AgentID
	}
	return scope, sc, ""
}

// recall finds the memories relevant to the user's message and returns the text to add to the
// system message ("" when there are none), recording a memory.retrieve span either way.
func (r *run) recall(ctx context.Context, user string) (string, error) {
	scope, sc, missing := r.memoryScope()
	limit := r.cfg.Memory.MaxItems
	if limit <= 0 {
		limit = defaultMemoryItems
	}
	sp := r.span("memory", "memory.retrieve", map[string]any{"scope": scope, "query": summarize(user, 200), "max_items": limit})
	sp.Attributes["scope"] = scope
	if missing != "" {
		sp.Attributes["skipped"] = missing
		sp.Attributes["count"] = 0
		r.end(sp, map[string]any{"memories": []any{}, "skipped": missing}, nil)
		return "", nil
	}
	found, err := r.e.st.MemoryMatch(ctx, r.x.WorkspaceID, sc, user, limit)
	if err != nil {
		r.end(sp, nil, err)
		return "", fmt.Errorf("retrieve memories: %w", err)
	}
	ids := make([]string, len(found))
	used := make([]map[string]any, len(found))
	var b strings.Builder
	if len(found) > 0 {
		b.WriteString("Relevant memories (things learned earlier; use them when they help, and do not mention this list):")
	}
	for i, m := range found {
		ids[i] = m.ID
		used[i] = map[string]any{"id": m.ID, "key": m.Key, "preview": summarize(m.Content, memoryPreview)}
		b.WriteString("\n- ")
		if m.Key != "" {
			b.WriteString("[" + m.Key + "] ")
		}
		b.WriteString(m.Content)
	}
	sp.Attributes["memory_ids"], sp.Attributes["count"] = ids, len(found)
	r.end(sp, map[string]any{"memories": used}, nil)
	return b.String(), nil
}

// withMemories adds the memories' text to the system message (making one when there is none).
func withMemories(system []llm.Message, text string) []llm.Message {
	if text == "" {
		return system
	}
	if len(system) > 0 && system[0].Role == "system" {
		system[0].Content += "\n\n" + text
		return system
	}
	return append([]llm.Message{{Role: "system", Content: text}}, system...)
}

// rememberSpec is the remember tool as the model sees it.
var rememberSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"content":{"type":"string","description":"The fact to remember, self-contained (it will be read without this conversation)."},` +
	`"key":{"type":"string","description":"Optional short label for the fact, e.g. user.preferences."}},` +
	`"required":["content"]}`)

func rememberSpec(scope string) llm.ToolSpec {
	whose := map[string]string{"agent": "for all your future conversations",
		"session": "for the rest of this conversation", "end_user": "about this user, for every future conversation with them"}[scope]
	return llm.ToolSpec{Name: "remember", InputSchema: rememberSchema,
		Description: "Stores one fact in long-term memory " + whose + ". Use it for durable facts and preferences worth recalling later, not for small talk."}
}

// rememberTool stores one memory of the run's scope per call.
type rememberTool struct {
	r     *run
	scope string
	sc    domain.MemoryScope
}

// call stores the memory the model asked for; a bad argument is an error result for the
// model, a database failure too (the run goes on without it).
func (t *rememberTool) call(ctx context.Context, c llm.ToolCall, sp *domain.Span) (string, toolOutcome, error) {
	sp.Name, sp.Kind = "memory.remember", "memory"
	sp.Attributes["scope"] = t.scope
	var args struct {
		Content string `json:"content"`
		Key     string `json:"key"`
	}
	if err := json.Unmarshal(c.Arguments, &args); err != nil {
		return "the arguments must be an object with content (a string) and optional key (a string)", toolError, nil
	}
	args.Content, args.Key = strings.TrimSpace(args.Content), strings.TrimSpace(args.Key)
	switch {
	case args.Content == "":
		return "content is required and must not be empty", toolError, nil
	case len(args.Content) > maxRememberBytes:
		return fmt.Sprintf("content must be at most %d bytes", maxRememberBytes), toolError, nil
	case len([]rune(args.Key)) > maxRememberKeyLen:
		return fmt.Sprintf("key must be at most %d characters", maxRememberKeyLen), toolError, nil
	}
	agent := t.r.x.AgentID
	m := &domain.Memory{WorkspaceID: t.r.x.WorkspaceID, AgentID: &agent, Key: args.Key, Content: args.Content,
		Metadata: domain.JSONObject{"source": "remember", "execution_id": t.r.x.ID}}
	if t.sc.SessionID != "" {
		m.SessionID = &t.sc.SessionID
	}
	if t.sc.EndUserID != "" {
		m.EndUserID = &t.sc.EndUserID
	}
	saved, err := t.r.e.st.MemoryCreate(ctx, m)
	if err != nil {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		t.r.e.log.Error("store a memory", "execution_id", t.r.x.ID, "error", err)
		return "the memory could not be stored", toolFailed, nil
	}
	sp.Attributes["memory_id"] = saved.ID
	out, _ := json.Marshal(map[string]any{"id": saved.ID, "stored": true})
	return string(out), toolOK, nil
}
