// Package vault seals and opens the secret values of credentials and agent triggers above the
// store: the store keeps and returns only their sealed text and masks, and never sees a key.
// Each function takes the store as the small interface of what it reads and writes.
package vault

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// CredentialCreator is what CredentialCreate writes. *store.Store is one.
type CredentialCreator interface {
	CredentialCreate(ctx context.Context, c *domain.Credential, secret domain.SealedSecret) (*domain.Credential, error)
}

// CredentialOpener is what the functions that open credentials read. *store.Store is one.
type CredentialOpener interface {
	CredentialSealed(ctx context.Context, ws, id string) (string, error)
	CredentialSealedFor(ctx context.Context, ws, id, provider string) (*domain.Credential, string, error)
	CredentialPoolSealed(ctx context.Context, ws, provider string) ([]*domain.Credential, []string, error)
}

// CredentialStore is what every credential function reads and writes. *store.Store is one.
type CredentialStore interface {
	CredentialCreator
	CredentialOpener
	CredentialUpdate(ctx context.Context, ws, id string, p domain.CredentialPatch, secret *domain.SealedSecret) (*domain.Credential, error)
	CredentialSecretsAll(ctx context.Context) ([]domain.CredentialSecret, error)
	CredentialMaskSet(ctx context.Context, ws, id, masked string) error
}

// TriggerOpener is what the functions that open trigger secrets read. *store.Store is one.
type TriggerOpener interface {
	TriggerSecretsSealed(ctx context.Context, ws, id string) (string, error)
	TriggerByToken(ctx context.Context, tokenHash string) (*domain.Trigger, string, error)
	TriggerWebhookSealed(ctx context.Context, ws, id string) (url, sealed string, err error)
}

// TriggerStore is what every trigger function reads and writes. *store.Store is one.
type TriggerStore interface {
	TriggerOpener
	TriggerCreate(ctx context.Context, t *domain.Trigger, tokenHash, sealed string) (*domain.Trigger, error)
	TriggerUpdate(ctx context.Context, ws, id string, p domain.TriggerPatch, sealed *string) (*domain.Trigger, error)
}

var (
	_ CredentialStore = (*store.Store)(nil)
	_ TriggerStore    = (*store.Store)(nil)
)

// seal seals value with box for its workspace and id, and masks it.
func seal(box *secretbox.Box, ws, id, value string) domain.SealedSecret {
	return domain.SealedSecret{Sealed: box.Seal(ws, id, value), Masked: secretbox.Mask(value)}
}

// CredentialCreate stores a credential with value sealed with box for its workspace and id (a
// preset c.ID is kept). It returns the stored credential, masked.
func CredentialCreate(ctx context.Context, st CredentialCreator, c *domain.Credential, value string, box *secretbox.Box) (*domain.Credential, error) {
	if box == nil {
		return nil, errors.New("create credential: no secret box")
	}
	if c.ID == "" {
		c.ID = store.NewID()
	}
	return st.CredentialCreate(ctx, c, seal(box, c.WorkspaceID, c.ID, value))
}

// CredentialUpdate changes the given fields of a credential; a new Value is sealed again and
// its masked form recomputed.
func CredentialUpdate(ctx context.Context, st CredentialStore, ws, id string, p domain.CredentialPatch, box *secretbox.Box) (*domain.Credential, error) {
	var secret *domain.SealedSecret
	if p.Value != nil {
		if box == nil {
			return nil, errors.New("update credential: no secret box")
		}
		s := seal(box, ws, id, *p.Value)
		secret = &s
	}
	return st.CredentialUpdate(ctx, ws, id, p, secret)
}

// CredentialReveal returns the value of a credential for the runtime that must use it. It is
// never exposed over HTTP.
func CredentialReveal(ctx context.Context, st CredentialOpener, ws, id string, box *secretbox.Box) (string, error) {
	if box == nil {
		return "", errors.New("reveal credential: no secret box")
	}
	sealed, err := st.CredentialSealed(ctx, ws, id)
	if err != nil {
		return "", err
	}
	return open(box, ws, id, sealed)
}

func open(box *secretbox.Box, ws, id, sealed string) (string, error) {
	v, err := box.Open(ws, id, sealed)
	if err != nil {
		return "", fmt.Errorf("open credential %s: %w", id, err)
	}
	return v, nil
}

// CredentialForRun finds the credential a run calls its model with (id when set, else the
// workspace's default or newest for provider) and opens its value, in one read. The value is
// for the runtime only; it is never exposed over HTTP.
func CredentialForRun(ctx context.Context, st CredentialOpener, ws, id, provider string, box *secretbox.Box) (*domain.Credential, string, error) {
	if box == nil {
		return nil, "", errors.New("reveal credential: no secret box")
	}
	c, sealed, err := st.CredentialSealedFor(ctx, ws, id, provider)
	if err != nil {
		return nil, "", err
	}
	v, err := open(box, ws, c.ID, sealed)
	if err != nil {
		return nil, "", err
	}
	return c, v, nil
}

// CredentialPool returns the credentials a workspace's runs call a model provider with, with
// their opened values (see store.CredentialPoolSealed for which).
func CredentialPool(ctx context.Context, st CredentialOpener, ws, provider string, box *secretbox.Box) ([]*domain.Credential, []string, error) {
	if box == nil {
		return nil, nil, errors.New("reveal credentials: no secret box")
	}
	pool, sealed, err := st.CredentialPoolSealed(ctx, ws, provider)
	if err != nil {
		return nil, nil, err
	}
	values := make([]string, len(pool))
	for i, c := range pool {
		if values[i], err = open(box, ws, c.ID, sealed[i]); err != nil {
			return nil, nil, err
		}
	}
	return pool, values, nil
}

// CredentialMasksRefresh recomputes every credential's masked value with the current masking
// rule (values are only stored sealed, so a change of the rule needs the key); it returns how
// many changed. A credential that cannot be opened with box is left as it is.
func CredentialMasksRefresh(ctx context.Context, st CredentialStore, box *secretbox.Box) (int, error) {
	all, err := st.CredentialSecretsAll(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range all {
		v, err := box.Open(r.WorkspaceID, r.ID, r.Sealed)
		if err != nil {
			continue
		}
		if m := secretbox.Mask(v); m != r.Masked {
			if err := st.CredentialMaskSet(ctx, r.WorkspaceID, r.ID, m); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
