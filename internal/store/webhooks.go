package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// TerminalHook runs inside the transaction that moves an execution to a terminal status
// (completed, failed, cancelled, rejected), with the execution as written: what it writes
// through tx commits with the status change or not at all. An error rolls the change back,
// so a hook fails only when the database does.
type TerminalHook func(ctx context.Context, tx *Store, x *domain.Execution) error

type hooks struct {
	mu       sync.Mutex
	terminal atomic.Pointer[[]namedHook] // copied on write: readers never lock
}

type namedHook struct {
	name string
	fn   TerminalHook
}

// SetTerminalHook installs the completion webhooks' hook (nil removes it): their outbox is
// written by it, in the same transaction as the status. Other services add theirs with
// SetNamedTerminalHook.
func (s *Store) SetTerminalHook(fn TerminalHook) {
	s.SetNamedTerminalHook("webhooks", fn)
}

// SetNamedTerminalHook installs (or, with nil, removes) the terminal hook of one service.
// Every terminal status change runs all of them in the order of their names, in its
// transaction.
func (s *Store) SetNamedTerminalHook(name string, fn TerminalHook) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	var next []namedHook
	if cur := s.hooks.terminal.Load(); cur != nil {
		next = slices.DeleteFunc(slices.Clone(*cur), func(h namedHook) bool { return h.name == name })
	}
	if fn != nil {
		next = append(next, namedHook{name, fn})
		slices.SortFunc(next, func(a, b namedHook) int { return strings.Compare(a.name, b.name) })
	}
	s.hooks.terminal.Store(&next)
}

// endedRun is what the terminal hooks read of an ending run's agent: its webhook (the
// webhooks' hook) and whether any enabled evaluation rule may score it (online evaluation's).
type endedRun struct {
	ws, agentID string
	url, secret sql.NullString
	rules       bool
}

// runTerminalHook runs the terminal hooks of an execution that just ended. What they read of
// its agent is read first, in one statement, so that the run's end costs one read however
// many hooks there are (TestStatementsPerRun in bench/ holds a run to 8 statements on
// PostgreSQL); AgentWebhook and EvaluationRulesFor answer from it.
func (s *Store) runTerminalHook(ctx context.Context, x *domain.Execution) error {
	hs := s.hooks.terminal.Load()
	if hs == nil || len(*hs) == 0 {
		return nil
	}
	e := &endedRun{ws: x.WorkspaceID, agentID: x.AgentID}
	err := s.r.QueryRowContext(ctx, `SELECT (SELECT webhook_url FROM agents WHERE workspace_id = $1 AND id = $2),
		(SELECT webhook_secret FROM agents WHERE workspace_id = $1 AND id = $2),
		EXISTS (SELECT 1 FROM evaluation_rules WHERE workspace_id = $1 AND enabled = $3 AND (agent_id IS NULL OR agent_id = $2))`,
		x.WorkspaceID, x.AgentID, true).Scan(&e.url, &e.secret, &e.rules)
	if err != nil {
		return fmt.Errorf("read the hooks' settings of execution %s: %w", x.ID, err)
	}
	tx := *s
	tx.ended = e
	for _, h := range *hs {
		if err := h.fn(ctx, &tx, x); err != nil {
			return err
		}
	}
	return nil
}

// endedFor returns what runTerminalHook read of the ending run of agentID, or nil.
func (s *Store) endedFor(ws, agentID string) *endedRun {
	if e := s.ended; e != nil && e.ws == ws && e.agentID == agentID {
		return e
	}
	return nil
}

const deliveryColumns = `id, workspace_id, execution_id, target_type, target_id, url, event_type, status, attempts,
	next_attempt_at, last_attempt_at, last_response_code, last_error, delivered_at, expires_at, created_at, updated_at`

func scanDelivery(row interface{ Scan(...any) error }, extra ...any) (*domain.WebhookDelivery, error) {
	var d domain.WebhookDelivery
	var next, last, delivered domain.Time
	var code sql.NullInt64
	var lastErr sql.NullString
	dest := []any{&d.ID, &d.WorkspaceID, &d.ExecutionID, &d.TargetType, &d.TargetID, &d.URL, &d.EventType, &d.Status, &d.Attempts,
		&next, &last, &code, &lastErr, &delivered, &d.ExpiresAt, &d.CreatedAt, &d.UpdatedAt}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	if !next.IsZero() {
		d.NextAttemptAt = &next
	}
	if !last.IsZero() {
		d.LastAttemptAt = &last
	}
	if !delivered.IsZero() {
		d.DeliveredAt = &delivered
	}
	if code.Valid {
		n := int(code.Int64)
		d.LastResponseCode = &n
	}
	if lastErr.Valid {
		d.LastError = &lastErr.String
	}
	return &d, nil
}

