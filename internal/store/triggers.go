package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

const triggerColumns = `id, workspace_id, agent_id, version_id, type, name, enabled, config, input_mapping, input,
	webhook_url, token_prefix, next_run_at, last_run_at, created_at, updated_at`

func scanTrigger(row interface{ Scan(...any) error }) (*domain.Trigger, error) {
	var t domain.Trigger
	var mapping, input sql.NullString
	var next, last domain.Time
	if err := row.Scan(&t.ID, &t.WorkspaceID, &t.AgentID, &t.VersionID, &t.Type, &t.Name, &t.Enabled, &t.Config, &mapping, &input,
		&t.WebhookURL, &t.TokenPrefix, &next, &last, &t.CreatedAt, &t.UpdatedAt); err != nil {
		return nil, err
	}
	if t.Config == nil {
		t.Config = domain.JSONObject{}
	}
	t.InputMapping = map[string]string{}
	if mapping.Valid && mapping.String != "" {
		if err := json.Unmarshal([]byte(mapping.String), &t.InputMapping); err != nil {
			return nil, fmt.Errorf("scan trigger %s input_mapping: %w", t.ID, err)
		}
	}
	if input.Valid && input.String != "" {
		if err := json.Unmarshal([]byte(input.String), &t.Input); err != nil {
			return nil, fmt.Errorf("scan trigger %s input: %w", t.ID, err)
		}
	}
	if masked, ok := t.Config[domain.WebhookSecretKey].(string); ok {
		// The masked completion secret is kept beside the config's masks, shown apart.
		t.WebhookSecret = masked
		delete(t.Config, domain.WebhookSecretKey)
	}
	if !next.IsZero() {
		t.NextRunAt = &next
	}
	if !last.IsZero() {
		t.LastRunAt = &last
	}
	return &t, nil
}

func jsonOrNull(v any, isNil bool) (any, error) {
	if isNil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// TriggerCreate inserts a trigger (a preset t.ID is kept) with the SHA-256 hash of its hook
// token (empty for none) and its secrets as sealed for it ("" for none; t.Config then holds
// their masks). It returns the stored trigger.
func (s *Store) TriggerCreate(ctx context.Context, t *domain.Trigger, tokenHash, sealed string) (*domain.Trigger, error) {
	if t.ID == "" {
		t.ID = NewID()
	}
	mapping, err := jsonOrNull(t.InputMapping, t.InputMapping == nil)
	if err != nil {
		return nil, err
	}
	input, err := jsonOrNull(t.Input, t.Input == nil)
	if err != nil {
		return nil, err
	}
	var hash any
	if tokenHash != "" {
		hash = tokenHash
	}
	now := domain.Now()
	_, err = s.exec(ctx, `INSERT INTO agent_triggers (id, workspace_id, agent_id, version_id, type, name, enabled, config, secrets,
		input_mapping, input, webhook_url, token_hash, token_prefix, next_run_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, COALESCE($10, '{}'), $11, $12, $13, $14, $15, $16, $16)`,
		t.ID, t.WorkspaceID, t.AgentID, t.VersionID, t.Type, t.Name, t.Enabled, t.Config, sealed, mapping, input,
		t.WebhookURL, hash, t.TokenPrefix, timeOrNil(t.NextRunAt), now)
	if err != nil {
		if isUniqueViolation(err) {
			return nil, &ConflictError{Message: fmt.Sprintf("trigger %s already exists", t.ID)}
		}
		return nil, fmt.Errorf("insert trigger: %w", err)
	}
	return s.TriggerGet(ctx, t.WorkspaceID, t.ID)
}

func timeOrNil(t *domain.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// TriggerGet returns one trigger of the workspace (secrets masked).
func (s *Store) TriggerGet(ctx context.Context, ws, id string) (*domain.Trigger, error) {
	return getByID(ctx, s, "trigger", "agent_triggers", triggerColumns, ws, id, scanTrigger)
}

// TriggerList returns one page of a workspace's triggers, newest first, and the total.
func (s *Store) TriggerList(ctx context.Context, ws string, f domain.TriggerFilter, p domain.Page) ([]*domain.Trigger, int, error) {
	where, args := whereClause("", ws, []cond{{"agent_id = $%d", f.AgentID}, {"type = $%d", f.Type}})
	return listPage(ctx, s, "agent_triggers", triggerColumns, where, args, "", p, scanTrigger)
}

// TriggerSecretsSealed returns the sealed secrets of a trigger ("" when it has none).
func (s *Store) TriggerSecretsSealed(ctx context.Context, ws, id string) (string, error) {
	var sealed string
	err := s.r.QueryRowContext(ctx, "SELECT secrets FROM agent_triggers WHERE workspace_id = $1 AND id = $2", ws, id).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", notFound("trigger", id)
	}
	if err != nil {
		return "", fmt.Errorf("read trigger %s secrets: %w", id, err)
	}
	return sealed, nil
}

// TriggerByToken finds the trigger whose hook token hashes to tokenHash, with its sealed
// secrets; a *NotFoundError when there is none.
func (s *Store) TriggerByToken(ctx context.Context, tokenHash string) (*domain.Trigger, string, error) {
	var sealed string
	row := s.r.QueryRowContext(ctx, "SELECT "+triggerColumns+", secrets FROM agent_triggers WHERE token_hash = $1", tokenHash)
	t, err := scanTrigger(scanExtra{row, &sealed})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", notFound("hook", "token")
	}
	if err != nil {
		return nil, "", fmt.Errorf("find trigger by token: %w", err)
	}
	return t, sealed, nil
}

