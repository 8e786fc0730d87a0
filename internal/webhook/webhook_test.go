package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.uber.org/goleak"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/egress"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/store/storetest"
)

// dbs are the migrated databases the tests copy: a SQLite file, and a PostgreSQL database
// with TEST_DATABASE_URL.
var dbs = storetest.NewTemplate()

func TestMain(m *testing.M) {
	storetest.Main(m, dbs, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
}

// forEachDB runs fn with the URL of a fresh database: a SQLite file, and a PostgreSQL database
// when TEST_DATABASE_URL is set. Both can be closed and opened again (a restart).
func forEachDB(t *testing.T, fn func(t *testing.T, url string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, dbs.SQLiteFile(t)) })
	t.Run("postgres", func(t *testing.T) {
		u := dbs.URL(t)
		if u == "" {
			t.Skip(dbtest.SkipMessage)
		}
		fn(t, u)
	})
}

func open(t *testing.T, url string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// fixture is a workspace with one agent whose webhook points at url.
type fixture struct {
	ws, agentID, secret string
}

func newFixture(t *testing.T, st *store.Store, box *secretbox.Box, url string) fixture {
	t.Helper()
	ctx := context.Background()
	w, err := st.WorkspaceCreate(ctx, &domain.Workspace{Name: "W", Slug: "w" + strings.ToLower(store.NewID()[19:])})
	if err != nil {
		t.Fatal(err)
	}
	a, err := st.AgentCreate(ctx, &domain.Agent{WorkspaceID: w.ID, Name: "A", Type: "simple", Status: "active"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{ws: w.ID, agentID: a.ID, secret: NewSecret()}
	if url != "" {
		if err := st.AgentWebhookSet(ctx, w.ID, a.ID, url, box.Seal(w.ID, a.ID, f.secret)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// end records an execution of the fixture's agent and moves it to a terminal status, which
// writes the outbox row(s) in the same transaction.
func (f fixture) end(t *testing.T, st *store.Store, status string, parent *string) *domain.Execution {
	t.Helper()
	ctx := context.Background()
	x := &domain.Execution{WorkspaceID: f.ws, AgentID: f.agentID, Source: "api", Status: domain.StatusPending, ParentID: parent,
		Input: domain.JSONObject{"q": "hi"}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
	if parent != nil {
		x.RootID = *parent
	}
	if err := st.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: f.ws, Name: "A"}); err != nil {
		t.Fatal(err)
	}
	now := domain.Now()
	patch := domain.ExecutionPatch{CompletedAt: &now}
	if status != domain.StatusCancelled {
		if _, err := st.ExecutionTransition(ctx, f.ws, x.ID, domain.StatusRunning, domain.ExecutionPatch{}); err != nil {
			t.Fatal(err)
		}
	}
	if status == domain.StatusCompleted {
		patch.Output = json.RawMessage(`{"content":"done"}`)
	} else {
		msg := "stopped"
		patch.Error = &msg
	}
	out, err := st.ExecutionTransition(ctx, f.ws, x.ID, status, patch)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func deliveries(t *testing.T, st *store.Store, ws, execID string) []*domain.WebhookDelivery {
	t.Helper()
	items, _, err := st.WebhookDeliveryList(context.Background(), ws, domain.WebhookDeliveryFilter{ExecutionID: execID}, domain.Page{Page: 1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// receiver is an httptest server that records what it is sent and answers with status(n)
// for its n-th request (1-based).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []received
	got    chan struct{}
	status func(n int) int
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, status func(n int) int) *receiver {
	r := &receiver{got: make(chan struct{}, 1000), status: status}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, received{header: req.Header.Clone(), body: b})
		n := len(r.reqs)
		r.mu.Unlock()
		code := r.status(n)
		w.WriteHeader(code)
		if code >= 300 {
			_, _ = io.WriteString(w, "not today\n")
		}
		r.got <- struct{}{}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.reqs...)
}

func always(code int) func(int) int { return func(int) int { return code } }

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time           { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Set(t time.Time)          { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *fakeClock) Add(d time.Duration)      { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
func half() float64                           { return 0.5 } // a jitter factor of exactly 1
func quietLog(buf *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(buf, nil)) }

// A receiver using the official Standard Webhooks library accepts what is sent: the library's
// Verify (timestamp tolerance included) passes, with the headers and body as POSTed.
func TestSignatureVerifiesWithStandardWebhooksLibrary(t *testing.T) {
	forEachDB(t, func(t *testing.T, url string) {
		st := open(t, url)
		box := secretbox.NewRandom()
		var f fixture
		var verifyErr error
		var mu sync.Mutex
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			wh, err := standardwebhooks.NewWebhook(f.secret)
			if err == nil {
				err = wh.Verify(body, r.Header)
			}
			mu.Lock()
			verifyErr = err
			mu.Unlock()
			if err != nil || r.Header.Get("Content-Type") != "application/json" || r.Method != http.MethodPost {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		defer rcv.Close()
		f = newFixture(t, st, box, rcv.URL+"/hooks?team=1")
		d := New(Config{Store: st, Secrets: box})
		defer d.Stop(context.Background())
		x := f.end(t, st, domain.StatusCompleted, nil)

		ds := deliveries(t, st, f.ws, x.ID)
		if len(ds) != 1 || ds[0].Status != domain.DeliveryPending || ds[0].EventType != "execution.completed" || ds[0].URL != rcv.URL+"/hooks?team=1" ||
			ds[0].TargetType != "agent" || ds[0].TargetID != f.agentID {
			t.Fatalf("outbox after the execution ended: %+v", ds)
		}
		if n, err := d.RunDue(context.Background()); err != nil || n != 1 {
			t.Fatalf("RunDue = %d, %v", n, err)
		}
		mu.Lock()
		if verifyErr != nil {
			t.Fatalf("the standard-webhooks library rejects the message: %v", verifyErr)
		}
		mu.Unlock()
		got, err := st.WebhookDeliveryGet(context.Background(), f.ws, ds[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != domain.DeliveryDelivered || got.Attempts != 1 || got.LastResponseCode == nil || *got.LastResponseCode != 204 ||
			got.NextAttemptAt != nil || got.DeliveredAt == nil || got.LastError != nil {
			t.Fatalf("after a 204: %+v", got)
		}
		var p struct {
			Type      string           `json:"type"`
			Timestamp string           `json:"timestamp"`
			Data      domain.Execution `json:"data"`
		}
		if err := json.Unmarshal(got.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p.Type != "execution.completed" || p.Data.ID != x.ID || p.Data.Status != domain.StatusCompleted || string(p.Data.Output) != `{"content":"done"}` || p.Timestamp == "" {
			t.Fatalf("payload %s", got.Payload)
		}
		// Nothing more is due: a delivered message is not sent again.
		if n, _ := d.RunDue(context.Background()); n != 0 {
			t.Fatalf("sent again: %d", n)
		}
	})
}

// A tampered body or another secret fails the library's check: the signature is real.
func TestSignatureBindsBodyAndSecret(t *testing.T) {
	st := open(t, dbs.SQLiteFile(t))
	box := secretbox.NewRandom()
	rcv := newReceiver(t, always(200))
	f := newFixture(t, st, box, rcv.URL)
	d := New(Config{Store: st, Secrets: box})
	defer d.Stop(context.Background())
	f.end(t, st, domain.StatusFailed, nil)
	if _, err := d.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := rcv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	wh, _ := standardwebhooks.NewWebhook(f.secret)
	if err := wh.Verify(reqs[0].body, reqs[0].header); err != nil {
		t.Fatalf("genuine message rejected: %v", err)
	}
	tampered := bytes.Replace(reqs[0].body, []byte(`"failed"`), []byte(`"completed"`), 1)
	if err := wh.Verify(tampered, reqs[0].header); err == nil {
		t.Fatal("a tampered body verifies")
	}
	other, _ := standardwebhooks.NewWebhook(NewSecret())
	if err := other.Verify(reqs[0].body, reqs[0].header); err == nil {
		t.Fatal("another secret verifies")
	}
	if !strings.Contains(string(reqs[0].body), `"type":"execution.failed"`) {
		t.Fatalf("body %s", reqs[0].body)
	}
}

// Failed attempts are retried on the backoff schedule (5 s, 30 s, 2 min, 10 min, 30 min, then
// hourly), never before they are due, with the same webhook-id; after 24 hours the delivery
// fails. The clock is moved by hand: nothing sleeps.
func TestRetriesWithBackoffThenGivesUpAfter24h(t *testing.T) {
	forEachDB(t, func(t *testing.T, url string) {
		st := open(t, url)
		box := secretbox.NewRandom()
		rcv := newReceiver(t, always(http.StatusServiceUnavailable))
		f := newFixture(t, st, box, rcv.URL)
		clock := &fakeClock{}
		var logs bytes.Buffer
		d := New(Config{Store: st, Secrets: box, Now: clock.Now, Jitter: half, Logger: quietLog(&logs)})
		defer d.Stop(context.Background())
		x := f.end(t, st, domain.StatusCompleted, nil)
		dl := deliveries(t, st, f.ws, x.ID)[0]
		clock.Set(time.Now().Truncate(time.Millisecond))
		ctx := context.Background()
		var gaps []time.Duration
		last := time.Time{}
		for i := 0; i < 100; i++ {
			if n, err := d.RunDue(ctx); err != nil || n != 1 {
				t.Fatalf("attempt %d: RunDue = %d, %v", i+1, n, err)
			}
			if !last.IsZero() {
				gaps = append(gaps, clock.Now().Sub(last))
			}
			last = clock.Now()
			got, err := st.WebhookDeliveryGet(ctx, f.ws, dl.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.LastResponseCode == nil || *got.LastResponseCode != 503 || got.LastError == nil || !strings.Contains(*got.LastError, "503") {
				t.Fatalf("attempt %d recorded as %+v", i+1, got)
			}
			if got.Status == domain.DeliveryFailed {
				if got.NextAttemptAt != nil || !strings.Contains(*got.LastError, "giving up") {
					t.Fatalf("failed delivery %+v", got)
				}
				break
			}
			next := got.NextAttemptAt.Time
			// Not due a millisecond early.
			clock.Set(next.Add(-time.Millisecond))
			if n, _ := d.RunDue(ctx); n != 0 {
				t.Fatalf("attempt %d made before it was due", i+2)
			}
			clock.Set(next)
		}
		// 5 s, 30 s, 2 min, 10 min and 30 min take the 6th attempt to 42m35s; then hourly,
		// the 29th at 23h42m35s; a 30th would be past 24 h.
		want := []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute}
		for len(want) < 28 {
			want = append(want, time.Hour)
		}
		if len(gaps) != len(want) {
			t.Fatalf("%d attempts (gaps %v), want 29", len(gaps)+1, gaps)
		}
		for i := range want {
			if gaps[i] != want[i] {
				t.Fatalf("gap %d = %s, want %s (all: %v)", i+1, gaps[i], want[i], gaps)
			}
		}
		reqs := rcv.requests()
		if len(reqs) != 29 {
			t.Fatalf("receiver got %d requests", len(reqs))
		}
		wh, _ := standardwebhooks.NewWebhook(f.secret)
		for i, r := range reqs {
			if r.header.Get("webhook-id") != dl.ID {
				t.Fatalf("request %d has webhook-id %q, want the delivery id %s", i+1, r.header.Get("webhook-id"), dl.ID)
			}
			// Each attempt is signed afresh with its own timestamp (the moved clock's).
			if err := wh.VerifyIgnoringTimestamp(r.body, r.header); err != nil {
				t.Fatalf("request %d: %v", i+1, err)
			}
		}
		if ts0, ts1 := reqs[0].header.Get("webhook-timestamp"), reqs[1].header.Get("webhook-timestamp"); ts0 == ts1 {
			t.Fatalf("timestamps %s and %s: a retry is not signed again", ts0, ts1)
		}
		if n, _ := d.RunDue(ctx); n != 0 {
			t.Fatal("a failed delivery is tried again")
		}
		if strings.Contains(logs.String(), f.secret) || strings.Contains(logs.String(), strings.TrimPrefix(f.secret, SecretPrefix)) {
			t.Fatal("the log holds the secret")
		}
	})
}

// A receiver that recovers gets the message: 500, then a connection that times out is not
// needed, a 2xx ends it as delivered with the count of attempts.
func TestRetryThenDelivered(t *testing.T) {
	st := open(t, dbs.SQLiteFile(t))
	box := secretbox.NewRandom()
	rcv := newReceiver(t, func(n int) int {
		if n < 3 {
			return 500
		}
		return 200
	})
	f := newFixture(t, st, box, rcv.URL)
	clock := &fakeClock{}
	d := New(Config{Store: st, Secrets: box, Now: clock.Now, Jitter: func() float64 { return 0 }})
	defer d.Stop(context.Background())
	x := f.end(t, st, domain.StatusCancelled, nil)
	clock.Set(time.Now().Truncate(time.Millisecond))
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if n, err := d.RunDue(ctx); n != 1 || err != nil {
			t.Fatalf("round %d: %d, %v", i, n, err)
		}
		got := deliveries(t, st, f.ws, x.ID)[0]
		if i < 2 {
			// Jitter 0 is 80% of the pause: 4 s, then 24 s.
			wantGap := []time.Duration{4 * time.Second, 24 * time.Second}[i]
			if got.Status != domain.DeliveryPending || got.NextAttemptAt.Sub(clock.Now()) != wantGap {
				t.Fatalf("round %d: %+v (next in %s)", i, got, got.NextAttemptAt.Sub(clock.Now()))
			}
			clock.Set(got.NextAttemptAt.Time)
			continue
		}
		if got.Status != domain.DeliveryDelivered || got.Attempts != 3 || *got.LastResponseCode != 200 || got.EventType != "execution.cancelled" {
			t.Fatalf("after recovery: %+v", got)
		}
	}
}

// The outbox survives a restart: a message written before the server stopped is sent by the
// deliverer of the next start. The secret is stored sealed only, never in the clear.
func TestDeliveryAfterRestart(t *testing.T) {
	forEachDB(t, func(t *testing.T, url string) {
		box := secretbox.NewRandom()
		rcv := newReceiver(t, always(200))
		st1, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		f := newFixture(t, st1, box, rcv.URL)
		d1 := New(Config{Store: st1, Secrets: box}) // never started: the node stops first
		x := f.end(t, st1, domain.StatusCompleted, nil)
		d1.Stop(context.Background())
		if err := st1.Close(); err != nil {
			t.Fatal(err)
		}
		if len(rcv.requests()) != 0 {
			t.Fatal("sent before the restart")
		}
		if !strings.HasPrefix(url, "postgres") {
			for _, name := range []string{url, url + "-wal"} {
				raw, err := os.ReadFile(name)
				if err != nil {
					continue
				}
				key := strings.TrimPrefix(f.secret, SecretPrefix)
				if bytes.Contains(raw, []byte(key)) {
					t.Fatalf("%s holds the webhook secret in the clear", filepath.Base(name))
				}
			}
		}

		st2 := open(t, url)
		var logs bytes.Buffer
		d2 := New(Config{Store: st2, Secrets: box, Poll: 20 * time.Millisecond, Logger: quietLog(&logs)})
		d2.Start(context.Background())
		d2.Start(context.Background()) // a second Start does nothing
		select {
		case <-rcv.got:
		case <-time.After(10 * time.Second):
			t.Fatal("the restarted deliverer did not send the message")
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			ds := deliveries(t, st2, f.ws, x.ID)
			if len(ds) == 1 && ds[0].Status == domain.DeliveryDelivered {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not recorded as delivered: %+v", ds[0])
			}
			time.Sleep(10 * time.Millisecond)
		}
		d2.Stop(context.Background())
		d2.Stop(context.Background()) // safe twice
		if strings.Contains(logs.String(), f.secret) {
			t.Fatal("the log holds the secret")
		}
	})
}

// A running deliverer sends a message shortly after the execution ends (the hook wakes it).
func TestStartedDelivererSendsPromptly(t *testing.T) {
	st := open(t, "memory")
	box := secretbox.NewRandom()
	rcv := newReceiver(t, always(202))
	f := newFixture(t, st, box, rcv.URL)
	d := New(Config{Store: st, Secrets: box, Poll: time.Hour}) // only the wake-up can find it
	d.Start(context.Background())
	defer d.Stop(context.Background())
	f.end(t, st, domain.StatusCompleted, nil)
	select {
	case <-rcv.got:
	case <-time.After(5 * time.Second):
		t.Fatal("not sent after the wake-up")
	}
}

// With --deny-private-egress, a webhook URL on a loopback address is refused when connecting:
// nothing reaches it, and the delivery fails at once (retrying cannot help).
func TestEgressDenied(t *testing.T) {
	forEachDB(t, func(t *testing.T, url string) {
		st := open(t, url)
		box := secretbox.NewRandom()
		rcv := newReceiver(t, always(200))
		f := newFixture(t, st, box, rcv.URL)
		d := New(Config{Store: st, Secrets: box, Guard: egress.Guard{DenyPrivate: true}})
		defer d.Stop(context.Background())
		x := f.end(t, st, domain.StatusCompleted, nil)
		if n, err := d.RunDue(context.Background()); n != 1 || err != nil {
			t.Fatalf("RunDue = %d, %v", n, err)
		}
		got := deliveries(t, st, f.ws, x.ID)[0]
		if got.Status != domain.DeliveryFailed || got.LastError == nil || !strings.Contains(*got.LastError, "denied") || got.LastResponseCode != nil {
			t.Fatalf("delivery %+v", got)
		}
		if len(rcv.requests()) != 0 {
			t.Fatal("the denied receiver was reached")
		}
	})
}

// Only top-level executions of an agent with a webhook write messages; every terminal status
// does, with its event type.
func TestWhatIsEnqueued(t *testing.T) {
	st := open(t, "memory")
	box := secretbox.NewRandom()
	d := New(Config{Store: st, Secrets: box})
	defer d.Stop(context.Background())
	with := newFixture(t, st, box, "https://example.com/hook")
	without := newFixture(t, st, box, "")
	for _, status := range []string{domain.StatusCompleted, domain.StatusFailed, domain.StatusCancelled} {
		x := with.end(t, st, status, nil)
		ds := deliveries(t, st, with.ws, x.ID)
		if len(ds) != 1 || ds[0].EventType != "execution."+status {
			t.Fatalf("%s: %+v", status, ds)
		}
		child := with.end(t, st, status, &x.ID)
		if ds := deliveries(t, st, with.ws, child.ID); len(ds) != 0 {
			t.Fatalf("a child execution wrote %d messages", len(ds))
		}
	}
	x := without.end(t, st, domain.StatusCompleted, nil)
	if ds := deliveries(t, st, without.ws, x.ID); len(ds) != 0 {
		t.Fatalf("an agent without webhook wrote %d messages", len(ds))
	}
}

// The trigger seam: when TriggerWebhook is set and the execution names a trigger, its webhook
// gets a message of its own, read in the ending transaction.
func TestTriggerWebhookSeam(t *testing.T) {
	st := open(t, "memory")
	box := secretbox.NewRandom()
	trigSecret := NewSecret()
	var asked []string
	d := New(Config{Store: st, Secrets: box, TriggerWebhook: func(ctx context.Context, tx *store.Store, ws, triggerID string) (string, string, bool, error) {
		asked = append(asked, triggerID)
		return "https://example.com/trigger", trigSecret, triggerID == "trg1", nil
	}})
	defer d.Stop(context.Background())
	f := newFixture(t, st, box, "")
	ctx := context.Background()
	x := &domain.Execution{WorkspaceID: f.ws, AgentID: f.agentID, Source: "webhook", Status: domain.StatusPending,
		Input: domain.JSONObject{}, Metadata: domain.JSONObject{"trigger_id": "trg1"}, TimeoutMS: 1000}
	if err := st.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: f.ws, Name: "A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ExecutionTransition(ctx, f.ws, x.ID, domain.StatusCancelled, domain.ExecutionPatch{}); err != nil {
		t.Fatal(err)
	}
	ds := deliveries(t, st, f.ws, x.ID)
	if len(asked) != 1 || len(ds) != 1 || ds[0].TargetType != "trigger" || ds[0].TargetID != "trg1" || ds[0].URL != "https://example.com/trigger" {
		t.Fatalf("asked %v, deliveries %+v", asked, ds)
	}
	claimed, err := st.WebhookDeliveryClaim(ctx, "n", time.Now().Add(time.Second), time.Minute, 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v, %d", err, len(claimed))
	}
	if s, err := box.Open(f.ws, claimed[0].ID, claimed[0].Secret); err != nil || s != trigSecret {
		t.Fatalf("sealed trigger secret opens to %q, %v", s, err)
	}
}

// On PostgreSQL, two nodes' deliverers on one database never send the same attempt twice:
// every message is sent once per round, whoever claims it.
func TestTwoDeliverersNeverSendAnAttemptTwice(t *testing.T) {
	u := dbs.URL(t)
	if u == "" {
		t.Skip(dbtest.SkipMessage)
	}
	stA, stB := open(t, u), open(t, u)
	box := secretbox.NewRandom()
	var mu sync.Mutex
	seen := map[string]int{}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("webhook-id")]++
		n := seen[r.Header.Get("webhook-id")]
		mu.Unlock()
		time.Sleep(2 * time.Millisecond) // overlap the two nodes' attempts
		if n == 1 {
			w.WriteHeader(500) // every message needs a second attempt
			return
		}
		w.WriteHeader(200)
	}))
	defer rcv.Close()
	f := newFixture(t, stA, box, rcv.URL)
	clock := &fakeClock{}
	dA := New(Config{Store: stA, Secrets: box, Node: "a", Now: clock.Now, Jitter: half})
	dB := New(Config{Store: stB, Secrets: box, Node: "b", Now: clock.Now, Jitter: half})
	defer dA.Stop(context.Background())
	defer dB.Stop(context.Background())
	const n = 40
	for i := 0; i < n; i++ {
		f.end(t, stA, domain.StatusCompleted, nil)
	}
	clock.Set(time.Now().Truncate(time.Millisecond))
	ctx := context.Background()
	round := func() int {
		var wg sync.WaitGroup
		counts := make([]int, 2)
		for i, d := range []*Deliverer{dA, dB} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3 {
					k, err := d.RunDue(ctx)
					if err != nil {
						t.Error(err)
					}
					counts[i] += k
				}
			}()
		}
		wg.Wait()
		return counts[0] + counts[1]
	}
	if got := round(); got != n {
		t.Fatalf("first round made %d attempts, want %d", got, n)
	}
	clock.Add(6 * time.Second)
	if got := round(); got != n {
		t.Fatalf("second round made %d attempts, want %d", got, n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != n {
		t.Fatalf("%d distinct messages, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 2 {
			t.Fatalf("message %s sent %d times, want 2 (one per attempt)", id, c)
		}
	}
	items, total, err := stB.WebhookDeliveryList(ctx, f.ws, domain.WebhookDeliveryFilter{Status: domain.DeliveryDelivered}, domain.Page{Page: 1, Limit: 100})
	if err != nil || total != n {
		t.Fatalf("delivered: %d, %v", total, err)
	}
	for _, it := range items {
		if it.Attempts != 2 {
			t.Fatalf("delivery %s has %d attempts", it.ID, it.Attempts)
		}
	}
}

// Stop cancels an attempt that outlives its grace: the attempt is recorded as failed and
// retried later; Stop returns promptly.
func TestStopInterruptsSlowAttempt(t *testing.T) {
	st := open(t, "memory")
	box := secretbox.NewRandom()
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer rcv.Close()
	defer close(release)
	f := newFixture(t, st, box, rcv.URL)
	d := New(Config{Store: st, Secrets: box, Poll: 10 * time.Millisecond})
	d.Start(context.Background())
	x := f.end(t, st, domain.StatusCompleted, nil)
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no attempt started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	began := time.Now()
	d.Stop(ctx)
	if time.Since(began) > 3*time.Second {
		t.Fatalf("Stop took %s", time.Since(began))
	}
	got := deliveries(t, st, f.ws, x.ID)[0]
	if got.Status != domain.DeliveryPending || got.LastError == nil || !strings.Contains(*got.LastError, "interrupted") || got.NextAttemptAt == nil {
		t.Fatalf("interrupted attempt recorded as %+v", got)
	}
}

func TestBackoffBounds(t *testing.T) {
	for attempt, base := range map[int]time.Duration{1: 5 * time.Second, 2: 30 * time.Second, 3: 2 * time.Minute, 6: time.Hour, 40: time.Hour} {
		lo, hi := Backoff(attempt, 0), Backoff(attempt, 0.999999)
		if lo != base*8/10 || hi > base*12/10 || hi < base*119/100 {
			t.Fatalf("attempt %d: %s..%s, base %s", attempt, lo, hi, base)
		}
	}
}

// A generated secret passes the rule of secrets and the Standard Webhooks library.
func TestNewSecret(t *testing.T) {
	s := NewSecret()
	if err := domain.CheckWebhookSecret("webhook_secret", s); err != nil || !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("%s: %v", s, err)
	}
	if _, err := standardwebhooks.NewWebhook(s); err != nil {
		t.Fatal(err)
	}
}

// Settled deliveries are deleted after the retention; pending ones are kept whatever their age.
func TestPruneSettledAfterRetention(t *testing.T) {
	forEachDB(t, func(t *testing.T, url string) {
		st := open(t, url)
		box := secretbox.NewRandom()
		rcv := newReceiver(t, always(200))
		f := newFixture(t, st, box, rcv.URL)
		clock := &fakeClock{}
		d := New(Config{Store: st, Secrets: box, Now: clock.Now, Retention: 30 * 24 * time.Hour})
		defer d.Stop(context.Background())
		f.end(t, st, domain.StatusCompleted, nil)
		f.end(t, st, domain.StatusFailed, nil)
		clock.Set(time.Now().Truncate(time.Millisecond))
		ctx := context.Background()
		if n, err := d.RunDue(ctx); n != 2 || err != nil {
			t.Fatalf("RunDue = %d, %v", n, err)
		}
		pending := f.end(t, st, domain.StatusCancelled, nil)
		if n, err := d.Prune(ctx); n != 0 || err != nil {
			t.Fatalf("pruned %d within the retention (%v)", n, err)
		}
		clock.Add(31 * 24 * time.Hour)
		if n, err := d.Prune(ctx); n != 2 || err != nil {
			t.Fatalf("pruned %d, want 2 (%v)", n, err)
		}
		_, total, err := st.WebhookDeliveryList(ctx, f.ws, domain.WebhookDeliveryFilter{}, domain.Page{Page: 1, Limit: 10})
		if err != nil || total != 1 || len(deliveries(t, st, f.ws, pending.ID)) != 1 {
			t.Fatalf("left %d deliveries (%v), want the pending one", total, err)
		}
	})
}

// A failed delivery retried by hand (POST /webhook-deliveries/{id}/retry) gets another 24
// hours of attempts, with the same webhook-id.
func TestManualRetryAfterGivingUp(t *testing.T) {
	forEachDB(t, func(t *testing.T, url string) {
		st := open(t, url)
		box := secretbox.NewRandom()
		var up sync.Mutex
		healthy := false
		rcv := newReceiver(t, func(int) int {
			up.Lock()
			defer up.Unlock()
			if healthy {
				return 200
			}
			return 502
		})
		f := newFixture(t, st, box, rcv.URL)
		clock := &fakeClock{}
		d := New(Config{Store: st, Secrets: box, Now: clock.Now, Jitter: half})
		defer d.Stop(context.Background())
		x := f.end(t, st, domain.StatusCompleted, nil)
		ctx := context.Background()
		dl := deliveries(t, st, f.ws, x.ID)[0]
		// The receiver is down for two days: the first attempt is made late, and fails for good.
		clock.Set(time.Now().Add(48 * time.Hour).Truncate(time.Millisecond))
		if n, err := d.RunDue(ctx); n != 1 || err != nil {
			t.Fatalf("RunDue = %d, %v", n, err)
		}
		got, _ := st.WebhookDeliveryGet(ctx, f.ws, dl.ID)
		if got.Status != domain.DeliveryFailed {
			t.Fatalf("after its window: %+v", got)
		}
		if _, err := st.WebhookDeliveryRetry(ctx, f.ws, dl.ID, clock.Now(), clock.Now().Add(RetryFor)); err != nil {
			t.Fatal(err)
		}
		var conflict *store.ConflictError
		if _, err := st.WebhookDeliveryRetry(ctx, f.ws, dl.ID, clock.Now(), clock.Now().Add(RetryFor)); !errors.As(err, &conflict) {
			t.Fatalf("retry of a pending delivery: %v", err)
		}
		if _, err := st.WebhookDeliveryRetry(ctx, "other", dl.ID, clock.Now(), clock.Now()); !store.IsNotFound(err) {
			t.Fatalf("retry from another workspace: %v", err)
		}
		if n, _ := d.RunDue(ctx); n != 1 { // still down: retried within the new window
			t.Fatalf("RunDue = %d", n)
		}
		got, _ = st.WebhookDeliveryGet(ctx, f.ws, dl.ID)
		if got.Status != domain.DeliveryPending || got.Attempts != 2 {
			t.Fatalf("after the retry's first attempt: %+v", got)
		}
		up.Lock()
		healthy = true
		up.Unlock()
		clock.Set(got.NextAttemptAt.Time)
		if n, _ := d.RunDue(ctx); n != 1 {
			t.Fatalf("RunDue = %d", n)
		}
		got, _ = st.WebhookDeliveryGet(ctx, f.ws, dl.ID)
		if got.Status != domain.DeliveryDelivered || got.Attempts != 3 {
			t.Fatalf("after recovery: %+v", got)
		}
		for _, r := range rcv.requests() {
			if r.header.Get("webhook-id") != dl.ID {
				t.Fatalf("webhook-id %q", r.header.Get("webhook-id"))
			}
		}
	})
}

// A steady stream of wake-ups (executions ending every few milliseconds) does not keep
// postponing the look for due deliveries.
func TestWakeUpsDoNotStarveTheLoop(t *testing.T) {
	st := open(t, "memory")
	box := secretbox.NewRandom()
	rcv := newReceiver(t, always(200))
	f := newFixture(t, st, box, rcv.URL)
	d := New(Config{Store: st, Secrets: box, Poll: time.Hour})
	d.Start(context.Background())
	defer d.Stop(context.Background())
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				d.loop.Nudge()
			}
		}
	}()
	defer func() { close(stop); <-done }()
	f.end(t, st, domain.StatusCompleted, nil)
	select {
	case <-rcv.got:
	case <-time.After(5 * time.Second):
		t.Fatal("wake-ups every 5 ms starved the loop")
	}
}
