package cli

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/api"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

func TestRetentionOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		name     string
		in       RetentionOptions
		wantDays int
		err      string // a substring of the error; "" for none
	}{
		{"defaults", RetentionOptions{Interval: time.Minute}, 0, ""},
		{"days", RetentionOptions{Retention: api.Retention{Days: 30}, Interval: time.Minute}, 30, ""},
		{"ceiling gives new workspaces the ceiling", RetentionOptions{Retention: api.Retention{MaxDays: 90}, Interval: time.Minute}, 90, ""},
		{"under the ceiling", RetentionOptions{Retention: api.Retention{Days: 30, MaxDays: 90}, Interval: time.Minute}, 30, ""},
		{"over the ceiling", RetentionOptions{Retention: api.Retention{Days: 91, MaxDays: 90}, Interval: time.Minute}, 0, "--retention-days"},
		{"negative days", RetentionOptions{Retention: api.Retention{Days: -1}, Interval: time.Minute}, 0, "--retention-days"},
		{"negative ceiling", RetentionOptions{Retention: api.Retention{MaxDays: -1}, Interval: time.Minute}, 0, "--max-retention-days"},
		{"no interval", RetentionOptions{}, 0, "--retention-interval"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.in.Validate()
			if c.err == "" {
				if err != nil || c.in.Days != c.wantDays {
					t.Fatalf("days %d, error %v; want %d", c.in.Days, err, c.wantDays)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want one naming %s", err, c.err)
			}
		})
	}
}

// TestEmulatorPurgesExpiredHistory: the emulator applies --retention-days to its workspace
// and runs the purge every --retention-interval (on a clock two days ahead).
func TestEmulatorPurgesExpiredHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	emu, err := NewEmulator(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)), EmulatorConfig{
		Retention: RetentionOptions{Retention: api.Retention{Days: 1}, Interval: 10 * time.Millisecond,
			now: func() time.Time { return time.Now().Add(48 * time.Hour) }}})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	w, err := emu.Store.WorkspaceGet(ctx, EmulatorWorkspaceID)
	if err != nil || w.RetentionDays != 1 {
		t.Fatalf("emulator workspace: %+v %v", w, err)
	}
	// Each run is written with its status as it is: a pending one would be claimed by the
	// emulator's own workers meanwhile.
	old := func(status string) string {
		x := &domain.Execution{ID: store.NewID(), WorkspaceID: EmulatorWorkspaceID, AgentID: "a", Source: "api", Status: status,
			Input: domain.JSONObject{}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
		if err := emu.Store.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: EmulatorWorkspaceID, ExecutionID: &x.ID, Name: "a"}); err != nil {
			t.Fatal(err)
		}
		return x.ID
	}
	done, waiting := old(domain.StatusCompleted), old(domain.StatusAwaitingApproval)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := emu.Store.ExecutionGet(ctx, EmulatorWorkspaceID, done)
		if store.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a completed run two days old is still there: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if x, err := emu.Store.ExecutionGet(ctx, EmulatorWorkspaceID, waiting); err != nil || x.Status != domain.StatusAwaitingApproval {
		t.Fatalf("the run awaiting approval: %+v %v", x, err)
	}
}
