package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

// built is the agentplane binary buildBinary made, shared by every test of the package (a
// race-enabled link costs seconds of CPU; the binary does not change between tests).
var built struct {
	once sync.Once
	dir  string // removed by TestMain
	bin  string
	err  error
	out  []byte
}

// buildBinary builds agentplane once per package run (with the race detector when the tests
// have it, so the build reuses their compiled packages) and returns its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "agentplane-e2e-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "agentplane")
		args := []string{"build", "-o", built.bin}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "github.com/agentplane/agentplane/cmd/agentplane")
		cmd := exec.Command(filepath.Join(goruntime.GOROOT(), "bin", "go"), args...)
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

// osProc is `serve` running as a process of its own, so that it can be killed with SIGKILL.
type osProc struct {
	URL, Node string
	cmd       *exec.Cmd
	mu        sync.Mutex
	logs      strings.Builder
	exited    chan struct{}
}

var nodeRe = regexp.MustCompile(`msg="engine started" node=(\S+)`)

// startProcess runs bin serve with env as its environment and waits until it listens.
func startProcess(t *testing.T, bin string, env map[string]string) *osProc {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &osProc{cmd: cmd, exited: make(chan struct{})}
	found := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.logs.WriteString(line + "\n")
			if m := nodeRe.FindStringSubmatch(line); m != nil {
				p.Node = m[1]
			}
			if m := urlRe.FindStringSubmatch(line); m != nil && p.URL == "" {
				p.URL = m[1]
				once.Do(func() { close(found) })
			}
			p.mu.Unlock()
		}
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
	})
	select {
	case <-found:
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.Node == "" {
			t.Fatalf("serve did not log its node id:\n%s", p.logs.String())
		}
		return p
	case <-p.exited:
		t.Fatalf("serve exited before listening:\n%s", p.Logs())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not start within 60 s:\n%s", p.Logs())
	}
	return nil
}

// Logs returns what the process wrote to stderr so far.
func (p *osProc) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// followed is one stream read through a node that is then killed, resumed elsewhere.
type followed struct {
	id      string
	frames  []client.StreamEvent
	err     error
	resumed bool // the first stream broke (its node died) and was resumed on another
}

