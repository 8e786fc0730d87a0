package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"

	"github.com/agentplane/agentplane/internal/secretbox"
)

// dsTestStores opens the stores the data source and credential tests run on: in-memory
// SQLite always, and PostgreSQL when TEST_DATABASE_URL is set. Each gets a fresh workspace.
func dsTestStores(t *testing.T) map[Dialect]struct {
	st *Store
	ws string
} {
	t.Helper()
	ctx := context.Background()
	urls := map[Dialect]string{SQLite: "memory"}
	if u := dbs.URL(t); u != "" {
		urls[Postgres] = u
	}
	out := map[Dialect]struct {
		st *Store
		ws string
	}{}
	for d, u := range urls {
		st, err := Open(ctx, u)
		if err != nil {
			t.Fatalf("open %s: %v", d, err)
		}
		t.Cleanup(func() { st.Close() })
		ws := NewID()
		if _, err := st.WorkspaceCreate(ctx, &domain.Workspace{ID: ws, Name: "DS test", Slug: "ds-" + strings.ToLower(ws)}); err != nil {
			t.Fatal(err)
		}
		out[d] = struct {
			st *Store
			ws string
		}{st, ws}
	}
	return out
}

func TestCredentialStore(t *testing.T) {
	ctx := context.Background()
	box := secretbox.NewRandom()
	for dialect, env := range dsTestStores(t) {
		t.Run(string(dialect), func(t *testing.T) {
			st, ws := env.st, env.ws
			const secret = "sk-test-0123456789abcdefghijklmnopqrstuvwxyz-WXYZ"
			presetID := NewID()
			c, err := credentialCreate(ctx, st, &domain.Credential{ID: presetID, WorkspaceID: ws, Name: "OpenAI", Type: "api_key", Provider: "openai",
				Metadata: domain.JSONObject{"header": "Authorization"}}, secret, box)
			if err != nil {
				t.Fatal(err)
			}
			if c.ID != presetID || c.MaskedValue != "sk-…WXYZ" || c.Metadata["header"] != "Authorization" || c.CreatedAt.IsZero() {
				t.Fatalf("created %+v", c)
			}
			if _, err := credentialCreate(ctx, st, &domain.Credential{ID: presetID, WorkspaceID: ws, Name: "dup", Type: "api_key"}, "x", box); !isConflict(err) {
				t.Fatalf("duplicate id: %v", err)
			}
			var sealed string
			if err := st.r.QueryRowContext(ctx, "SELECT secret FROM credentials WHERE id = $1", c.ID).Scan(&sealed); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(sealed, secret) || !strings.HasPrefix(sealed, "v1:") {
				t.Fatalf("stored secret is not sealed: %q", sealed)
			}
			if v, err := credentialReveal(ctx, st, ws, c.ID, box); err != nil || v != secret {
				t.Fatalf("reveal: %q, %v", v, err)
			}
			if _, err := credentialReveal(ctx, st, ws, c.ID, secretbox.NewRandom()); err == nil {
				t.Fatal("another key revealed the value")
			}
			if _, err := credentialReveal(ctx, st, NewID(), c.ID, box); !IsNotFound(err) {
				t.Fatalf("reveal from another workspace: %v", err)
			}
			other, err := credentialCreate(ctx, st, &domain.Credential{WorkspaceID: ws, Name: "Orders DB", Type: "database_url", Provider: "postgres"}, "postgres://u:p@h/db", box)
			if err != nil {
				t.Fatal(err)
			}
			// A sealed value copied to another row does not open there.
			if _, err := st.exec(ctx, "UPDATE credentials SET secret = $1 WHERE id = $2", sealed, other.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := credentialReveal(ctx, st, ws, other.ID, box); err == nil {
				t.Fatal("a sealed value opened under another id")
			}

			for _, tc := range []struct {
				f    domain.CredentialFilter
				want int
			}{
				{domain.CredentialFilter{}, 2}, {domain.CredentialFilter{Type: "api_key"}, 1}, {domain.CredentialFilter{Provider: "postgres"}, 1},
				{domain.CredentialFilter{Query: "ORDERS"}, 1}, {domain.CredentialFilter{Query: "%"}, 0},
			} {
				items, total, err := st.CredentialList(ctx, ws, tc.f, domain.Page{Page: 1, Limit: 20})
				if err != nil || total != tc.want || len(items) != tc.want {
					t.Fatalf("list %+v: %d/%d, %v", tc.f, len(items), total, err)
				}
			}
			p1, _, _ := st.CredentialList(ctx, ws, domain.CredentialFilter{}, domain.Page{Page: 1, Limit: 1})
			p2, _, _ := st.CredentialList(ctx, ws, domain.CredentialFilter{}, domain.Page{Page: 2, Limit: 1})
			if len(p1) != 1 || len(p2) != 1 || p1[0].ID == p2[0].ID {
				t.Fatalf("pages of 1: %+v %+v", p1, p2)
			}

			newValue := "sk-rotated-abcdefghijklmnopqrstuvwxyz-1234"
			name := "OpenAI (rotated)"
			u, err := credentialUpdate(ctx, st, ws, c.ID, domain.CredentialPatch{Name: &name, Value: &newValue}, box)
			if err != nil {
				t.Fatal(err)
			}
			if u.Name != name || u.MaskedValue != "sk-…1234" || u.Provider != "openai" {
				t.Fatalf("updated %+v", u)
			}
			if v, _ := credentialReveal(ctx, st, ws, c.ID, box); v != newValue {
				t.Fatalf("reveal after rotation: %q", v)
			}
			if _, err := credentialUpdate(ctx, st, ws, "missing", domain.CredentialPatch{Name: &name}, box); !IsNotFound(err) {
				t.Fatalf("update missing: %v", err)
			}

			// In use by a data source, then by an MCP tool: not deleted.
			d, err := st.DataSourceCreate(ctx, &domain.DataSource{WorkspaceID: ws, Name: "Orders", Type: "postgres", CredentialID: &c.ID}, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = st.CredentialDelete(ctx, ws, c.ID)
			var ce *ConflictError
			if !errors.As(err, &ce) || !strings.Contains(ce.Message, d.ID) || !strings.Contains(ce.Message, "data source") {
				t.Fatalf("delete in use by a data source: %v", err)
			}
			if _, err := st.DataSourceUpdate(ctx, ws, d.ID, domain.DataSourcePatch{CredentialID: &domain.NullString{}}); err != nil {
				t.Fatal(err)
			}
			toolID := NewID()
			if _, err := st.exec(ctx, `INSERT INTO mcp_tools (id, workspace_id, name, transport, credential_id, created_at, updated_at)
				VALUES ($1, $2, 'GitHub', 'http', $3, $4, $4)`, toolID, ws, c.ID, domain.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := st.CredentialDelete(ctx, ws, c.ID); !errors.As(err, &ce) || !strings.Contains(ce.Message, toolID) {
				t.Fatalf("delete in use by an MCP tool: %v", err)
			}
			if _, err := st.exec(ctx, "DELETE FROM mcp_tools WHERE id = $1", toolID); err != nil {
				t.Fatal(err)
			}
			gone, err := st.CredentialDelete(ctx, ws, c.ID)
			if err != nil || gone.ID != c.ID {
				t.Fatalf("delete: %+v, %v", gone, err)
			}
			if _, err := st.CredentialGet(ctx, ws, c.ID); !IsNotFound(err) {
				t.Fatalf("get deleted: %v", err)
			}
			if _, err := st.CredentialDelete(ctx, ws, c.ID); !IsNotFound(err) {
				t.Fatalf("delete twice: %v", err)
			}
		})
	}
}

func isConflict(err error) bool {
	var ce *ConflictError
	return errors.As(err, &ce)
}

func TestDataSourceStore(t *testing.T) {
	ctx := context.Background()
	box := secretbox.NewRandom()
	for dialect, env := range dsTestStores(t) {
		t.Run(string(dialect), func(t *testing.T) {
			st, ws := env.st, env.ws
			cred, err := credentialCreate(ctx, st, &domain.Credential{WorkspaceID: ws, Name: "DB", Type: "database_url"}, "postgres://x", box)
			if err != nil {
				t.Fatal(err)
			}
			preset := NewID()
			d, err := st.DataSourceCreate(ctx, &domain.DataSource{ID: preset, WorkspaceID: ws, Name: "Orders DB", Type: "postgres",
				Description: "replica", CredentialID: &cred.ID}, domain.JSONObject{"host": "db", "max_rows": 10.0}, "first")
			if err != nil {
				t.Fatal(err)
			}
			if d.ID != preset || d.ActiveVersion == nil || *d.ActiveVersion != 1 || d.VersionCount != 1 || d.Config["host"] != "db" ||
				d.CredentialID == nil || *d.CredentialID != cred.ID {
				t.Fatalf("created %+v", d)
			}
			if _, err := st.DataSourceCreate(ctx, &domain.DataSource{ID: preset, WorkspaceID: ws, Name: "dup", Type: "http"}, nil, ""); !isConflict(err) {
				t.Fatalf("duplicate id: %v", err)
			}
			api, err := st.DataSourceCreate(ctx, &domain.DataSource{WorkspaceID: ws, Name: "Catalog API", Type: "http"}, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			if api.CredentialID != nil || api.Config == nil || len(api.Config) != 0 {
				t.Fatalf("created without config or credential: %+v", api)
			}

			for _, tc := range []struct {
				f    domain.DataSourceFilter
				want int
			}{
				{domain.DataSourceFilter{}, 2}, {domain.DataSourceFilter{Type: "http"}, 1}, {domain.DataSourceFilter{Query: "REPLICA"}, 1}, {domain.DataSourceFilter{Query: "_"}, 0},
			} {
				items, total, err := st.DataSourceList(ctx, ws, tc.f, domain.Page{Page: 1, Limit: 20})
				if err != nil || total != tc.want || len(items) != tc.want {
					t.Fatalf("list %+v: %d/%d, %v", tc.f, len(items), total, err)
				}
			}
			p1, _, _ := st.DataSourceList(ctx, ws, domain.DataSourceFilter{}, domain.Page{Page: 1, Limit: 1})
			p2, total, _ := st.DataSourceList(ctx, ws, domain.DataSourceFilter{}, domain.Page{Page: 2, Limit: 1})
			if total != 2 || len(p1) != 1 || len(p2) != 1 || p1[0].ID == p2[0].ID {
				t.Fatalf("pages of 1: %+v %+v", p1, p2)
			}

			// Versions: creating never changes the active one; numbers come from the counter.
			v2, err := st.DataSourceVersionCreate(ctx, &domain.DataSourceVersion{WorkspaceID: ws, DataSourceID: d.ID, Config: domain.JSONObject{"host": "db2"}, Notes: "move"})
			if err != nil {
				t.Fatal(err)
			}
			if v2.Version != 2 || v2.IsActive || v2.Notes != "move" {
				t.Fatalf("v2 %+v", v2)
			}
			v5, err := st.DataSourceVersionCreate(ctx, &domain.DataSourceVersion{WorkspaceID: ws, DataSourceID: d.ID, Version: 5, Config: nil})
			if err != nil || v5.Version != 5 || len(v5.Config) != 0 {
				t.Fatalf("wanted number 5: %+v, %v", v5, err)
			}
			v6, err := st.DataSourceVersionCreate(ctx, &domain.DataSourceVersion{WorkspaceID: ws, DataSourceID: d.ID, Version: 3})
			if err != nil || v6.Version != 6 {
				t.Fatalf("a number behind the counter is not reused: %+v, %v", v6, err)
			}
			got, _ := st.DataSourceGet(ctx, ws, d.ID)
			if *got.ActiveVersion != 1 || got.VersionCount != 6 || got.Config["host"] != "db" {
				t.Fatalf("active changed by creating versions: %+v", got)
			}
			if err := st.DataSourceVersionPromote(ctx, ws, d.ID, v2.ID); err != nil {
				t.Fatal(err)
			}
			got, _ = st.DataSourceGet(ctx, ws, d.ID)
			if *got.ActiveVersion != 2 || *got.ActiveVersionID != v2.ID || got.Config["host"] != "db2" {
				t.Fatalf("after promote: %+v", got)
			}
			versions, total, err := st.DataSourceVersionList(ctx, ws, d.ID, domain.Page{Page: 1, Limit: 20})
			if err != nil || total != 4 || versions[0].Version != 6 || versions[3].Version != 1 || !versions[2].IsActive || versions[3].IsActive {
				t.Fatalf("versions %d %+v %v", total, versions, err)
			}
			if err := st.DataSourceVersionPromote(ctx, ws, d.ID, "missing"); !IsNotFound(err) {
				t.Fatalf("promote missing: %v", err)
			}
			if err := st.DataSourceVersionPromote(ctx, ws, api.ID, v2.ID); !IsNotFound(err) {
				t.Fatalf("promote a version of another data source: %v", err)
			}
			if _, err := st.DataSourceVersionGet(ctx, ws, "missing", v2.ID); err == nil || !strings.Contains(err.Error(), "data source missing") {
				t.Fatalf("version of a missing data source: %v", err)
			}
			if _, _, err := st.DataSourceVersionList(ctx, NewID(), d.ID, domain.Page{Page: 1, Limit: 20}); !IsNotFound(err) {
				t.Fatalf("versions from another workspace: %v", err)
			}
			if _, err := st.DataSourceVersionCreate(ctx, &domain.DataSourceVersion{WorkspaceID: ws, DataSourceID: "missing"}); !IsNotFound(err) {
				t.Fatalf("version of missing: %v", err)
			}

			// Patch: name, then detach the credential, then attach it again.
			name := "Orders replica"
			u, err := st.DataSourceUpdate(ctx, ws, d.ID, domain.DataSourcePatch{Name: &name})
			if err != nil || u.Name != name || u.CredentialID == nil || u.Description != "replica" {
				t.Fatalf("patch name: %+v, %v", u, err)
			}
			if u, _ = st.DataSourceUpdate(ctx, ws, d.ID, domain.DataSourcePatch{CredentialID: &domain.NullString{}}); u.CredentialID != nil {
				t.Fatalf("detach: %+v", u)
			}
			if u, _ = st.DataSourceUpdate(ctx, ws, d.ID, domain.DataSourcePatch{CredentialID: &domain.NullString{String: cred.ID, Valid: true}}); u.CredentialID == nil || *u.CredentialID != cred.ID {
				t.Fatalf("attach: %+v", u)
			}
			if _, err := st.DataSourceUpdate(ctx, NewID(), d.ID, domain.DataSourcePatch{Name: &name}); !IsNotFound(err) {
				t.Fatalf("patch from another workspace: %v", err)
			}

			// Delete removes the versions too.
			gone, err := st.DataSourceDelete(ctx, ws, d.ID)
			if err != nil || gone.ID != d.ID || *gone.ActiveVersion != 2 {
				t.Fatalf("delete: %+v, %v", gone, err)
			}
			if _, err := st.DataSourceGet(ctx, ws, d.ID); !IsNotFound(err) {
				t.Fatalf("get deleted: %v", err)
			}
			n, err := st.count(ctx, "SELECT count(*) FROM data_source_versions WHERE data_source_id = $1", []any{d.ID})
			if err != nil || n != 0 {
				t.Fatalf("%d versions remain, %v", n, err)
			}
			if _, err := st.DataSourceDelete(ctx, ws, d.ID); !IsNotFound(err) {
				t.Fatalf("delete twice: %v", err)
			}
			if _, err := st.CredentialDelete(ctx, ws, cred.ID); err != nil {
				t.Fatalf("credential free after its data source is deleted: %v", err)
			}
		})
	}
}

func TestCredentialSecretsAllAndMaskSet(t *testing.T) {
	for d, s := range dsTestStores(t) {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			box := secretbox.NewRandom()
			c, err := credentialCreate(ctx, s.st, &domain.Credential{WorkspaceID: s.ws, Name: "old", Type: "api_key"}, "sk-proj-0123456789abcdef", box)
			if err != nil {
				t.Fatal(err)
			}
			// As an older masking rule left it.
			if _, err := s.st.exec(ctx, "UPDATE credentials SET masked_value = 'sk-p…cdef' WHERE id = $1", c.ID); err != nil {
				t.Fatal(err)
			}
			all, err := s.st.CredentialSecretsAll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var found bool
			for _, r := range all {
				if r.ID != c.ID {
					continue
				}
				found = true
				if v, err := box.Open(r.WorkspaceID, r.ID, r.Sealed); err != nil || v != "sk-proj-0123456789abcdef" || r.Masked != "sk-p…cdef" {
					t.Fatalf("secret of %s: %q %q %v", r.ID, v, r.Masked, err)
				}
			}
			if !found {
				t.Fatalf("%s is not among the secrets %+v", c.ID, all)
			}
			if err := s.st.CredentialMaskSet(ctx, s.ws, c.ID, "sk-…cdef"); err != nil {
				t.Fatal(err)
			}
			got, _ := s.st.CredentialGet(ctx, s.ws, c.ID)
			if got.MaskedValue != "sk-…cdef" {
				t.Fatalf("mask %q", got.MaskedValue)
			}
		})
	}
}
