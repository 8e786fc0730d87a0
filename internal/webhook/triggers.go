package webhook

import (
	"context"
	"errors"
	"log/slog"

	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/vault"
)

// StoreTriggerWebhook is the TriggerWebhookFunc of agent triggers kept in the store: the
// trigger's webhook_url and its secret opened with box. A trigger that is gone, has no
// webhook, or whose secret cannot be opened (the server's secret key changed) sends nothing,
// and the last case is logged; only a database error is returned.
func StoreTriggerWebhook(box *secretbox.Box, log *slog.Logger) TriggerWebhookFunc {
	return func(ctx context.Context, tx *store.Store, ws, triggerID string) (string, string, bool, error) {
		url, secret, err := vault.TriggerWebhook(ctx, tx, ws, triggerID, box)
		switch {
		case store.IsNotFound(err):
			return "", "", false, nil
		case errors.Is(err, secretbox.ErrDecrypt):
			log.Error("trigger webhook secret cannot be decrypted; no webhook sent (was the secret key changed?)", "trigger_id", triggerID)
			return "", "", false, nil
		case err != nil:
			return "", "", false, err
		case url == "" || secret == "":
			return "", "", false, nil
		}
		return url, secret, true, nil
	}
}
