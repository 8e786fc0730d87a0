package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// sealTrigger seals secrets for the trigger and returns them with config extended by the
// masked form of every secret.
func sealTrigger(box *secretbox.Box, ws, id string, config domain.JSONObject, secrets domain.TriggerSecrets) (domain.JSONObject, string, error) {
	out := domain.JSONObject{}
	for k, v := range config {
		out[k] = v
	}
	if len(secrets) == 0 {
		return out, "", nil
	}
	if box == nil {
		return nil, "", errors.New("seal trigger secrets: no secret box")
	}
	for k, v := range secrets {
		out[k] = secretbox.Mask(v)
	}
	raw, err := json.Marshal(map[string]string(secrets))
	if err != nil {
		return nil, "", err
	}
	return out, box.Seal(ws, id, string(raw)), nil
}

func openTriggerSecrets(box *secretbox.Box, ws, id, sealed string) (domain.TriggerSecrets, error) {
	out := domain.TriggerSecrets{}
	if sealed == "" {
		return out, nil
	}
	if box == nil {
		return nil, errors.New("open trigger secrets: no secret box")
	}
	raw, err := box.Open(ws, id, sealed)
	if err != nil {
		return nil, fmt.Errorf("open trigger %s secrets: %w", id, err)
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("decode trigger %s secrets: %w", id, err)
	}
	return out, nil
}

// TriggerCreate stores a trigger (a preset t.ID is kept) with the SHA-256 hash of its hook
// token (empty for none) and its secrets sealed with box, their masks in its config. It
// returns the stored trigger.
func TriggerCreate(ctx context.Context, st TriggerStore, t *domain.Trigger, tokenHash string, secrets domain.TriggerSecrets, box *secretbox.Box) (*domain.Trigger, error) {
	if t.ID == "" {
		t.ID = store.NewID()
	}
	config, sealed, err := sealTrigger(box, t.WorkspaceID, t.ID, t.Config, secrets)
	if err != nil {
		return nil, err
	}
	sealedT := *t
	sealedT.Config = config
	return st.TriggerCreate(ctx, &sealedT, tokenHash, sealed)
}

// TriggerUpdate changes the given fields of a trigger; Config and Secrets change together,
// the secrets sealed again with box.
func TriggerUpdate(ctx context.Context, st TriggerStore, ws, id string, p domain.TriggerPatch, box *secretbox.Box) (*domain.Trigger, error) {
	if p.Config == nil && p.Secrets == nil {
		return st.TriggerUpdate(ctx, ws, id, p, nil)
	}
	if p.Config == nil || p.Secrets == nil {
		return nil, errors.New("update trigger: config and secrets change together")
	}
	config, sealed, err := sealTrigger(box, ws, id, *p.Config, *p.Secrets)
	if err != nil {
		return nil, err
	}
	p.Config, p.Secrets = &config, nil
	return st.TriggerUpdate(ctx, ws, id, p, &sealed)
}

// TriggerSecretsGet opens the sealed secrets of a trigger; an empty map when it has none.
func TriggerSecretsGet(ctx context.Context, st TriggerOpener, ws, id string, box *secretbox.Box) (domain.TriggerSecrets, error) {
	sealed, err := st.TriggerSecretsSealed(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	return openTriggerSecrets(box, ws, id, sealed)
}

// TriggerByToken finds the trigger whose hook token hashes to tokenHash, with its secrets
// opened; a *store.NotFoundError when there is none.
func TriggerByToken(ctx context.Context, st TriggerOpener, tokenHash string, box *secretbox.Box) (*domain.Trigger, domain.TriggerSecrets, error) {
	t, sealed, err := st.TriggerByToken(ctx, tokenHash)
	if err != nil {
		return nil, nil, err
	}
	secrets, err := openTriggerSecrets(box, t.WorkspaceID, t.ID, sealed)
	if err != nil {
		return nil, nil, err
	}
	return t, secrets, nil
}

// TriggerWebhook returns the completion webhook of a trigger: its URL and signing secret
// (opened with box), both "" when it has none.
func TriggerWebhook(ctx context.Context, st TriggerOpener, ws, id string, box *secretbox.Box) (url, secret string, err error) {
	url, sealed, err := st.TriggerWebhookSealed(ctx, ws, id)
	if err != nil || url == "" {
		return "", "", err
	}
	secrets, err := openTriggerSecrets(box, ws, id, sealed)
	if err != nil {
		return "", "", err
	}
	return url, secrets[domain.WebhookSecretKey], nil
}
