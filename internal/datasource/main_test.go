package datasource

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/store/storetest"
	"github.com/agentplane/agentplane/internal/vault"
)

// TestMain checks that no test leaves a goroutine behind: every pool, sample database and
// HTTP connection is closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testWS = "ws_datasource_test"

// fixture is a store with a workspace, the secret box its credentials are sealed with, and
// the executors under test.
type fixture struct {
	t   testing.TB
	st  *store.Store
	box *secretbox.Box
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	st := storetest.Memory(t)
	storetest.Workspace(t, st, &domain.Workspace{ID: testWS, Name: "Test", Slug: "test"})
	return &fixture{t: t, st: st, box: secretbox.NewRandom()}
}

// live is a Live executor over the fixture's store, closed when the test ends.
func (f *fixture) live(deny ...string) *Live {
	l := NewLive(LiveConfig{Store: f.st, Secrets: f.box, DenyPaths: deny})
	f.t.Cleanup(func() { l.Close() })
	return l
}

// credential stores a credential and returns its id.
func (f *fixture) credential(typ, value string, metadata map[string]any) string {
	f.t.Helper()
	c, err := vault.CredentialCreate(context.Background(), f.st, &domain.Credential{WorkspaceID: testWS, Name: "cred " + typ, Type: typ, Metadata: metadata}, value, f.box)
	if err != nil {
		f.t.Fatal(err)
	}
	return c.ID
}

// source stores a data source of typ with cfg as its active version and returns its id.
func (f *fixture) source(typ, credID string, cfg map[string]any) string {
	f.t.Helper()
	if _, err := ParseConfig(typ, cfg); err != nil {
		f.t.Fatalf("config: %v", err)
	}
	d := &domain.DataSource{WorkspaceID: testWS, Name: "ds " + typ, Type: typ}
	if credID != "" {
		d.CredentialID = &credID
	}
	d, err := f.st.DataSourceCreate(context.Background(), d, domain.JSONObject(cfg), "")
	if err != nil {
		f.t.Fatal(err)
	}
	return d.ID
}

// promote makes cfg the data source's active version.
func (f *fixture) promote(id string, cfg map[string]any) {
	f.t.Helper()
	ctx := context.Background()
	v, err := f.st.DataSourceVersionCreate(ctx, &domain.DataSourceVersion{WorkspaceID: testWS, DataSourceID: id, Config: domain.JSONObject(cfg)})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.st.DataSourceVersionPromote(ctx, testWS, id, v.ID); err != nil {
		f.t.Fatal(err)
	}
}

// wantQueryError fails unless err is a *QueryError whose message holds every part.
func wantQueryError(t *testing.T, err error, timeout bool, parts ...string) {
	t.Helper()
	var qe *QueryError
	if !errors.As(err, &qe) || qe.Timeout != timeout {
		t.Fatalf("got %v (%T), want a QueryError (timeout %v)", err, err, timeout)
	}
	for _, p := range parts {
		if !strings.Contains(strings.ToLower(qe.Message), strings.ToLower(p)) {
			t.Fatalf("message %q does not mention %q", qe.Message, p)
		}
	}
}

// wantSourceError fails unless err is a *SourceError (unreachable or not) mentioning part.
func wantSourceError(t *testing.T, err error, unreachable bool, part string) {
	t.Helper()
	var se *SourceError
	if !errors.As(err, &se) || se.Unreachable != unreachable {
		t.Fatalf("got %v (%T), want a SourceError (unreachable %v)", err, err, unreachable)
	}
	if !strings.Contains(se.Message, part) {
		t.Fatalf("message %q does not mention %q", se.Message, part)
	}
}

// wantFieldError fails unless err is a *domain.FieldError on field.
func wantFieldError(t *testing.T, err error, field string) {
	t.Helper()
	var fe *domain.FieldError
	if !errors.As(err, &fe) || fe.Field != field {
		t.Fatalf("got %v (%T), want a domain.FieldError on %s", err, err, field)
	}
}
