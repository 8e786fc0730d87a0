package runtime

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/modelhealth"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/vault"
)

// credentialEngine starts an engine on st whose runs go to the workspace's credentials
// (opened with box), with circuits c (nil: the defaults).
func credentialEngine(t testing.TB, st *store.Store, pgURL string, box *secretbox.Box, c *modelhealth.Circuits) *Engine {
	t.Helper()
	e := New(Config{Store: SQLStore{Store: st}, Router: &CredentialRouter{Store: st, Secrets: box, Simulated: simulated.New()},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Workers: 2, PostgresURL: pgURL, Circuits: c,
		LeaseTimeout: 900 * time.Millisecond, HeartbeatInterval: 150 * time.Millisecond})
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(e) })
	return e
}

// fakeCredential stores a credential of provider pointing at fake.
func fakeCredential(t testing.TB, st *store.Store, box *secretbox.Box, ws, name, provider, baseURL string, meta domain.JSONObject) *domain.Credential {
	t.Helper()
	if meta == nil {
		meta = domain.JSONObject{}
	}
	meta["base_url"] = baseURL
	c, err := vault.CredentialCreate(context.Background(), st, &domain.Credential{WorkspaceID: ws, Name: name, Type: "api_key", Provider: provider, Metadata: meta},
		"sk-"+name+"-0000000000000000", box)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runOn runs a sync execution of a with cfg on e and returns it as recorded.
func runOn(t testing.TB, e *Engine, a *domain.Agent, cfg *domain.AgentConfig) *domain.Execution {
	t.Helper()
	x, w, err := e.Submit(context.Background(), SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, Config: cfg,
		Input: map[string]any{"message": "hi"}, Source: "api", TimeoutMS: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	<-w.Done()
	if x = w.Result(); x == nil {
		t.Fatal("the run was not recorded")
	}
	return x
}

// TestPoolCooldownAcrossNodes: a pooled credential answering 429 with Retry-After cools
// down for both nodes of a cluster: the call and every later one, on either node, go to
// the other credential until the wait is over.
func TestPoolCooldownAcrossNodes(t *testing.T) {
	t.Parallel()
	u := pgTestURL(t)
	st := openPG(t, u)
	a := fixtureAgent(t, st)
	box := secretbox.NewRandom()
	busy, free := llmtest.NewOpenAI(), llmtest.NewOpenAI()
	defer busy.Close()
	defer free.Close()
	busy.Fallback = func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: 429, ErrorMessage: "rate limit reached", Header: http.Header{"Retry-After": {"30"}}}
	}
	free.Fallback = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"ok"}} }
	cb := fakeCredential(t, st, box, a.WorkspaceID, "busy", "openai", busy.URL+"/v1", domain.JSONObject{"weight": 1000.0})
	fakeCredential(t, st, box, a.WorkspaceID, "free", "openai", free.URL+"/v1", nil)
	na := credentialEngine(t, st, u, box, nil)
	nb := credentialEngine(t, openPG(t, u), u, box, nil)

	// The heavy credential is drawn first almost always; its 429 moves the call on.
	for i := 0; len(busy.Requests()) == 0; i++ {
		if i == 20 {
			t.Fatal("the pool never drew the credential of weight 1000")
		}
		if x := runOn(t, na, a, a.Config); x.Status != domain.StatusCompleted {
			t.Fatalf("run %d: %s %v", i, x.Status, x.Error)
		}
	}
	states, now, err := st.HealthRead(context.Background(), []string{modelhealth.CredentialKey(cb.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if wait := states[modelhealth.CredentialKey(cb.ID)].Until.Sub(now); wait < 25*time.Second || wait > 31*time.Second {
		t.Fatalf("the credential cools down for %v, want the 30 s of Retry-After", wait)
	}
	for i, e := range []*Engine{nb, na, nb, na} {
		if x := runOn(t, e, a, a.Config); x.Status != domain.StatusCompleted {
			t.Fatalf("run %d after the 429: %s %v", i, x.Status, x.Error)
		}
	}
	if n := len(busy.Requests()); n != 1 {
		t.Errorf("the cooling credential got %d requests, want only the first", n)
	}
}

// TestCircuitOpensAndCloses: after two failed calls in a row a model's circuit opens and
// calls skip to the fallback without calling it; once the cool-down is over one probe
// call goes through, and its success closes the circuit.
func TestCircuitOpensAndCloses(t *testing.T) {
	t.Parallel()
	st, a := fixture(t)
	box := secretbox.NewRandom()
	primary, fallback := llmtest.NewOpenAI(), llmtest.NewAnthropic()
	defer primary.Close()
	defer fallback.Close()
	var up atomic.Bool
	primary.Fallback = func(llmtest.Request) llmtest.Reply {
		if up.Load() {
			return llmtest.Reply{Text: []string{"primary"}}
		}
		return llmtest.Reply{Status: 503, ErrorMessage: "down"}
	}
	fallback.Fallback = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"fallback"}} }
	fakeCredential(t, st, box, a.WorkspaceID, "oa", "openai", primary.URL+"/v1", nil)
	fakeCredential(t, st, box, a.WorkspaceID, "an", "anthropic", fallback.URL, nil)
	circuits := &modelhealth.Circuits{Shared: modelhealth.NewDatabase(st), Threshold: 2, Cooldown: 2 * time.Second}
	e := credentialEngine(t, st, "", box, circuits)
	zero := 0
	cfg := &domain.AgentConfig{Model: "gpt-4o-mini", MaxRetries: &zero, FallbackModels: []string{"claude-3-5-haiku-20241022"}}
	answered := func(want string, calls int) {
		t.Helper()
		x := runOn(t, e, a, cfg)
		if x.Status != domain.StatusCompleted || x.Model == nil || *x.Model != want {
			t.Fatalf("run: %s %v answered by %v, want %s", x.Status, x.Error, x.Model, want)
		}
		if n := len(primary.Requests()); n != calls {
			t.Fatalf("the primary got %d calls, want %d", n, calls)
		}
	}
	answered("claude-3-5-haiku-20241022", 1)
	answered("claude-3-5-haiku-20241022", 2) // the second failure in a row opens the circuit
	answered("claude-3-5-haiku-20241022", 2) // skipped: no call

	// Once the cool-down is over (by the database's clock), the probe goes through.
	key := modelhealth.CircuitKey("openai", primary.URL+"/v1", "gpt-4o-mini")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		states, now, err := st.HealthRead(context.Background(), []string{key})
		if err != nil {
			t.Fatal(err)
		}
		if !states[key].Until.After(now) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the circuit never cooled down")
		}
	}
	up.Store(true)
	answered("gpt-4o-mini", 3)
	answered("gpt-4o-mini", 4) // closed
	if states, _, _ := st.HealthRead(context.Background(), []string{key}); len(states) != 0 {
		t.Errorf("the closed circuit still has state %v", states)
	}
}

