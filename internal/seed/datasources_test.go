package seed

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/store/storetest"
	"github.com/agentplane/agentplane/internal/vault"
)

func TestCredentialAndDataSourceLoaders(t *testing.T) {
	ctx := context.Background()
	st := storetest.Memory(t)
	ws := store.NewID()
	storetest.Workspace(t, st, &domain.Workspace{ID: ws, Name: "Seed", Slug: "seed"})
	box := secretbox.NewRandom()
	l := &loader{st: st, ws: ws, box: box}

	// The built-in seed files load as they are.
	load := func(file string, fn func(context.Context, json.RawMessage) error) []json.RawMessage {
		t.Helper()
		raw, err := data.ReadFile("data/" + file)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := splitEntries(file, raw)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range entries {
			if err := fn(ctx, e); err != nil {
				t.Fatalf("%s entry %d: %v", file, i, err)
			}
		}
		return entries
	}
	creds := load("credentials.json", l.credential)
	sources := load("data_sources.json", l.dataSource)

	var first struct{ ID, Value string }
	if err := json.Unmarshal(creds[0], &first); err != nil {
		t.Fatal(err)
	}
	c, err := st.CredentialGet(ctx, ws, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaskedValue != secretbox.Mask(first.Value) || strings.Contains(c.MaskedValue, first.Value) {
		t.Fatalf("masked %q", c.MaskedValue)
	}
	if v, err := vault.CredentialReveal(ctx, st, ws, first.ID, box); err != nil || v != first.Value {
		t.Fatalf("reveal: %v", err)
	}
	var orders struct {
		ID           string `json:"id"`
		CredentialID string `json:"credential_id"`
	}
	if err := json.Unmarshal(sources[0], &orders); err != nil {
		t.Fatal(err)
	}
	d, err := st.DataSourceGet(ctx, ws, orders.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.CredentialID == nil || *d.CredentialID != orders.CredentialID || d.ActiveVersion == nil || *d.ActiveVersion != 1 || d.Config["tables"] == nil {
		t.Fatalf("seeded data source %+v", d)
	}
	if _, total, _ := st.DataSourceList(ctx, ws, domain.DataSourceFilter{}, domain.Page{Page: 1, Limit: 20}); total != len(sources) {
		t.Fatalf("%d data sources, want %d", total, len(sources))
	}

	bad := []struct {
		name  string
		fn    func(context.Context, json.RawMessage) error
		entry string
		want  string
	}{
		{"unknown credential", l.dataSource, `{"name":"x","type":"postgres","credential_id":"missing"}`, "credential_id: credential missing not found"},
		{"unknown field", l.dataSource, `{"name":"x","type":"postgres","notes":"n"}`, "unknown field"},
		{"bad type", l.dataSource, `{"name":"x","type":"oracle"}`, "type"},
		{"bad config", l.dataSource, `{"name":"x","type":"postgres","config":{"max_rows":-1}}`, "config.max_rows"},
		{"no name", l.dataSource, `{"type":"http"}`, "name"},
		{"credential without value", l.credential, `{"name":"x","type":"api_key"}`, "value"},
		{"credential bad type", l.credential, `{"name":"x","type":"password","value":"v"}`, "type"},
		{"credential unknown field", l.credential, `{"name":"x","type":"api_key","value":"v","secret":"s"}`, "unknown field"},
	}
	for _, b := range bad {
		err := b.fn(ctx, json.RawMessage(b.entry))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: %v, want an error mentioning %q", b.name, err, b.want)
		}
	}
	noBox := &loader{st: st, ws: ws}
	if err := noBox.credential(ctx, json.RawMessage(`{"name":"x","type":"api_key","value":"topsecret-value"}`)); err == nil || strings.Contains(err.Error(), "topsecret") {
		t.Fatalf("credential without a box: %v", err)
	}
}
