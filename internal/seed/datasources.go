package seed

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentplane/agentplane/internal/datasource"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/vault"
)

type credentialEntry struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Type        string         `json:"type"`
	Provider    string         `json:"provider"`
	Description string         `json:"description"`
	Value       string         `json:"value"`
	Metadata    map[string]any `json:"metadata"`
}

// credential loads one entry of credentials.json, sealing its value with the loader's box.
// Errors never quote the value.
func (l *loader) credential(ctx context.Context, e json.RawMessage) error {
	var c credentialEntry
	if err := strict(e, &c); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(c.Name) == "":
		return fmt.Errorf("name is required")
	case len([]rune(c.Name)) > 200:
		return fmt.Errorf("name must be at most 200 characters")
	case !contains(domain.CredentialTypes, c.Type):
		return fmt.Errorf("type %q is not one of %v", c.Type, domain.CredentialTypes)
	case strings.TrimSpace(c.Value) == "":
		return fmt.Errorf("value is required")
	case len(c.Value) > domain.CredentialValueMaxBytes:
		return fmt.Errorf("value must be at most %d bytes", domain.CredentialValueMaxBytes)
	case l.box == nil:
		return fmt.Errorf("no secret box to encrypt the value with")
	}
	_, err := vault.CredentialCreate(ctx, l.st, &domain.Credential{ID: c.ID, WorkspaceID: l.ws, Name: strings.TrimSpace(c.Name), Type: c.Type,
		Provider: c.Provider, Description: c.Description, Metadata: c.Metadata}, c.Value, l.box)
	return err
}

type dataSourceEntry struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Type         string         `json:"type"`
	Description  string         `json:"description"`
	CredentialID string         `json:"credential_id"`
	Config       map[string]any `json:"config"`
}

// dataSource loads one entry of data_sources.json as a data source with an active version 1.
func (l *loader) dataSource(ctx context.Context, e json.RawMessage) error {
	var d dataSourceEntry
	if err := strict(e, &d); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(d.Name) == "":
		return fmt.Errorf("name is required")
	case len([]rune(d.Name)) > 200:
		return fmt.Errorf("name must be at most 200 characters")
	case !contains(domain.DataSourceTypes, d.Type):
		return fmt.Errorf("type %q is not one of %v", d.Type, domain.DataSourceTypes)
	}
	if d.Config == nil {
		d.Config = map[string]any{}
	}
	if _, err := datasource.ParseConfig(d.Type, d.Config); err != nil {
		return err
	}
	var credID *string
	if d.CredentialID != "" {
		if _, err := l.st.CredentialGet(ctx, l.ws, d.CredentialID); err != nil {
			return fmt.Errorf("credential_id: %w", err)
		}
		credID = &d.CredentialID
	}
	_, err := l.st.DataSourceCreate(ctx, &domain.DataSource{ID: d.ID, WorkspaceID: l.ws, Name: strings.TrimSpace(d.Name), Type: d.Type,
		Description: d.Description, CredentialID: credID}, domain.JSONObject(d.Config), "")
	return err
}
