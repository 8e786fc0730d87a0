package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// twoNodes starts two engines on one PostgreSQL schema, as two servers would run.
func twoNodes(t *testing.T, ma, mb *testModel) (st *store.Store, a *domain.Agent, na, nb *Engine) {
	t.Helper()
	u := pgTestURL(t)
	st = openPG(t, u)
	a = fixtureAgent(t, st)
	stB := openPG(t, u)
	na = engineOn(t, st, u, ma, 2)
	nb = engineOn(t, stB, u, mb, 2)
	// Each hears the other's hello within a heartbeat.
	deadline := time.Now().Add(5 * time.Second)
	for na.notify.cl.alone() || nb.notify.cl.alone() {
		if time.Now().After(deadline) {
			t.Fatal("the nodes did not hear each other")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return st, a, na, nb
}

// TestClusterLeader: of two nodes on one database, exactly one leads.
func TestClusterLeader(t *testing.T) {
	t.Parallel()
	_, _, na, nb := twoNodes(t, nil, nil)
	ctx := context.Background()
	// Leading (what the leader's other jobs, the retention purge, ask) names one of them.
	if na.Leading() == nb.Leading() {
		t.Fatalf("leading: a %v, b %v", na.Leading(), nb.Leading())
	}
	la, err := na.elect.lock.hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := nb.elect.lock.hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if la == lb {
		t.Fatalf("leaders: a %v, b %v", la, lb)
	}
}

// TestClusterCancel: a cancel sent to node B of a run on node A stops it there, and B answers
// only once the run is recorded cancelled.
func TestClusterCancel(t *testing.T) {
	t.Parallel()
	m := newTestModel(0)
	m.block.Store(true)
	st, a, na, nb := twoNodes(t, m, nil)
	ctx := context.Background()
	x, run, err := na.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
		Input: map[string]any{"message": "long"}, Source: "api", TimeoutMS: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	for len(m.callsOf("long")) == 0 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	got, err := nb.Cancel(ctx, a.WorkspaceID, x.ID)
	took := time.Since(start)
	if err != nil || got.Status != domain.StatusCancelled {
		t.Fatalf("cancel on the other node: %+v %v", got, err)
	}
	select {
	case <-run.Done():
	default:
		t.Fatal("B answered before A's run stopped")
	}
	if final, _ := st.ExecutionGet(ctx, a.WorkspaceID, x.ID); final.Status != domain.StatusCancelled {
		t.Fatalf("recorded %s", final.Status)
	}
	t.Logf("cancel across nodes answered in %s", took)
	if took > 2*time.Second {
		t.Errorf("cancel across nodes took %s", took)
	}
}

// TestClusterApprove: approve sent to node B resumes a run node A paused; B owns the resumed
// pass, with frame ids above A's.
func TestClusterApprove(t *testing.T) {
	t.Parallel()
	st, a, na, nb := twoNodes(t, nil, nil)
	ctx := context.Background()
	gate := approvalAgent(t, st, a.WorkspaceID)
	x := awaiting(t, na, gate)
	resumed, err := nb.Approve(ctx, gate.WorkspaceID, x.ID, "ok")
	if err != nil || resumed.OwnerNode == nil || *resumed.OwnerNode != nb.node || resumed.Attempt != 2 {
		t.Fatalf("approve on B: %+v %v", resumed, err)
	}
	done := waitStatus(t, st, gate.WorkspaceID, x.ID, domain.StatusCompleted)
	evs, _ := st.EventList(ctx, done.ID, 0)
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq <= evs[i-1].Seq {
			t.Fatalf("frame ids not increasing: %+v", evs)
		}
	}
	if n := len(evs); n == 0 || evs[n-1].Event != "done" {
		t.Fatalf("frames: %+v", evs)
	}
}

// TestClusterFollow: node B follows a run streaming on node A (joining midway): every frame
// reaches B once, in order, those before it joined through the store, the rest in messages
// (a frame too big for a message through the store too), and the end wakes B.
func TestClusterFollow(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 7000)
	deltas := []string{"one ", "two ", "three ", big, "four ", "five ", "six ", "seven ", "eight ", "nine ", "ten"}
	m := newTestModel(30*time.Millisecond, deltas...)
	st, a, na, nb := twoNodes(t, m, nil)
	ctx := context.Background()
	x, run, err := na.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
		Input: map[string]any{"message": "stream"}, Source: "api", TimeoutMS: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond) // a few frames out before B follows
	feed := nb.Follow(x.ID)
	defer feed.Close()
	status := feed.Status()
	var got []domain.Event
	sent := 0
	deliver := func(evs []domain.Event) bool {
		for _, ev := range evs {
			if ev.Seq <= sent {
				continue
			}
			got, sent = append(got, ev), ev.Seq
			if ev.Event == "done" || ev.Event == "error" {
				return true
			}
		}
		return false
	}
	stored, _ := st.EventList(ctx, x.ID, 0)
	ended := deliver(stored)
	deadline := time.After(10 * time.Second)
	statusSeen := false
	for !ended {
		ch := feed.Changed()
		if feed.Status() != status {
			statusSeen = true
		}
		if frames, upTo, ready := feed.Frames(sent); ready {
			if upTo > sent {
				evs, _ := st.EventList(ctx, x.ID, sent)
				if ended = deliver(evs); ended {
					break
				}
			}
			if ended = deliver(frames); ended {
				break
			}
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("B did not see the run end; got %d frames", len(got))
		}
	}
	<-run.Done()
	all, _ := st.EventList(ctx, x.ID, 0)
	if len(got) != len(all) {
		t.Fatalf("B got %d frames, the log has %d", len(got), len(all))
	}
	var text strings.Builder
	for i, ev := range got {
		if ev.Seq != all[i].Seq || ev.Event != all[i].Event || string(ev.Data) != string(all[i].Data) {
			t.Fatalf("frame %d: got %d %s, stored %d %s", i, ev.Seq, ev.Event, all[i].Seq, all[i].Event)
		}
		if ev.Event == "content" {
			var d struct{ Content string }
			_ = json.Unmarshal(ev.Data, &d)
			text.WriteString(d.Content)
		}
	}
	if text.String() != strings.Join(deltas, "") {
		t.Fatalf("content %q", text.String())
	}
	// The status change reaches B too (it may come before or after the terminal frame).
	wait := time.After(5 * time.Second)
	for !statusSeen {
		ch := feed.Changed() // taken before the look, so a message between them is not missed
		if statusSeen = feed.Status() != status; statusSeen {
			break
		}
		select {
		case <-ch:
		case <-wait:
			t.Fatal("no status change reached B")
		}
	}
}

