package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestRetries: WithRetries repeats a 429 and a safe 5xx, never an unsafe POST, and stops at
// its budget.
func TestRetries(t *testing.T) {
	// failing answers status to the first fails tries, then the envelope of an agent.
	failing := func(status, fails int32) (*httptest.Server, *atomic.Int32) {
		var tries atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if tries.Add(1) <= fails {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(int(status))
				_, _ = w.Write([]byte(`{"error":"busy","message":"try again"}`))
				return
			}
			_, _ = w.Write([]byte(`{"data":{"id":"a1","name":"x"}}`))
		}))
		t.Cleanup(srv.Close)
		return srv, &tries
	}
	ctx := context.Background()
	body := AgentCreateRequest{Name: "x", Type: AgentCreateRequestTypeSimple}

	t.Run("RateLimitedGet", func(t *testing.T) {
		srv, tries := failing(http.StatusTooManyRequests, 2)
		a, err := New(srv.URL, WithRetries(2)).AgentGet(ctx, "a1")
		if err != nil || a.ID != "a1" || tries.Load() != 3 {
			t.Fatalf("got %+v %v after %d tries", a, err, tries.Load())
		}
	})
	t.Run("BudgetSpent", func(t *testing.T) {
		srv, tries := failing(http.StatusServiceUnavailable, 5)
		_, err := New(srv.URL, WithRetries(1)).AgentGet(ctx, "a1")
		var ae *Error
		if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || ae.Code != "busy" || tries.Load() != 2 {
			t.Fatalf("got %v after %d tries", err, tries.Load())
		}
	})
	t.Run("UnsafePostNotRepeated", func(t *testing.T) {
		srv, tries := failing(http.StatusServiceUnavailable, 1)
		if _, err := New(srv.URL, WithRetries(3)).AgentCreate(ctx, body); err == nil || tries.Load() != 1 {
			t.Fatalf("got %v after %d tries", err, tries.Load())
		}
	})
	t.Run("PostWithKeyRepeated", func(t *testing.T) {
		srv, tries := failing(http.StatusBadGateway, 1)
		a, err := New(srv.URL, WithRetries(3)).AgentCreate(ctx, body, WithIdempotencyKey("k1"))
		if err != nil || a.ID != "a1" || tries.Load() != 2 {
			t.Fatalf("got %+v %v after %d tries", a, err, tries.Load())
		}
	})
	t.Run("NoRetriesByDefault", func(t *testing.T) {
		srv, tries := failing(http.StatusTooManyRequests, 1)
		if _, err := New(srv.URL).AgentGet(ctx, "a1"); err == nil || tries.Load() != 1 {
			t.Fatalf("got %v after %d tries", err, tries.Load())
		}
	})
}