// WebhookDeliveryCreate adds a pending delivery, due at once. d.ID must be set (the secret
// is sealed to it), d.Secret sealed, d.Payload the body; a zero d.ExpiresAt is
// DefaultDeliveryWindow from now.
func (s *Store) WebhookDeliveryCreate(ctx context.Context, d *domain.WebhookDelivery) error {
	if d.ID == "" || d.Secret == "" {
		return errors.New("webhook delivery: id and sealed secret are required")
	}
	now := domain.Now()
	d.Status, d.Attempts, d.CreatedAt, d.UpdatedAt, d.NextAttemptAt = domain.DeliveryPending, 0, now, now, &now
	if d.ExpiresAt.IsZero() {
		d.ExpiresAt = domain.Time{Time: now.Add(domain.DefaultDeliveryWindow)}
	}
	_, err := s.exec(ctx, `INSERT INTO webhook_deliveries (id, workspace_id, execution_id, target_type, target_id, url, secret,
		event_type, payload, status, attempts, next_attempt_at, expires_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, $11, $12, $11, $11)`,
		d.ID, d.WorkspaceID, d.ExecutionID, d.TargetType, d.TargetID, d.URL, d.Secret, d.EventType, string(d.Payload), d.Status, now, d.ExpiresAt)
	if err != nil {
		return fmt.Errorf("insert webhook delivery: %w", err)
	}
	return nil
}

// WebhookDeliveryList returns one page of a workspace's deliveries, newest first (without
// their payloads).
func (s *Store) WebhookDeliveryList(ctx context.Context, ws string, f domain.WebhookDeliveryFilter, p domain.Page) ([]*domain.WebhookDelivery, int, error) {
	where, args := whereClause("", ws, []cond{{"execution_id = $%d", f.ExecutionID}, {"status = $%d", f.Status}})
	return listPage(ctx, s, "webhook_deliveries", deliveryColumns, where, args, "", p, func(row interface{ Scan(...any) error }) (*domain.WebhookDelivery, error) { return scanDelivery(row) })
}

// WebhookDeliveryGet returns one delivery of the workspace with its payload.
func (s *Store) WebhookDeliveryGet(ctx context.Context, ws, id string) (*domain.WebhookDelivery, error) {
	var payload string
	row := s.r.QueryRowContext(ctx, "SELECT "+deliveryColumns+", payload FROM webhook_deliveries WHERE workspace_id = $1 AND id = $2", ws, id)
	d, err := scanDelivery(row, &payload)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("webhook delivery", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get webhook delivery %s: %w", id, err)
	}
	d.Payload = json.RawMessage(payload)
	return d, nil
}

// WebhookDeliveryClaim takes up to limit pending deliveries due at now for one attempt by
// node: each gets its attempt counted and a lease of the given length (on the database's
// clock), during which no other node takes it. It returns them with payload and sealed
// secret. A node that stops mid-attempt leaves its lease to expire; the row is then due again.
func (s *Store) WebhookDeliveryClaim(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*domain.WebhookDelivery, error) {
	return claimDue(ctx, s, "webhook_deliveries", "webhook deliveries", deliveryColumns+", payload, secret", node, now, lease, limit,
		func(row interface{ Scan(...any) error }) (*domain.WebhookDelivery, error) {
			var payload string
			var secret string
			d, err := scanDelivery(row, &payload, &secret)
			if err != nil {
				return nil, err
			}
			d.Payload, d.Secret = json.RawMessage(payload), secret
			return d, nil
		})
}

