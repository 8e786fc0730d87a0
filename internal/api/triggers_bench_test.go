package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/triggers"
	"github.com/agentplane/agentplane/internal/vault"
)

// BenchmarkHookWebhook measures, in-process on `serve`'s SQLite store, one accepted call of a
// generic webhook trigger: token lookup, secret opening, (with a signing secret) the
// Standard Webhooks check, input mapping, the dedup record and the queued execution, all in
// one transaction; the answer is the 202.
func BenchmarkHookWebhook(b *testing.B) {
	for _, signed := range []bool{false, true} {
		name := "unsigned"
		if signed {
			name = "signed"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			st, ws := benchStore(b)
			a, err := st.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o-mini"}, "")
			if err != nil {
				b.Fatal(err)
			}
			box := secretbox.NewRandom()
			token, _ := triggers.NewHookToken()
			secrets := domain.TriggerSecrets{}
			if signed {
				secrets["signing_secret"] = testWhsec
			}
			if _, err := vault.TriggerCreate(ctx, st, &domain.Trigger{WorkspaceID: ws, AgentID: a.ID, Type: "webhook", Name: "W", Enabled: true,
				Config: domain.JSONObject{"respond": "async"}, InputMapping: map[string]string{"message": "text"}}, auth.HashKey(token), secrets, box); err != nil {
				b.Fatal(err)
			}
			// Queued runs are not worked off: the benchmark measures accepting calls.
			srv := benchServer(b, st, ws, box)
			h := srv.Handler()
			wh, _ := standardwebhooks.NewWebhook(testWhsec)
			body := []byte(`{"text":"deploy finished","meta":{"env":"prod"}}`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				req := httptest.NewRequest(http.MethodPost, "/api/v1/hooks/"+token, strings.NewReader(string(body)))
				req.Header.Set("Content-Type", "application/json")
				id := "msg_" + strconv.Itoa(i)
				req.Header.Set("webhook-id", id)
				if signed {
					now := time.Now()
					sig, _ := wh.Sign(id, now, body)
					req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
					req.Header.Set("webhook-signature", sig)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusAccepted {
					b.Fatalf("call %d: %d %s", i, rec.Code, rec.Body)
				}
			}
		})
	}
}
