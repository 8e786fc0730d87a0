package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/webhook"
)

// webhookChange is what a create or PATCH of an agent asks of its completion webhook.
type webhookChange struct {
	url, secret *string // nil: not given
	clear       bool    // webhook_url null or "": remove the webhook
}

// webhookChangeOf reads the webhook fields of an agent request: a JSON null webhook_url
// becomes "" (remove the webhook), and a null or "" webhook_secret nil (none given), as the
// request's Validate reads them.
func webhookChangeOf(body []byte, url, secret **string) webhookChange {
	if isNullField(body, "webhook_url") {
		*url = ptr("")
	}
	if isNullField(body, "webhook_secret") || (*secret != nil && **secret == "") {
		*secret = nil
	}
	c := webhookChange{url: *url, secret: *secret}
	if c.url != nil && *c.url == "" {
		c.url, c.clear = nil, true
	}
	return c
}

func (c webhookChange) empty() bool { return c.url == nil && c.secret == nil && !c.clear }

// applyWebhook writes an agent's webhook change inside tx. It returns the secret it
// generated ("" when none): a webhook_url set without a secret on an agent that has none.
func (s *Server) applyWebhook(ctx context.Context, tx *store.Store, ws, agentID string, c webhookChange) (string, error) {
	if c.empty() {
		return "", nil
	}
	if c.clear {
		return "", tx.AgentWebhookSet(ctx, ws, agentID, "", "")
	}
	url, sealed, has, err := tx.AgentWebhook(ctx, ws, agentID)
	if err != nil {
		return "", err
	}
	if c.url != nil {
		url = *c.url
	} else if !has {
		return "", domain.Invalid("webhook_secret", "the agent has no webhook_url; set one with it")
	}
	generated := ""
	switch {
	case c.secret != nil:
		sealed = s.cfg.Secrets.Seal(ws, agentID, *c.secret)
	case !has:
		generated = webhook.NewSecret()
		sealed = s.cfg.Secrets.Seal(ws, agentID, generated)
	}
	return generated, tx.AgentWebhookSet(ctx, ws, agentID, url, sealed)
}

// writeAgentWithSecret answers with an agent whose generated webhook secret is shown this
// once; a replay of the request (Idempotency-Key) answers without it, as the secret is
// not kept.
func writeAgentWithSecret(w http.ResponseWriter, status int, a *domain.Agent, secret, msg string) {
	if secret != "" {
		if b, err := json.Marshal(envelope{Data: a, Message: msg}); err == nil {
			setReplay(w, b)
		}
		shown := *a
		shown.WebhookSecret = secret
		a = &shown
	}
	writeJSON(w, status, envelope{Data: a, Message: msg})
}

func (s *Server) webhookRoutes() []route {
	const tag = "Webhook deliveries"
	return []route{
		{method: "POST", path: v1 + "/agents/{id}/webhook-secret/rotate", op: "rotateAgentWebhookSecret", tag: "Agents", scope: "agents:write",
			summary: "Replace an agent's webhook signing secret",
			resp:    domain.Agent{}, errs: []int{http.StatusConflict}, h: s.rotateAgentWebhookSecret},
		{method: "GET", path: v1 + "/webhook-deliveries", op: "listWebhookDeliveries", tag: tag, scope: "executions:read", list: true,
			summary: "List completion webhook deliveries, newest first",
			params: []param{{name: "execution_id", typ: "string", desc: "Only the deliveries of this execution."},
				{name: "status", typ: "string", enum: domain.DeliveryStatuses, desc: "Only deliveries in this status."}},
			resp: domain.WebhookDelivery{}, nocache: true, h: s.listWebhookDeliveries},
		{method: "GET", path: v1 + "/webhook-deliveries/{id}", op: "getWebhookDelivery", tag: tag, scope: "executions:read",
			summary: "Get a completion webhook delivery",
			resp:    domain.WebhookDelivery{}, nocache: true, h: byID(s, s.store.WebhookDeliveryGet)},
		{method: "POST", path: v1 + "/webhook-deliveries/{id}/retry", op: "retryWebhookDelivery", tag: tag, scope: "executions:read",
			summary: "Send a delivered or failed message again",
			resp:    domain.WebhookDelivery{}, errs: []int{http.StatusConflict}, h: s.retryWebhookDelivery},
	}
}

func (s *Server) retryWebhookDelivery(w http.ResponseWriter, r *http.Request) error {
	now := time.Now()
	d, err := s.store.WebhookDeliveryRetry(r.Context(), s.workspace(r), pathID(r, "id"), now, now.Add(webhook.RetryFor))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, d)
	return nil
}

func (s *Server) rotateAgentWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	ws, id := s.workspace(r), pathID(r, "id")
	secret := webhook.NewSecret()
	var a *domain.Agent
	err := s.store.InTx(r.Context(), func(tx *store.Store) error {
		url, _, has, err := tx.AgentWebhook(r.Context(), ws, id)
		if err != nil {
			return err
		}
		if !has {
			if _, err := tx.AgentGet(r.Context(), ws, id); err != nil {
				return err
			}
			return conflict("agent %s has no webhook_url: set one with PATCH /agents/%s", id, id)
		}
		if err := tx.AgentWebhookSet(r.Context(), ws, id, url, s.cfg.Secrets.Seal(ws, id, secret)); err != nil {
			return err
		}
		a, err = tx.AgentGet(r.Context(), ws, id)
		return err
	})
	if err != nil {
		return err
	}
	writeAgentWithSecret(w, http.StatusOK, a, secret, "")
	return nil
}

func (s *Server) listWebhookDeliveries(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := domain.WebhookDeliveryFilter{ExecutionID: q.Get("execution_id"), Status: q.Get("status")}
	// status is a documented enum: the route table checks it against the documented values.
	items, total, err := s.store.WebhookDeliveryList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}