// WebhookDeliveryRecord writes the outcome of attempt number `attempt` made by node and ends
// its lease. It reports false, writing nothing, when the node no longer holds that attempt
// (its lease expired and another node claimed the row).
func (s *Store) WebhookDeliveryRecord(ctx context.Context, id, node string, attempt int, a domain.WebhookAttempt) (bool, error) {
	var next, delivered, code, lastErr any
	if a.Status == domain.DeliveryPending {
		next = a.Next.UnixMilli()
	}
	if a.Status == domain.DeliveryDelivered {
		delivered = a.At.UnixMilli()
	}
	if a.ResponseCode != 0 {
		code = a.ResponseCode
	}
	if a.Error != "" {
		lastErr = a.Error
	}
	res, err := s.exec(ctx, `UPDATE webhook_deliveries SET status = $1, next_attempt_at = $2, last_attempt_at = $3,
		last_response_code = $4, last_error = $5, delivered_at = $6, lease_owner = NULL, lease_expires_at = NULL, updated_at = $7
		WHERE id = $8 AND lease_owner = $9 AND attempts = $10 AND status = 'pending'`,
		a.Status, next, a.At.UnixMilli(), code, lastErr, delivered, domain.Now(), id, node, attempt)
	if err != nil {
		return false, fmt.Errorf("record webhook delivery %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// WebhookDeliveryRetry makes a delivered or failed delivery pending again, due at now, with
// attempts until `until`; a pending one is a *ConflictError (it is being tried already).
func (s *Store) WebhookDeliveryRetry(ctx context.Context, ws, id string, now, until time.Time) (*domain.WebhookDelivery, error) {
	d, err := scanDelivery(s.w.QueryRowContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $1,
		expires_at = $2, delivered_at = NULL, updated_at = $3 WHERE workspace_id = $4 AND id = $5 AND status <> 'pending'
		RETURNING `+deliveryColumns, now.UnixMilli(), until.UnixMilli(), domain.Now(), ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		cur, err := s.WebhookDeliveryGet(ctx, ws, id)
		if err != nil {
			return nil, err
		}
		next := ""
		if cur.NextAttemptAt != nil {
			next = "; its next attempt is due at " + cur.NextAttemptAt.UTC().Format(time.RFC3339)
		}
		return nil, &ConflictError{Message: fmt.Sprintf("webhook delivery %s is pending already%s", id, next)}
	}
	if err != nil {
		return nil, fmt.Errorf("retry webhook delivery %s: %w", id, err)
	}
	return d, nil
}

// WebhookDeliveryPrune deletes up to limit settled (delivered or failed) deliveries last
// changed before `before`, oldest first, and returns how many it deleted.
func (s *Store) WebhookDeliveryPrune(ctx context.Context, before time.Time, limit int) (int, error) {
	res, err := s.exec(ctx, fmt.Sprintf(`DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries
		WHERE status <> 'pending' AND updated_at < $1 ORDER BY updated_at LIMIT %d)`, max(limit, 1)), before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("prune webhook deliveries: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// AgentWebhook returns an agent's webhook URL and sealed secret; ok is false when the agent
// has none.
func (s *Store) AgentWebhook(ctx context.Context, ws, agentID string) (url, sealedSecret string, ok bool, err error) {
	var u, sec sql.NullString
	if e := s.endedFor(ws, agentID); e != nil {
		u, sec = e.url, e.secret
	} else {
		err = s.r.QueryRowContext(ctx, "SELECT webhook_url, webhook_secret FROM agents WHERE workspace_id = $1 AND id = $2", ws, agentID).Scan(&u, &sec)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("read webhook of agent %s: %w", agentID, err)
	}
	if !u.Valid || !sec.Valid || strings.TrimSpace(u.String) == "" {
		return "", "", false, nil
	}
	return u.String, sec.String, true, nil
}

// AgentWebhookSet sets (url and sealed secret both non-empty) or clears (both empty) an
// agent's completion webhook.
func (s *Store) AgentWebhookSet(ctx context.Context, ws, agentID, url, sealedSecret string) error {
	var u, sec any
	if url != "" {
		if sealedSecret == "" {
			return errors.New("agent webhook: a URL needs a secret")
		}
		u, sec = url, sealedSecret
	}
	res, err := s.exec(ctx, "UPDATE agents SET webhook_url = $1, webhook_secret = $2, updated_at = $3 WHERE workspace_id = $4 AND id = $5",
		u, sec, domain.Now(), ws, agentID)
	if err != nil {
		return fmt.Errorf("set webhook of agent %s: %w", agentID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("agent", agentID)
	}
	return nil
}
