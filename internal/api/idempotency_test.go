package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// forEachDatabase runs fn on a SQLite file and, when TEST_DATABASE_URL is set, on a
// PostgreSQL schema; fn may open several stores on url, as several nodes would.
func forEachDatabase(t *testing.T, fn func(t *testing.T, url string)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, dbs.SQLiteFile(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, testPostgresURL(t))
	})
}

// answer is a response's status, headers and decoded body.
type answer struct {
	status int
	header http.Header
	body   map[string]any
}

// post sends a JSON POST with the env's key and, when set, an Idempotency-Key.
func (e *testEnv) post(t *testing.T, path, idemKey, body string) answer {
	t.Helper()
	req, _ := http.NewRequest("POST", e.ts.URL+path, bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", e.key)
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return answer{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a.body); err != nil {
			t.Errorf("POST %s: %d %s", path, resp.StatusCode, raw)
		}
	}
	return a
}

// requestHash is the hash the server keeps for a POST of body to path.
func requestHash(path, body string) string {
	sum := sha256.Sum256([]byte("POST " + path + "\n" + body))
	return hex.EncodeToString(sum[:])
}

// slowAgent creates an agent whose simulated model streams an event every latency.
func slowAgent(t *testing.T, e *testEnv, latency time.Duration) string {
	t.Helper()
	a, err := e.c.AgentCreate(context.Background(), client.AgentCreateRequest{Name: "Slow", Type: "simple",
		Config: client.AgentConfig{Model: "gpt-4o-mini", Simulation: client.Simulation{LatencyMs: client.Ptr[int64](int64(int(latency / time.Millisecond)))}}})
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

func executionCount(t *testing.T, st *store.Store, ws string) int {
	t.Helper()
	n, err := st.ExecutionCount(context.Background(), ws, domain.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestIdempotencyConcurrentRequests: many requests with one key at once run exactly one of
// them; every other gets a 409 (or, once the first finished, its replay), never a 500, on
// both dialects.
func TestIdempotencyConcurrentRequests(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newTestEnv(t, onStore(openTestStore(t, url)), asServer())
		agent := slowAgent(t, e, 20*time.Millisecond)
		path := "/api/v1/agents/" + agent + "/execute"
		const n = 12
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { statuses[i] = e.post(t, path, "same", `{"input":{"message":"hello there"}}`).status })
		}
		wg.Wait()
		counts := map[int]int{}
		for _, s := range statuses {
			counts[s]++
		}
		if counts[200] != 1 || counts[409] != n-1 {
			t.Fatalf("statuses %v, want one 200 and %d 409", counts, n-1)
		}
		if got := executionCount(t, e.store, e.ws); got != 1 {
			t.Fatalf("%d executions for one key", got)
		}
		if a := e.post(t, path, "same", `{"input":{"message":"hello there"}}`); a.status != 200 || a.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry after the first finished: %d %v", a.status, a.header)
		}
		// A fast create: one agent, the others a 409 or the replay of its 201.
		for i := range n {
			wg.Go(func() { statuses[i] = e.post(t, "/api/v1/agents", "agent", `{"name":"Once","type":"simple"}`).status })
		}
		wg.Wait()
		for _, s := range statuses {
			if s != 201 && s != 409 {
				t.Fatalf("agent create statuses %v", statuses)
			}
		}
		if l, _, err := e.store.AgentList(context.Background(), e.ws, domain.AgentFilter{Query: "Once"}, domain.Page{Page: 1, Limit: 20}); err != nil || len(l) != 1 {
			t.Fatalf("%d agents created with one key (%v)", len(l), err)
		}
		// Refused requests release the key as others claim it: each is a 422 or a 409, and
		// one whose record vanished between its insert and its read claims again (no 500).
		for range 3 {
			for i := range n {
				wg.Go(func() { statuses[i] = e.post(t, "/api/v1/agents", "refused", `{"name":"","type":"simple"}`).status })
			}
			wg.Wait()
			for _, s := range statuses {
				if s != 422 && s != 409 {
					t.Fatalf("refused create statuses %v", statuses)
				}
			}
		}
	})
}

// TestIdempotencyLeaseRenewed: a request that outlasts the lease keeps its key (its process
// renews the lease), so a retry meanwhile is a 409 and starts no second run.
func TestIdempotencyLeaseRenewed(t *testing.T) {
	e := newServerEnvWith(t, func(c *Config) { c.IdempotencyLease = 150 * time.Millisecond })
	path := "/api/v1/agents/" + slowAgent(t, e, 60*time.Millisecond) + "/execute"
	body := `{"input":{"message":"please answer slowly with several words"}}`
	first := make(chan answer, 1)
	go func() { first <- e.post(t, path, "long", body) }()
	waitFor(t, 5*time.Second, func() bool { return executionCount(t, e.store, e.ws) == 1 })
	time.Sleep(400 * time.Millisecond) // more than twice the lease
	if a := e.post(t, path, "long", body); a.status != 409 {
		t.Fatalf("retry while the first request runs: %d %v", a.status, a.body)
	} else if ra, _ := strconv.Atoi(a.header.Get("Retry-After")); ra < 1 {
		t.Fatalf("409 without Retry-After: %v", a.header)
	}
	if a := <-first; a.status != 200 {
		t.Fatalf("first request: %d %v", a.status, a.body)
	}
	if got := executionCount(t, e.store, e.ws); got != 1 {
		t.Fatalf("%d executions", got)
	}
}