// scanExtra scans a row of triggerColumns followed by one more column into dst.
type scanExtra struct {
	row interface{ Scan(...any) error }
	dst any
}

func (w scanExtra) Scan(dest ...any) error { return w.row.Scan(append(dest, w.dst)...) }

// TriggerUpdate changes the given fields of a trigger. A new config comes with its secrets as
// sealed (p.Config holding their masks; p.Secrets, the plaintext, is not read here).
func (s *Store) TriggerUpdate(ctx context.Context, ws, id string, p domain.TriggerPatch, sealed *string) (*domain.Trigger, error) {
	sets := []set{{"name", p.Name}, {"enabled", p.Enabled}, {"webhook_url", p.WebhookURL}}
	if p.VersionID != nil {
		sets = append(sets, set{"version_id", p.VersionID})
	}
	if p.Config != nil || sealed != nil {
		if p.Config == nil || sealed == nil {
			return nil, errors.New("update trigger: config and secrets change together")
		}
		sets = append(sets, set{"config", p.Config}, set{"secrets", sealed})
	}
	if p.InputMapping != nil {
		sets = append(sets, set{"input_mapping", &jsonArg{*p.InputMapping}})
	}
	if p.Input != nil {
		sets = append(sets, set{"input", &jsonArg{*p.Input}})
	}
	if p.NextRunAt != nil {
		var v any = timeOrNil(*p.NextRunAt)
		sets = append(sets, set{"next_run_at", &v})
	}
	if err := s.update(ctx, "trigger", "agent_triggers", ws, id, sets); err != nil {
		return nil, err
	}
	return s.TriggerGet(ctx, ws, id)
}

// TriggerRotate replaces a trigger's hook token hash and prefix; the old token stops working
// at once.
func (s *Store) TriggerRotate(ctx context.Context, ws, id, tokenHash, prefix string) (*domain.Trigger, error) {
	if err := s.update(ctx, "trigger", "agent_triggers", ws, id, []set{{"token_hash", &tokenHash}, {"token_prefix", &prefix}}); err != nil {
		return nil, err
	}
	return s.TriggerGet(ctx, ws, id)
}

// TriggerDelete removes a trigger (its event and conversation records go with it) and
// returns it as it was.
func (s *Store) TriggerDelete(ctx context.Context, ws, id string) (*domain.Trigger, error) {
	return deleteAsWas(ctx, s, "trigger", "agent_triggers", ws, id, (*Store).TriggerGet, nil)
}

// DuplicateEventError says an inbound event was already handled within TriggerDedupWindow.
type DuplicateEventError struct {
	// ExecutionID is the execution the first delivery started ("" when unknown).
	ExecutionID string
}

func (e *DuplicateEventError) Error() string { return "event already handled" }

