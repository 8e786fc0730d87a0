package store

import (
	"context"
	"encoding/json"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
)

// The store keeps secrets only sealed: internal/vault seals and opens them above it. The
// store's tests cannot import vault (it imports store), so these helpers seal and open with
// secretbox the way vault does, to check what the store keeps.

func credentialCreate(ctx context.Context, st *Store, c *domain.Credential, value string, box *secretbox.Box) (*domain.Credential, error) {
	if c.ID == "" {
		c.ID = NewID()
	}
	return st.CredentialCreate(ctx, c, domain.SealedSecret{Sealed: box.Seal(c.WorkspaceID, c.ID, value), Masked: secretbox.Mask(value)})
}

func credentialUpdate(ctx context.Context, st *Store, ws, id string, p domain.CredentialPatch, box *secretbox.Box) (*domain.Credential, error) {
	var secret *domain.SealedSecret
	if p.Value != nil {
		secret = &domain.SealedSecret{Sealed: box.Seal(ws, id, *p.Value), Masked: secretbox.Mask(*p.Value)}
	}
	return st.CredentialUpdate(ctx, ws, id, p, secret)
}

func credentialReveal(ctx context.Context, st *Store, ws, id string, box *secretbox.Box) (string, error) {
	sealed, err := st.CredentialSealed(ctx, ws, id)
	if err != nil {
		return "", err
	}
	return box.Open(ws, id, sealed)
}

// sealedTrigger returns config with the masks of secrets and the secrets sealed for trigger id.
func sealedTrigger(t testingT, box *secretbox.Box, ws, id string, config domain.JSONObject, secrets domain.TriggerSecrets) (domain.JSONObject, string) {
	out := domain.JSONObject{}
	for k, v := range config {
		out[k] = v
	}
	if len(secrets) == 0 {
		return out, ""
	}
	for k, v := range secrets {
		out[k] = secretbox.Mask(v)
	}
	raw, err := json.Marshal(map[string]string(secrets))
	if err != nil {
		t.Fatal(err)
	}
	return out, box.Seal(ws, id, string(raw))
}

// openedTrigger opens a trigger's sealed secrets.
func openedTrigger(t testingT, box *secretbox.Box, ws, id, sealed string) (domain.TriggerSecrets, error) {
	out := domain.TriggerSecrets{}
	if sealed == "" {
		return out, nil
	}
	raw, err := box.Open(ws, id, sealed)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

type testingT interface{ Fatal(args ...any) }