// TestCluster runs three `serve` nodes on one PostgreSQL database (two in this process, one a
// process of its own) with a slow streaming model: 300 async runs; a fourth node starts
// midway and affects no run; the separate process is killed with SIGKILL, and every run it
// held ends (or completes on another node) within the lease timeout + 10 s, no completed run
// calls the model twice, and streams read through it and resumed on another node with
// Last-Event-ID see every frame once. Streams on one node of runs on another see every frame;
// cancel and approve sent to a node other than the runner act across nodes.
func TestCluster(t *testing.T) {
	pg := postgresURL(t)
	if pg == "" {
		t.Skip("TEST_DATABASE_URL is not set: the cluster needs PostgreSQL")
	}
	ctx := context.Background()
	const words = 10
	reply := make([]string, words)
	for i := range reply {
		reply[i] = fmt.Sprintf("w%d ", i)
	}
	full := strings.Join(reply, "")
	fake := llmtest.NewOpenAI()
	defer fake.Close()
	fake.Fallback = func(req llmtest.Request) llmtest.Reply {
		delay := 30 * time.Millisecond
		if strings.Contains(string(req.Raw), "slow run") {
			delay = 300 * time.Millisecond
		}
		return llmtest.Reply{Text: reply, Delay: delay, Usage: &llmtest.Usage{Prompt: 5, Completion: words}}
	}
	const lease = 3 * time.Second
	env := serveEnv(t.TempDir())
	for k, v := range map[string]string{"DATABASE_URL": pg, "MODELS": "real", "LEASE_TIMEOUT": lease.String(), "HEARTBEAT_INTERVAL": "500ms",
		"WORKERS": "8", "LOG_LEVEL": "info", "RATE_LIMIT": "0", "SHUTDOWN_TIMEOUT": "2s"} {
		env[k] = v
	}
	n1 := start(t, env, "serve")
	bin := buildBinary(t)
	n3 := startProcess(t, bin, env)
	n2 := start(t, env, "serve")
	c1, c2 := n1.C, n2.C
	c3 := client.New(n3.URL, client.WithAPIKey(n1.Key))
	if _, err := c1.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "fake", Type: "api_key", Provider: "openai",
		Value: "sk-proj-clusterTEST0000000000000000000000", Metadata: map[string]any{"base_url": fake.URL + "/v1"}}); err != nil {
		t.Fatal(err)
	}
	agent := mustAgent(t, c1, "simple", client.AgentConfig{Model: "gpt-4o-mini"})

	// Cancel and approve sent to a node other than the runner (a sync run stays on the node
	// that took it).
	crossNodeCancelApprove(t, c1, c2, agent.ID)

	// 300 async runs, spread over the three nodes.
	const runs = 300
	ids := make([]string, runs)
	clients := []*client.Client{c1, c2, c3}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range runs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			x, err := clients[i%3].Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"message": fmt.Sprintf("run-%03d", i)}, Async: client.Ptr(true)})
			if err != nil {
				t.Errorf("submit %d: %v", i, err)
				return
			}
			ids[i] = x.ID
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	// Streams on n2 from the first frame (runs on any node), and streams through n3 that
	// are resumed on n1 once n3 is killed.
	var streams sync.WaitGroup
	crossNode := make([][]client.StreamEvent, 20)
	for i := range crossNode {
		streams.Go(func() {
			s, err := c2.ExecutionStream(ctx, ids[i], 0)
			if err != nil {
				t.Errorf("stream %s on n2: %v", ids[i], err)
				return
			}
			crossNode[i], err = s.Collect()
			if err != nil {
				t.Errorf("stream %s on n2: %v", ids[i], err)
			}
		})
	}
	through := make([]*followed, 40)
	for i := range through {
		// Runs queued behind those running when n3 dies: their streams are open through it then.
		f := &followed{id: ids[170+i]}
		through[i] = f
		streams.Go(func() { f.frames, f.resumed, f.err = readThenResume(ctx, c3, c1, f.id) })
	}

	// A fourth node joins midway; later n3 dies with runs in flight.
	waitDone(t, c1, ids, 100, time.Minute)
	start(t, env, "serve")
	waitDone(t, c1, ids, 150, time.Minute)
	if err := n3.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-n3.exited
	waitDone(t, c1, ids, runs, lease+10*time.Second+5*time.Second)
	t.Logf("all %d runs ended %s after the kill", runs, time.Since(killed).Round(time.Millisecond))
	streams.Wait()

	// Model calls per run, counted at the fake.
	calls := map[string]int{}
	for _, r := range fake.Requests() {
		if m := regexp.MustCompile(`run-\d{3}`).FindString(string(r.Raw)); m != "" {
			calls[m]++
		}
	}
	failed := 0
	for i, id := range ids {
		x, err := c1.ExecutionGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		tag := fmt.Sprintf("run-%03d", i)
		switch x.Status {
		case "completed":
			if calls[tag] != 1 {
				t.Errorf("%s (%s) completed after %d model calls", id, tag, calls[tag])
			}
		case "failed":
			failed++
			if x.Error == nil || !strings.Contains(*x.Error, n3.Node) || calls[tag] > 1 {
				t.Errorf("%s failed, but not as a run of the killed node (%s): %v, %d calls", id, n3.Node, x.Error, calls[tag])
			}
			if x.CompletedAt == nil || x.CompletedAt.Sub(killed) > lease+10*time.Second {
				t.Errorf("%s, held by the killed node, ended at %v: more than the lease + 10 s after the kill", id, x.CompletedAt)
			}
		default:
			t.Errorf("%s ended %s", id, x.Status)
		}
	}
	t.Logf("%d runs failed with the killed node; the rest completed", failed)
	if failed > 8 {
		t.Errorf("%d runs failed: more than the killed node could hold", failed)
	}

	// Streams on another node than the runner: every frame, once, in order.
	for i, frames := range crossNode {
		checkClusterFrames(t, c1, ids[i], frames, full)
	}
	resumed := 0
	for _, f := range through {
		if f.err != nil {
			t.Errorf("stream %s through the killed node: %v", f.id, f.err)
			continue
		}
		checkClusterFrames(t, c1, f.id, f.frames, full)
		if f.resumed {
			resumed++
		}
	}
	t.Logf("%d streams read through the killed node were resumed on another", resumed)
	if resumed == 0 {
		t.Error("no stream was open through the killed node when it died")
	}
}