// TriggerEventClaim records that the trigger handles the event key (with the execution it
// starts), unless the same key was recorded less than TriggerDedupWindow ago: then it
// returns a *DuplicateEventError naming the first execution. Run it in the transaction that
// creates the execution: concurrent deliveries of one event then start one run.
func (s *Store) TriggerEventClaim(ctx context.Context, triggerID, key, executionID string, now time.Time) error {
	cutoff := now.Add(-domain.TriggerDedupWindow).UnixMilli()
	res, err := s.exec(ctx, `INSERT INTO trigger_events (trigger_id, dedup_key, execution_id, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (trigger_id, dedup_key) DO UPDATE SET execution_id = excluded.execution_id, created_at = excluded.created_at
		WHERE trigger_events.created_at < $5`, triggerID, key, executionID, now.UnixMilli(), cutoff)
	if err != nil {
		return fmt.Errorf("record event of trigger %s: %w", triggerID, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return nil
	}
	var first sql.NullString
	if err := s.w.QueryRowContext(ctx, "SELECT execution_id FROM trigger_events WHERE trigger_id = $1 AND dedup_key = $2", triggerID, key).Scan(&first); err != nil {
		return fmt.Errorf("read event of trigger %s: %w", triggerID, err)
	}
	return &DuplicateEventError{ExecutionID: first.String}
}

// TriggerEventsPrune deletes the event records older than TriggerDedupWindow; it returns how
// many went.
func (s *Store) TriggerEventsPrune(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.exec(ctx, "DELETE FROM trigger_events WHERE created_at < $1", now.Add(-domain.TriggerDedupWindow).UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("prune trigger events: %w", err)
	}
	return res.RowsAffected()
}

// TriggerSession returns the chat session a trigger's conversation continues, creating it
// (with the trigger's agent, titled title) on the conversation's first message. Concurrent
// first messages get the same session.
func (s *Store) TriggerSession(ctx context.Context, t *domain.Trigger, conversation, title string, endUser *string) (string, error) {
	var id string
	err := s.r.QueryRowContext(ctx, "SELECT session_id FROM trigger_sessions WHERE trigger_id = $1 AND conversation_key = $2", t.ID, conversation).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("find session of trigger %s: %w", t.ID, err)
	}
	err = s.InTx(ctx, func(tx *Store) error {
		err := tx.w.QueryRowContext(ctx, "SELECT session_id FROM trigger_sessions WHERE trigger_id = $1 AND conversation_key = $2", t.ID, conversation).Scan(&id)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		c, err := tx.ChatSessionCreate(ctx, &domain.ChatSession{WorkspaceID: t.WorkspaceID, AgentID: t.AgentID, Title: title, EndUserID: endUser,
			Metadata: domain.JSONObject{"trigger_id": t.ID, "source": t.Type}})
		if err != nil {
			return err
		}
		res, err := tx.exec(ctx, `INSERT INTO trigger_sessions (trigger_id, conversation_key, session_id, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (trigger_id, conversation_key) DO NOTHING`, t.ID, conversation, c.ID, domain.Now())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errSessionRace
		}
		id = c.ID
		return nil
	})
	if errors.Is(err, errSessionRace) {
		// Another delivery created the conversation's session first: use it.
		if err := s.r.QueryRowContext(ctx, "SELECT session_id FROM trigger_sessions WHERE trigger_id = $1 AND conversation_key = $2", t.ID, conversation).Scan(&id); err != nil {
			return "", fmt.Errorf("find session of trigger %s: %w", t.ID, err)
		}
		return id, nil
	}
	if err != nil {
		return "", fmt.Errorf("start session of trigger %s: %w", t.ID, err)
	}
	return id, nil
}

var errSessionRace = errors.New("conversation session created concurrently")

// TriggersDue returns the enabled schedule triggers whose next tick is at or before now, up
// to limit, earliest first.
func (s *Store) TriggersDue(ctx context.Context, now time.Time, limit int) ([]*domain.Trigger, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+triggerColumns+" FROM agent_triggers WHERE next_run_at IS NOT NULL AND next_run_at <= $1 AND enabled = $2 AND type = 'schedule' ORDER BY next_run_at, id"+
		fmt.Sprintf(" LIMIT %d", max(limit, 1)), now.UnixMilli(), true)
	if err != nil {
		return nil, fmt.Errorf("find due schedules: %w", err)
	}
	return collect(rows, scanTrigger)
}

// TriggerTickClaim moves a schedule from its tick old to next, recording ran (when not nil)
// as its last run, if its next tick is still old: a compare-and-set, so of several
// schedulers (nodes) only one claims a tick. Otherwise it returns ErrTickTaken. Run it in
// the transaction that creates the tick's execution.
func (s *Store) TriggerTickClaim(ctx context.Context, id string, old, next time.Time, ran *time.Time) error {
	var res sql.Result
	var err error
	if ran != nil {
		res, err = s.exec(ctx, "UPDATE agent_triggers SET next_run_at = $1, last_run_at = $2 WHERE id = $3 AND next_run_at = $4",
			next.UnixMilli(), ran.UnixMilli(), id, old.UnixMilli())
	} else {
		res, err = s.exec(ctx, "UPDATE agent_triggers SET next_run_at = $1 WHERE id = $2 AND next_run_at = $3", next.UnixMilli(), id, old.UnixMilli())
	}
	if err != nil {
		return fmt.Errorf("claim tick of schedule %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return domain.ErrTickTaken
	}
	return nil
}

// TriggerWebhookSealed returns the completion webhook of a trigger: its URL and its sealed
// secrets, both "" when it has no webhook. Executions a trigger started carry its id in
// metadata.trigger_id; the completion webhook sender looks their webhook up here.
func (s *Store) TriggerWebhookSealed(ctx context.Context, ws, id string) (url, sealed string, err error) {
	err = s.r.QueryRowContext(ctx, "SELECT webhook_url, secrets FROM agent_triggers WHERE workspace_id = $1 AND id = $2", ws, id).Scan(&url, &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", notFound("trigger", id)
	}
	if err != nil {
		return "", "", fmt.Errorf("read webhook of trigger %s: %w", id, err)
	}
	if url == "" {
		return "", "", nil
	}
	return url, sealed, nil
}