// TestIdempotencyDeadProcess: a key left in progress by a process that died (its lease ran
// out) does not block retries: a retry runs the request when the dead one created nothing,
// and answers from the execution it created otherwise, never starting a second one. A key
// whose lease is still live is a 409 with Retry-After.
func TestIdempotencyDeadProcess(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, url string) {
		ctx := context.Background()
		e := newTestEnv(t, onStore(openTestStore(t, url)), asServer(), withConfig(func(c *Config) { c.IdempotencyLease = 200 * time.Millisecond }))
		agent := slowAgent(t, e, 0)
		path := "/api/v1/agents/" + agent + "/execute"
		body := `{"input":{"message":"hi"}}`

		// Died before creating anything.
		if _, _, err := e.store.IdempotencyBegin(ctx, e.ws, "bare", requestHash(path, body), time.Minute); err != nil {
			t.Fatal(err)
		}
		if a := e.post(t, path, "bare", body); a.status != 409 || a.header.Get("Retry-After") == "" {
			t.Fatalf("live lease: %d %v", a.status, a.header)
		}
		expireLeaseOf(t, url, "bare", false)
		a := e.post(t, path, "bare", body)
		if a.status != 200 || lookup(a.body, "data.status") != "completed" {
			t.Fatalf("retry after the lease ran out: %d %v", a.status, a.body)
		}
		if got := executionCount(t, e.store, e.ws); got != 1 {
			t.Fatalf("%d executions", got)
		}
		if a := e.post(t, path, "bare", body); a.status != 200 || a.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %v", a.status, a.header)
		}

		// Died after creating its execution, before recording the response: the record is
		// as the dead process left it (linked in the execution's transaction, no response).
		for _, async := range []bool{false, true} {
			key, b := fmt.Sprintf("linked-%v", async), fmt.Sprintf(`{"input":{"message":"hello"},"async":%v}`, async)
			first := e.post(t, path, key, b)
			x := lookup(first.body, "data.id")
			if first.status/100 != 2 || x == nil {
				t.Fatalf("first: %d %v", first.status, first.body)
			}
			rec, _ := e.store.IdempotencyGet(ctx, e.ws, key)
			if rec == nil || rec.ExecutionID != x {
				t.Fatalf("the key is not linked to its execution: %+v", rec)
			}
			expireLeaseOf(t, url, key, true)
			before := executionCount(t, e.store, e.ws)
			retry := e.post(t, path, key, b)
			want := 200
			if async {
				want = 202
			}
			if retry.status != want || lookup(retry.body, "data.id") != x {
				t.Fatalf("retry (async %v): %d %v, want %d with execution %v", async, retry.status, retry.body, want, x)
			}
			if got := executionCount(t, e.store, e.ws); got != before {
				t.Fatalf("the retry started another execution: %d, was %d", got, before)
			}
		}
	})
}

// expireLeaseOf rewrites key's record in the database at url as a process that died leaves
// it: its lease over and, with reset, its response forgotten (it never got to record one).
func expireLeaseOf(t *testing.T, url, key string, reset bool) {
	t.Helper()
	driver, dsn := "pgx", url
	if !strings.HasPrefix(url, "postgres") {
		driver, dsn = "sqlite", "file:"+url+"?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := "UPDATE idempotency_keys SET locked_until = $1, lock_token = 'dead' WHERE key = $2"
	if reset {
		q = "UPDATE idempotency_keys SET locked_until = $1, lock_token = 'dead', status = 0, response = '' WHERE key = $2"
	}
	if _, err := db.Exec(q, time.Now().Add(-time.Second).UnixMilli(), key); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or d passed.
func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIdempotencyNodeStoppedMidRequest: node A takes a request with a key, creates its
// execution, and dies before it answers (its connections and its database handle are cut,
// so it neither renews the lease nor records anything). A retry on node B, once A's lease
// ran out, answers from the execution A created: no 409 for long, no second run.
func TestIdempotencyNodeStoppedMidRequest(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, url string) {
		ctx := context.Background()
		lease := func(c *Config) { c.IdempotencyLease = 200 * time.Millisecond }
		stA, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		a := newTestEnv(t, onStore(stA), asServer(), withConfig(lease))
		b := newTestEnv(t, onStore(openTestStore(t, url)), asServer(), withConfig(lease))
		path := "/api/v1/agents/" + slowAgent(t, a, 100*time.Millisecond) + "/execute"
		body := `{"input":{"message":"tell me a long story about idempotency keys"},"timeout_ms":1000}`

		sent := make(chan struct{})
		go func() {
			defer close(sent)
			req, _ := http.NewRequest("POST", a.ts.URL+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-API-Key", a.key)
			req.Header.Set("Idempotency-Key", "crash")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close() // the node is cut before it answers; an answer is not expected
			}
		}()
		var x string
		waitFor(t, 5*time.Second, func() bool {
			rec, err := b.store.IdempotencyGet(ctx, b.ws, "crash")
			if err != nil {
				t.Fatal(err)
			}
			if rec != nil {
				x = rec.ExecutionID
			}
			return x != ""
		})
		// Node A dies mid-request.
		a.ts.CloseClientConnections()
		if err := stA.Close(); err != nil {
			t.Fatal(err)
		}
		<-sent

		var got answer
		waitFor(t, 5*time.Second, func() bool {
			got = b.post(t, path, "crash", body)
			return got.status != http.StatusConflict
		})
		if (got.status != 200 && got.status != 202) || lookup(got.body, "data.id") != x {
			t.Fatalf("retry on node B: %d %v, want the execution %s", got.status, got.body, x)
		}
		if n := executionCount(t, b.store, b.ws); n != 1 {
			t.Fatalf("%d executions for one key", n)
		}
	})
}
