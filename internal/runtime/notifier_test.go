package runtime

import (
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"
)

// testCluster is a cluster that heard another node at peerSeen and sends nothing: its
// messages stay queued for the test to read.
func testCluster(peerSeen time.Time) *cluster {
	return &cluster{e: &Engine{heartbeat: time.Second}, interest: map[string]map[string]time.Time{}, recent: map[string]time.Time{},
		feeds: map[string][]*Feed{}, kick: make(chan struct{}, 1), peerSeen: peerSeen}
}

// sent returns the kinds of the messages c queued.
func (c *cluster) sent(t *testing.T) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var kinds []string
	for _, raw := range c.queue {
		var m message
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, m.K)
	}
	return kinds
}

// TestNotifier: a status change wakes this node's watchers and, in a cluster, marks the
// run for its followers elsewhere; a queued run wakes a worker of this node when one is
// idle or no other node is there to take it, and is announced to the others otherwise.
func TestNotifier(t *testing.T) {
	t.Parallel()
	newTest := func(idle int) (*notifier, *atomic.Int32) {
		var woken atomic.Int32
		n := newNotifier(notifierConfig{Hub: newHub(), Node: "here", Idle: func() int { return idle },
			Wake: func() { woken.Add(1) }})
		return n, &woken
	}
	t.Run("changed wakes watchers", func(t *testing.T) {
		n, _ := newTest(0)
		ch, unwatch := n.cfg.Hub.watch("x1")
		defer unwatch()
		n.changed("x1")
		select {
		case <-ch:
		default:
			t.Fatal("a watcher of the run was not woken")
		}
	})
	t.Run("changed in a cluster", func(t *testing.T) {
		n, _ := newTest(0)
		cl := testCluster(time.Now())
		n.join(cl)
		if n.cfg.Hub.cl != cl {
			t.Fatal("the hub's frames do not reach the cluster")
		}
		n.changed("x1")
		cl.mu.Lock()
		_, marked := cl.recent["x1"]
		cl.mu.Unlock()
		if !marked {
			t.Fatal("the status change was not recorded for the other nodes")
		}
	})
	for _, c := range []struct {
		name  string
		idle  int
		cl    *cluster
		woken int32
		sent  []string
	}{
		{name: "single node", idle: 0, woken: 1},
		{name: "idle worker here", idle: 2, cl: testCluster(time.Now()), woken: 1},
		{name: "no other node heard", idle: 0, cl: testCluster(time.Now().Add(-time.Hour)), woken: 1},
		{name: "busy here, others heard", idle: 0, cl: testCluster(time.Now()), woken: 0, sent: []string{msgQueued}},
	} {
		t.Run("queued/"+c.name, func(t *testing.T) {
			n, woken := newTest(c.idle)
			if c.cl != nil {
				n.join(c.cl)
			}
			n.queued()
			if woken.Load() != c.woken {
				t.Fatalf("woke %d workers here, want %d", woken.Load(), c.woken)
			}
			if c.cl != nil {
				if got := c.cl.sent(t); len(got) != len(c.sent) || (len(got) > 0 && got[0] != c.sent[0]) {
					t.Fatalf("sent %v, want %v", got, c.sent)
				}
			}
		})
	}
	t.Run("send on a single node", func(t *testing.T) {
		n, _ := newTest(0)
		n.send(message{K: msgWorkspaceGone, X: "ws"}) // no cluster: nothing to send, no panic
		cl := testCluster(time.Now())
		n.join(cl)
		n.send(message{K: msgWorkspaceGone, X: "ws"})
		if got := cl.sent(t); len(got) != 1 || got[0] != msgWorkspaceGone {
			t.Fatalf("sent %v, want one workspace-gone message", got)
		}
	})
}
