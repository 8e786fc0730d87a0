package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentplane/agentplane/client"
)

// hookReceiver is a webhook receiver verifying with the official Standard Webhooks library;
// it answers 503 to its first `failFirst` requests, then 204.
type hookReceiver struct {
	*httptest.Server
	mu        sync.Mutex
	secret    string
	failFirst int
	calls     []hookCall
}

type hookCall struct {
	id       string
	verified error
	body     []byte
}

func newHookReceiver(t *testing.T, failFirst int) *hookReceiver {
	h := &hookReceiver{failFirst: failFirst}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		wh, err := standardwebhooks.NewWebhook(h.secret)
		if err == nil {
			err = wh.Verify(body, r.Header)
		}
		h.calls = append(h.calls, hookCall{id: r.Header.Get("webhook-id"), verified: err, body: body})
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if len(h.calls) <= h.failFirst {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookReceiver) setSecret(s string) { h.mu.Lock(); h.secret = s; h.mu.Unlock() }

func (h *hookReceiver) snapshot() []hookCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookCall(nil), h.calls...)
}

// waitDelivery polls the delivery log through the SDK until the execution's delivery has the
// wanted status.
func waitDelivery(t *testing.T, c *client.Client, execID, status string, within time.Duration) *client.WebhookDelivery {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		l, err := c.WebhookDeliveryList(context.Background(), client.ListWebhookDeliveriesParams{ExecutionID: execID})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Data) == 1 && string(l.Data[0].Status) == status {
			return &l.Data[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery of %s not %s within %s: %+v", execID, status, within, l.Data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCompletionWebhooks: `serve` POSTs a finished execution to its agent's webhook, signed so
// that the official library verifies it; a 503 is retried (same webhook-id) until a 2xx; the
// delivery log shows it all; the secret is shown once and never stored in the clear.
func TestCompletionWebhooks(t *testing.T) {
	t.Parallel()
	forEachServeDB(t, func(t *testing.T, env map[string]string) {
		ctx := context.Background()
		rcv := newHookReceiver(t, 1)
		p := start(t, env, "serve")
		c := p.C
		a, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Hooked", Type: "simple", WebhookURL: rcv.URL + "/done"})
		if err != nil || !strings.HasPrefix(a.WebhookSecret, "whsec_") || !a.WebhookSecretSet || a.WebhookURL == nil {
			t.Fatalf("create: %+v %v", a, err)
		}
		rcv.setSecret(a.WebhookSecret)
		if got, _ := c.AgentGet(ctx, a.ID); got.WebhookSecret != "" || !got.WebhookSecretSet {
			t.Fatalf("the secret is shown again: %+v", got)
		}
		x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
		if err != nil || x.Status != "completed" {
			t.Fatalf("execute: %+v %v", x, err)
		}
		// The 503 makes it wait its first backoff (4 to 6 s) before the second attempt.
		d := waitDelivery(t, c, x.ID, "delivered", 20*time.Second)
		if d.Attempts != 2 || d.LastResponseCode == nil || *d.LastResponseCode != 204 || d.EventType != "execution.completed" || d.NextAttemptAt != nil {
			t.Fatalf("delivery %+v", d)
		}
		calls := rcv.snapshot()
		if len(calls) != 2 || calls[0].id != d.ID || calls[1].id != d.ID || calls[0].verified != nil || calls[1].verified != nil {
			t.Fatalf("receiver saw %+v", calls)
		}
		var msg struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(calls[1].body, &msg); err != nil || msg.Type != "execution.completed" || msg.Data["id"] != x.ID || msg.Data["status"] != "completed" {
			t.Fatalf("message %s (%v)", calls[1].body, err)
		}
		full, err := c.WebhookDeliveryGet(ctx, d.ID)
		if err != nil || !bytes.Equal(full.Payload, calls[1].body) {
			t.Fatalf("stored payload differs from the one sent: %v\n%s\n%s", err, full.Payload, calls[1].body)
		}
		// Rotation: the next run is signed with the new secret.
		r, err := c.AgentWebhookSecretRotate(ctx, a.ID)
		if err != nil || r.WebhookSecret == a.WebhookSecret || !strings.HasPrefix(r.WebhookSecret, "whsec_") {
			t.Fatalf("rotate: %+v %v", r, err)
		}
		rcv.setSecret(r.WebhookSecret)
		y, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "again"}})
		if err != nil {
			t.Fatal(err)
		}
		waitDelivery(t, c, y.ID, "delivered", 10*time.Second)
		p.stop(t)
		for _, s := range []string{a.WebhookSecret, r.WebhookSecret} {
			key := strings.TrimPrefix(s, "whsec_")
			if strings.Contains(p.Logs(), key) {
				t.Fatal("the server log holds a webhook secret")
			}
			if _, ok := env["DATABASE_URL"]; ok {
				continue
			}
			for _, f := range []string{"agentplane.db", "agentplane.db-wal"} {
				raw, err := os.ReadFile(filepath.Join(env["DATA_DIR"], f))
				if err == nil && bytes.Contains(raw, []byte(key)) {
					t.Fatalf("%s holds a webhook secret in the clear", f)
				}
			}
		}
	})
}

