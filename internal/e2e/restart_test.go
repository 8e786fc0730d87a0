package e2e

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
)

// TestServeRestartLosesNothing restarts `serve` on the same data directory between writes
// and reads: resources, finished runs with their event logs, and a run waiting for approval
// all survive, and the waiting run completes after the restart.
func TestServeRestartLosesNothing(t *testing.T) {
	forEachServeDB(t, restartSuite)
}

func restartSuite(t *testing.T, env map[string]string) {
	ctx := context.Background()
	p := start(t, env, "serve")
	c := p.C
	a := mustAgent(t, c, "approval", client.AgentConfig{SystemPrompt: "You approve refunds.", Approval: client.ApprovalConfig{
		Checkpoints: []client.Checkpoint{{Name: "review", When: "before_output"}}}})
	plain := mustAgent(t, c, "simple", client.AgentConfig{})
	done, err := c.Execute(ctx, plain.ID, client.ExecuteRequest{Input: map[string]any{"message": "before the restart"}})
	if err != nil || done.Status != "completed" {
		t.Fatalf("run: %+v %v", done, err)
	}
	s, _ := c.ExecutionStream(ctx, done.ID, 0)
	before, err := s.Collect()
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "refund 40"}})
	if err != nil || waiting.Status != "awaiting_approval" {
		t.Fatalf("approval run: %+v %v", waiting, err)
	}
	sess, _ := c.ChatSessionCreate(ctx, plain.ID, "kept", nil)
	if _, err := c.ChatSend(ctx, sess.ID, "remember me"); err != nil {
		t.Fatal(err)
	}
	p.stop(t)

	q := start(t, env, "serve")
	c = q.C
	got, err := c.AgentGet(ctx, a.ID)
	if err != nil || len(got.Config.Approval.Checkpoints) == 0 {
		t.Fatalf("agent after restart: %+v %v", got, err)
	}
	s, _ = c.ExecutionStream(ctx, done.ID, 0)
	after, err := s.Collect()
	if err != nil || len(after) != len(before) || after[len(after)-1].Data != before[len(before)-1].Data {
		t.Fatalf("event log after restart: %d frames, before %d (%v)", len(after), len(before), err)
	}
	msgs, err := c.ChatMessageList(ctx, sess.ID, client.ListChatMessagesParams{})
	if err != nil || msgs.Pagination.Total != 2 {
		t.Fatalf("chat after restart: %+v %v", msgs, err)
	}
	inbox, err := c.ApprovalList(ctx, client.ListApprovalsParams{})
	if err != nil || inbox.Pagination.Total != 1 || inbox.Data[0].ExecutionID != waiting.ID {
		t.Fatalf("inbox after restart: %+v %v", inbox, err)
	}
	if _, err := c.ExecutionApprove(ctx, waiting.ID, "ok after restart"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	final, err := c.Wait(cctx, waiting.ID, 5*time.Millisecond, false)
	if err != nil || final.Status != "completed" || !strings.Contains(string(final.Output), "content") {
		t.Fatalf("approved after restart: %+v %v", final, err)
	}
}

// TestServeFailsRunsOfAStoppedServer checks that a run cut off by a shutdown is recorded as
// failed with a message saying so, never left running.
func TestServeFailsRunsOfAStoppedServer(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	p := start(t, serveEnv(dir), "serve")
	slow := mustAgent(t, p.C, "simple", client.AgentConfig{Simulation: client.Simulation{LatencyMs: client.Ptr[int64](500)}})
	x, err := p.C.Execute(ctx, slow.ID, client.ExecuteRequest{Input: map[string]any{"message": "this will be cut off"}, Async: client.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	for {
		cur, _ := p.C.ExecutionGet(ctx, x.ID)
		if cur.Status == "running" {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	p.stop(t)
	q := start(t, serveEnv(dir), "serve")
	got, err := q.C.ExecutionGet(ctx, x.ID)
	if err != nil || got.Status != "failed" || got.Error == nil || !strings.Contains(*got.Error, "shut down") {
		t.Fatalf("after shutdown: %v %v %v", got.Status, *got.Error, err)
	}
	s, _ := q.C.ExecutionStream(ctx, x.ID, -1)
	evs, err := s.Collect()
	if err != nil || len(evs) != 1 || evs[0].Event != "error" || evs[0].ErrorCode() != "interrupted" {
		t.Fatalf("terminal frame: %+v %v", evs, err)
	}
}

// TestMigrateCommand: `agentplane migrate` applies the migrations to the configured database
// and exits; running it again is a no-op.
func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for range 2 {
		code, out := exit(t, map[string]string{"DATA_DIR": dir}, "migrate")
		if code != 0 {
			t.Fatalf("migrate: exit %d: %s", code, out)
		}
	}
	code, out := exit(t, map[string]string{"DATABASE_URL": "mysql://nope"}, "migrate")
	if code != 2 || !strings.Contains(out, "--database-url") {
		t.Fatalf("bad DATABASE_URL: exit %d: %s", code, out)
	}
}

// TestServeBadTrustedProxies: a malformed --trusted-proxies stops start-up naming the flag.
func TestServeBadTrustedProxies(t *testing.T) {
	t.Parallel()
	env := serveEnv(t.TempDir())
	env["TRUSTED_PROXIES"] = "10.0.0.0/8, not-an-address"
	code, out := exit(t, env, "serve")
	if code != 2 || !strings.Contains(out, "--trusted-proxies") || !strings.Contains(out, "not-an-address") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// TestBusyPort: `serve` on a port in use fails before it creates its database or prints a
// key; the emulator fails before it says it is ready.
func TestBusyPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	dir := t.TempDir()
	env := serveEnv(dir)
	env["PORT"] = port
	code, out := exit(t, env, "serve")
	if code != 1 || !strings.Contains(out, "listen on 127.0.0.1:"+port) || strings.Contains(out, bootstrapMarker) {
		t.Fatalf("serve on a busy port: exit %d: %s", code, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("serve on a busy port left files in its data directory: %v", entries)
	}
	code, out = exit(t, emulatorEnv(map[string]string{"PORT": port}), "emulator")
	if code != 1 || !strings.Contains(out, "listen on 127.0.0.1:"+port) || strings.Contains(out, "emulator ready") {
		t.Fatalf("emulator on a busy port: exit %d: %s", code, out)
	}
}

// TestServeBadLeases: a lease a heartbeat could not keep stops start-up naming the flag.
func TestServeBadLeases(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ lease, heartbeat, flag string }{
		{"50ms", "10ms", "--lease-timeout"},
		{"3s", "2s", "--heartbeat-interval"},
		{"3s", "0s", "--heartbeat-interval"},
	} {
		env := serveEnv(t.TempDir())
		env["LEASE_TIMEOUT"], env["HEARTBEAT_INTERVAL"] = c.lease, c.heartbeat
		code, out := exit(t, env, "serve")
		if code != 2 || !strings.Contains(out, c.flag) {
			t.Errorf("lease %s, heartbeat %s: exit %d: %s", c.lease, c.heartbeat, code, out)
		}
	}
	// A lease alone takes a heartbeat of a third of it.
	env := serveEnv(dataDir(t))
	env["LEASE_TIMEOUT"] = "3s"
	start(t, env, "serve")
}