// TestClusterRescue: the leader fails the run of a node that died after its model call, and a
// follower on another node is woken by it.
func TestClusterRescue(t *testing.T) {
	t.Parallel()
	st, a, na, nb := twoNodes(t, nil, nil)
	ctx := context.Background()
	dead := ownedRun(t, st, a, "dead-node", 200*time.Millisecond, true, "")
	follower := na
	if lead, _ := na.elect.lock.hold(ctx); lead {
		follower = nb
	}
	feed := follower.Follow(dead.ID)
	defer feed.Close()
	status := feed.Status()
	deadline := time.After(10 * time.Second)
	for {
		ch := feed.Changed() // taken before the look, so a message between them is not missed
		if feed.Status() != status {
			break
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("the follower was not told of the rescue")
		}
	}
	x, _ := st.ExecutionGet(ctx, a.WorkspaceID, dead.ID)
	if x.Status != domain.StatusFailed {
		t.Fatalf("rescued run: %+v", x)
	}
	if _, code := terminalFrame(t, st, dead.ID); code != CodeInterrupted {
		t.Fatalf("code %q", code)
	}
}

// TestClusterLeaderFailover: when the leader stops, the other node takes the lead and rescues
// the runs of a node that died.
func TestClusterLeaderFailover(t *testing.T) {
	t.Parallel()
	st, a, na, nb := twoNodes(t, nil, nil)
	ctx := context.Background()
	leader, other := na, nb
	if lead, _ := na.elect.lock.hold(ctx); !lead {
		leader, other = nb, na
	}
	stop(leader)
	dead := ownedRun(t, st, a, "dead-node", 50*time.Millisecond, true, "")
	// The other node's leader loop takes the lock within a rescue interval and rescues it.
	x := waitStatus(t, st, a.WorkspaceID, dead.ID, domain.StatusFailed)
	if x.Error == nil || !strings.Contains(*x.Error, other.node) {
		t.Fatalf("rescued by %v, want %s", x.Error, other.node)
	}
}