// TestCompletionWebhookEgressDenied: with --deny-private-egress a webhook on a loopback
// address is refused when connecting; the delivery fails at once, nothing is sent.
func TestCompletionWebhookEgressDenied(t *testing.T) {
	t.Parallel()
	env := serveEnv(dataDir(t))
	env["DENY_PRIVATE_EGRESS"] = "true"
	rcv := newHookReceiver(t, 0)
	p := start(t, env, "serve")
	ctx := context.Background()
	a, err := p.C.AgentCreate(ctx, client.AgentCreateRequest{Name: "Hooked", Type: "simple", WebhookURL: strings.Replace(rcv.URL, "127.0.0.1", "localhost", 1)})
	if err != nil {
		t.Fatal(err)
	}
	x, err := p.C.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	d := waitDelivery(t, p.C, x.ID, "failed", 10*time.Second)
	if d.Attempts != 1 || d.LastError == nil || !strings.Contains(*d.LastError, "denied") {
		t.Fatalf("delivery %+v", d)
	}
	// A retry is refused the same way.
	if r, err := p.C.WebhookDeliveryRetry(ctx, d.ID); err != nil || r.Status != "pending" {
		t.Fatalf("retry: %+v %v", r, err)
	}
	if d = waitDelivery(t, p.C, x.ID, "failed", 10*time.Second); d.Attempts != 2 {
		t.Fatalf("after the retry: %+v", d)
	}
	if len(rcv.snapshot()) != 0 {
		t.Fatal("the loopback receiver was reached")
	}
}

// TestEmulatorDeliversWebhooks: the emulator has the same webhooks.
func TestEmulatorDeliversWebhooks(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t, 0)
	p := start(t, emulatorEnv(nil), "emulator")
	ctx := context.Background()
	a, err := p.C.AgentCreate(ctx, client.AgentCreateRequest{Name: "Hooked", Type: "simple", WebhookURL: rcv.URL})
	if err != nil {
		t.Fatal(err)
	}
	rcv.setSecret(a.WebhookSecret)
	x, err := p.C.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	waitDelivery(t, p.C, x.ID, "delivered", 10*time.Second)
	if calls := rcv.snapshot(); len(calls) != 1 || calls[0].verified != nil {
		t.Fatalf("receiver saw %+v", calls)
	}
}

// TestCompletionWebhooksCluster: two `serve` nodes on one PostgreSQL both deliver from the one
// outbox; every attempt of every message is sent once (each message fails its first attempt,
// so both nodes' deliverers meet again at the retries).
func TestCompletionWebhooksCluster(t *testing.T) {
	t.Parallel()
	pg := postgresURL(t)
	if pg == "" {
		t.Skip("TEST_DATABASE_URL is not set: the cluster needs PostgreSQL")
	}
	ctx := context.Background()
	var mu sync.Mutex
	seen := map[string]int{}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("webhook-id")]++
		n := seen[r.Header.Get("webhook-id")]
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	env := serveEnv(t.TempDir())
	env["DATABASE_URL"] = pg
	env["RATE_LIMIT"] = "0"
	n1 := start(t, env, "serve")
	n2 := start(t, env, "serve")
	a, err := n1.C.AgentCreate(ctx, client.AgentCreateRequest{Name: "Hooked", Type: "simple", WebhookURL: rcv.URL})
	if err != nil {
		t.Fatal(err)
	}
	const runs = 20
	for i := range runs {
		c := n1.C
		if i%2 == 1 {
			c = n2.C
		}
		if _, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}, Async: client.Ptr(true)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := n2.C.WebhookDeliveryList(ctx, client.ListWebhookDeliveriesParams{Status: "delivered", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if l.Pagination.Total == runs {
			for _, d := range l.Data {
				if d.Attempts != 2 {
					t.Fatalf("delivery %s: %d attempts, want 2", d.ID, d.Attempts)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d delivered after 30 s", l.Pagination.Total, runs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != runs {
		t.Fatalf("%d messages, want %d", len(seen), runs)
	}
	for id, n := range seen {
		if n != 2 {
			t.Fatalf("message %s sent %d times, want 2", id, n)
		}
	}
}