// TestCredentialPoolMembers: without credential_id a model's calls go to a pool of its
// provider's credentials, but for those of weight 0; a default credential is used alone.
func TestCredentialPoolMembers(t *testing.T) {
	t.Parallel()
	st, a := fixture(t)
	ctx := context.Background()
	box := secretbox.NewRandom()
	r := &CredentialRouter{Store: st, Secrets: box}
	m, err := st.LLMModelGet(ctx, a.WorkspaceID, "gpt-4o-mini")
	if err != nil {
		t.Fatal(err)
	}
	members := func() string {
		t.Helper()
		rt, err := r.Route(ctx, a.WorkspaceID, &domain.AgentConfig{Model: "gpt-4o-mini"}, m)
		if err != nil {
			t.Fatal(err)
		}
		return rt.Credential
	}
	fakeCredential(t, st, box, a.WorkspaceID, "standby", "openai", "http://127.0.0.1:1/v1", domain.JSONObject{"weight": 0.0})
	fakeCredential(t, st, box, a.WorkspaceID, "one", "openai", "http://127.0.0.1:1/v1", nil)
	if got := members(); got != "one" {
		t.Errorf("one credential and a standby: %q", got)
	}
	two := fakeCredential(t, st, box, a.WorkspaceID, "two", "openai", "http://127.0.0.1:1/v1", domain.JSONObject{"weight": 3.0})
	if got := members(); got != "two, one" {
		t.Errorf("a pool: %q, want two, one", got)
	}
	if _, err := vault.CredentialUpdate(ctx, st, a.WorkspaceID, two.ID, domain.CredentialPatch{Metadata: &domain.JSONObject{"base_url": "http://127.0.0.1:1/v1", "default": true}}, box); err != nil {
		t.Fatal(err)
	}
	if got := members(); got != "two" {
		t.Errorf("with a default: %q, want it alone", got)
	}
}

// TestPoolAllCoolingFallsBack: when every credential of a pool answers 429 the call falls
// back, and while they cool down later calls go to the fallback without reaching them.
func TestPoolAllCoolingFallsBack(t *testing.T) {
	t.Parallel()
	st, a := fixture(t)
	box := secretbox.NewRandom()
	busy, other := llmtest.NewOpenAI(), llmtest.NewAnthropic()
	defer busy.Close()
	defer other.Close()
	busy.Fallback = func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: 429, ErrorMessage: "quota", Header: http.Header{"Retry-After": {"120"}}}
	}
	other.Fallback = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"fallback"}} }
	fakeCredential(t, st, box, a.WorkspaceID, "a", "openai", busy.URL+"/v1", nil)
	fakeCredential(t, st, box, a.WorkspaceID, "b", "openai", busy.URL+"/v1", nil)
	fakeCredential(t, st, box, a.WorkspaceID, "an", "anthropic", other.URL, nil)
	e := credentialEngine(t, st, "", box, nil)
	cfg := &domain.AgentConfig{Model: "gpt-4o-mini", FallbackModels: []string{"claude-3-5-haiku-20241022"}}
	for i := range 2 {
		x := runOn(t, e, a, cfg)
		if x.Status != domain.StatusCompleted || x.Model == nil || *x.Model != "claude-3-5-haiku-20241022" {
			t.Fatalf("run %d: %s %v answered by %v", i, x.Status, x.Error, x.Model)
		}
	}
	if n := len(busy.Requests()); n != 2 {
		t.Errorf("the pool's credentials got %d calls, want one each (then they cool down)", n)
	}
}