// crossNodeCancelApprove: a run on n2 cancelled through n1 stops, and n1 answers it
// cancelled; a run paused on n2 and approved through n1 resumes and completes.
func crossNodeCancelApprove(t *testing.T, c1, c2 *client.Client, agentID string) {
	ctx := context.Background()
	type result struct {
		x   *client.Execution
		err error
	}
	done := make(chan result, 1)
	go func() {
		x, err := c2.Execute(ctx, agentID, client.ExecuteRequest{Input: map[string]any{"message": "slow run"}})
		done <- result{x, err}
	}()
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == ""; {
		l, err := c1.ExecutionList(ctx, client.ListExecutionsParams{Status: "running"})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Data) > 0 {
			id = l.Data[0].ID
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow run did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // inside its model call
	got, err := c1.ExecutionCancel(ctx, id)
	if err != nil || got.Status != "cancelled" {
		t.Fatalf("cancel through another node: %+v %v", got, err)
	}
	r := <-done
	if r.err != nil || r.x.Status != "cancelled" {
		t.Fatalf("the runner's answer: %+v %v", r.x, r.err)
	}

	gate := mustAgent(t, c1, "approval", client.AgentConfig{Model: "gpt-4o-mini", Approval: client.ApprovalConfig{
		Checkpoints: []client.Checkpoint{{Name: "review", When: "before_output"}}}})
	x, err := c2.Execute(ctx, gate.ID, client.ExecuteRequest{Input: map[string]any{"message": "refund 40"}})
	if err != nil || x.Status != "awaiting_approval" {
		t.Fatalf("approval run: %+v %v", x, err)
	}
	if _, err := c1.ExecutionApprove(ctx, x.ID, "ok"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	final, err := c1.Wait(wctx, x.ID, 10*time.Millisecond, false)
	if err != nil || final.Status != "completed" {
		t.Fatalf("approved through another node: %+v %v", final, err)
	}
}

// readThenResume reads a stream through `first` from the first frame until it breaks or ends,
// then (if it broke) resumes it through `second` after the last frame seen.
func readThenResume(ctx context.Context, first, second *client.Client, id string) ([]client.StreamEvent, bool, error) {
	s, err := first.ExecutionStream(ctx, id, 0)
	if err != nil {
		return nil, false, err
	}
	var out []client.StreamEvent
	for {
		ev, ok, err := s.Next()
		if err != nil || !ok {
			break
		}
		out = append(out, ev)
		if ev.Terminal() {
			s.Close()
			return out, false, nil
		}
	}
	s.Close()
	last := 0
	if n := len(out); n > 0 {
		last = out[n-1].ID
	}
	r, err := second.ExecutionStream(ctx, id, last)
	if err != nil {
		return out, true, err
	}
	rest, err := r.Collect()
	return append(out, rest...), true, err
}

// checkClusterFrames: ids strictly increase, the stream ends with its terminal frame, and a
// completed run's content frames spell the whole reply, each once.
func checkClusterFrames(t *testing.T, c *client.Client, id string, frames []client.StreamEvent, full string) {
	t.Helper()
	if len(frames) == 0 || !frames[len(frames)-1].Terminal() {
		t.Errorf("stream %s: no terminal frame (%d frames)", id, len(frames))
		return
	}
	var text strings.Builder
	for i, f := range frames {
		if i > 0 && f.ID <= frames[i-1].ID {
			t.Errorf("stream %s: frame id %d after %d", id, f.ID, frames[i-1].ID)
			return
		}
		if f.Event == "content" {
			var d struct{ Content string }
			_ = json.Unmarshal([]byte(f.Data), &d)
			text.WriteString(d.Content)
		}
	}
	x, err := c.ExecutionGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if x.Status == "completed" && text.String() != full {
		t.Errorf("stream %s of a completed run: content %q, want %q", id, text.String(), full)
	}
	if last := frames[len(frames)-1]; x.Status == "completed" && last.Event != "done" || x.Status == "failed" && last.ErrorCode() != "interrupted" {
		t.Errorf("stream %s: %s run ended with %s %s", id, x.Status, last.Event, last.Data)
	}
}

// waitDone waits until at least n of ids are terminal.
func waitDone(t *testing.T, c *client.Client, ids []string, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var ended atomic.Int32 // summed over the statuses
	for {
		ended.Store(0)
		for _, status := range []string{"completed", "failed", "cancelled"} {
			l, err := c.ExecutionList(context.Background(), client.ListExecutionsParams{Status: client.ListExecutionsParamsStatus(status), Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			ended.Add(int32(l.Pagination.Total))
		}
		// The cross-node cancel and approve runs are counted too (two ended runs).
		if int(ended.Load())-2 >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d runs ended within %s", ended.Load()-2, n, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
