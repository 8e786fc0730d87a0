package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
)

// TestTriggerStore: secrets are sealed (the stored config holds only their masks), the token
// is found by its hash, events are deduplicated for 24 h, a tick is claimed once, and a
// conversation keeps its session.
func TestTriggerStore(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "trig")
		mustModel(t, s)
		a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
		if err != nil {
			t.Fatal(err)
		}
		box := secretbox.NewRandom()
		trID := NewID()
		config, sealed := sealedTrigger(t, box, ws, trID, domain.JSONObject{"bot_credential_id": "c1"},
			domain.TriggerSecrets{"signing_secret": "very-secret-value-123", "webhook_secret": "whsec_x"})
		tr, err := s.TriggerCreate(ctx, &domain.Trigger{ID: trID, WorkspaceID: ws, AgentID: a.ID, Type: "slack", Name: "S", Enabled: true,
			Config: config, TokenPrefix: "aph_abc"}, "hash-1", sealed)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Config["signing_secret"] != secretbox.Mask("very-secret-value-123") || tr.WebhookSecret != secretbox.Mask("whsec_x") || tr.Config["webhook_secret"] != nil {
			t.Fatalf("masks: %+v", tr)
		}
		var raw string
		if err := s.r.QueryRowContext(ctx, "SELECT config || secrets FROM agent_triggers WHERE id = $1", tr.ID).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(raw, "very-secret") {
			t.Fatal("the secret is stored in the clear")
		}
		if stats, err := s.StoreStats(ctx); err != nil || stats["agent_triggers"] != 1 || stats["trigger_events"] != 0 {
			t.Fatalf("store stats: %v %v", stats, err)
		}
		if _, err := s.TriggerUpdate(ctx, ws, tr.ID, domain.TriggerPatch{WebhookURL: domain.PtrTo("https://example.com/done")}, nil); err != nil {
			t.Fatal(err)
		}
		if u, sealedW, err := s.TriggerWebhookSealed(ctx, ws, tr.ID); err != nil || u != "https://example.com/done" || sealedW != sealed {
			t.Fatalf("webhook: %q %q %v", u, sealedW, err)
		}
		got, sealedT, err := s.TriggerByToken(ctx, "hash-1")
		if err != nil || got.ID != tr.ID || sealedT != sealed {
			t.Fatalf("by token: %v %q %v", got, sealedT, err)
		}
		secrets, err := openedTrigger(t, box, ws, tr.ID, sealedT)
		if err != nil || secrets["signing_secret"] != "very-secret-value-123" {
			t.Fatalf("secrets by token: %v %v", secrets, err)
		}
		if _, _, err := s.TriggerByToken(ctx, "hash-2"); !IsNotFound(err) {
			t.Fatalf("unknown token: %v", err)
		}
		if _, err := openedTrigger(t, secretbox.NewRandom(), ws, tr.ID, sealedT); err == nil {
			t.Fatal("secrets opened with another key")
		}

		now := time.Now()
		if err := s.TriggerEventClaim(ctx, tr.ID, "Ev1", "x1", now); err != nil {
			t.Fatal(err)
		}
		var dup *DuplicateEventError
		if err := s.TriggerEventClaim(ctx, tr.ID, "Ev1", "x2", now.Add(23*time.Hour)); !errors.As(err, &dup) || dup.ExecutionID != "x1" {
			t.Fatalf("retry within 24 h: %v", err)
		}
		if err := s.TriggerEventClaim(ctx, tr.ID, "Ev1", "x3", now.Add(25*time.Hour)); err != nil {
			t.Fatalf("the same id after 24 h is a new event: %v", err)
		}
		if n, err := s.TriggerEventsPrune(ctx, now.Add(50*time.Hour)); err != nil || n != 1 {
			t.Fatalf("prune: %d %v", n, err)
		}
		for _, id := range []string{"xa", "xb"} {
			if err := s.TriggerReplyCreate(ctx, &domain.TriggerReply{ExecutionID: id, WorkspaceID: ws, TriggerID: tr.ID, ReplyTo: map[string]string{"channel": "C1"}}); err != nil {
				t.Fatal(err)
			}
		}
		if r, err := s.TriggerReplyClaim(ctx, "xa", now, time.Minute); err != nil || r == nil || r.ReplyTo["channel"] != "C1" || r.Attempts != 1 {
			t.Fatalf("claim: %+v %v", r, err)
		}
		if r, err := s.TriggerReplyClaim(ctx, "xa", now, time.Minute); err != nil || r != nil {
			t.Fatalf("a held reply claimed again: %+v %v", r, err)
		}
		if err := s.TriggerReplyFinish(ctx, "xa", domain.ReplySent, "", time.Time{}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.TriggerRepliesPrune(ctx, time.Now().Add(8*24*time.Hour)); err != nil || n != 1 {
			t.Fatalf("prune replies: %d %v (the pending one stays)", n, err)
		}

		sched, err := s.TriggerCreate(ctx, &domain.Trigger{WorkspaceID: ws, AgentID: a.ID, Type: "schedule", Name: "D", Enabled: true,
			Config: domain.JSONObject{"cron": "* * * * *"}, NextRunAt: &domain.Time{Time: time.UnixMilli(1_000_000)}}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		due, err := s.TriggersDue(ctx, time.UnixMilli(1_000_000), 10)
		if err != nil || len(due) != 1 || due[0].ID != sched.ID {
			t.Fatalf("due: %v %v", due, err)
		}
		ran := time.UnixMilli(1_000_000)
		if err := s.TriggerTickClaim(ctx, sched.ID, ran, time.UnixMilli(1_060_000), &ran); err != nil {
			t.Fatal(err)
		}
		if err := s.TriggerTickClaim(ctx, sched.ID, ran, time.UnixMilli(1_060_000), &ran); !errors.Is(err, domain.ErrTickTaken) {
			t.Fatalf("second claim of one tick: %v", err)
		}
		if due, _ := s.TriggersDue(ctx, time.UnixMilli(1_000_000), 10); len(due) != 0 {
			t.Fatalf("still due: %v", due)
		}

		s1, err := s.TriggerSession(ctx, tr, "T1:C1:1.0", "S · thread", nil)
		if err != nil {
			t.Fatal(err)
		}
		s2, _ := s.TriggerSession(ctx, tr, "T1:C1:1.0", "S · thread", nil)
		s3, _ := s.TriggerSession(ctx, tr, "T1:C1:2.0", "S · other", nil)
		if s1 != s2 || s1 == s3 {
			t.Fatalf("sessions %s %s %s", s1, s2, s3)
		}
		cred, err := credentialCreate(ctx, s, &domain.Credential{WorkspaceID: ws, Name: "bot", Type: "bearer_token"}, "xoxb-1", box)
		if err != nil {
			t.Fatal(err)
		}
		botConfig, botSealed := sealedTrigger(t, box, ws, tr.ID, domain.JSONObject{"bot_credential_id": cred.ID}, secrets)
		if _, err := s.TriggerUpdate(ctx, ws, tr.ID, domain.TriggerPatch{Config: &botConfig}, &botSealed); err != nil {
			t.Fatal(err)
		}
		var ce *ConflictError
		if _, err := s.CredentialDelete(ctx, ws, cred.ID); !errors.As(err, &ce) || !strings.Contains(ce.Message, tr.ID) {
			t.Fatalf("deleting a credential a trigger replies with: %v", err)
		}
		if _, err := s.TriggerDelete(ctx, ws, tr.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CredentialDelete(ctx, ws, cred.ID); err != nil {
			t.Fatalf("credential no trigger uses: %v", err)
		}
		if _, err := s.TriggerGet(ctx, ws, tr.ID); !IsNotFound(err) {
			t.Fatalf("after delete: %v", err)
		}
	})
}
