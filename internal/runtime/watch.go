package runtime

import (
	"context"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// followPoll is how often Await and Stream look again at an execution that is not running
// in this process (queued, awaiting approval, or on another node) when no change wakes them
// first. Changes wake them (this node's, and other nodes' over LISTEN/NOTIFY): this is only
// the net under a message lost with a connection.
const followPoll = 5 * time.Second

// watch is the one way to wait for an execution to change wherever it runs: this node's
// hub (a run starting or ending here, a status this node changed) and, once follow is
// called, the messages of the node running it. Cancel, Await and Stream each loop over
// arm, look, wait.
type watch struct {
	e       *Engine
	id      string
	feed    *Feed // nil until follow
	changed <-chan struct{}
	remote  <-chan struct{}
	unwatch func()
}

func (e *Engine) newWatch(id string) *watch { return &watch{e: e, id: id} }

// arm watches before the caller looks, so a change between the look and the wait is not
// missed.
func (w *watch) arm() {
	w.disarm()
	w.changed, w.unwatch = w.e.hub.watch(w.id)
	w.remote = w.feed.Changed()
}

// disarm stops watching this node's hub until the next arm.
func (w *watch) disarm() {
	if w.unwatch != nil {
		w.unwatch()
		w.unwatch = nil
	}
}

// follow starts hearing the execution's frames and status changes from other nodes (once)
// and returns the feed; on a single node the feed never changes.
func (w *watch) follow() *Feed {
	if w.feed == nil {
		w.feed = w.e.Follow(w.id)
		w.remote = w.feed.Changed()
	}
	return w.feed
}

// wait blocks until a change here or on another node, d passing, or ctx ending, and
// disarms; it returns ctx's error.
func (w *watch) wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.changed:
	case <-w.remote:
	case <-t.C:
	case <-ctx.Done():
	}
	w.disarm()
	return ctx.Err()
}

// close stops watching and following.
func (w *watch) close() {
	w.disarm()
	w.feed.Close()
}

// Await waits until an execution stops (ends, or waits for approval) wherever it runs and
// returns it; nil, nil when ctx ends first. Unlike Stream it has no Closing: like the
// request that started the run, it outlasts the closing of streams at shutdown (the run
// ends then too, and its outcome is the answer).
func (e *Engine) Await(ctx context.Context, ws, id string) (*domain.Execution, error) {
	w := e.newWatch(id)
	defer w.close()
	for {
		w.arm()

		// Running here: its end is known without the store.
		if run, ok := e.Running(id); ok {
			w.disarm()
			select {
			case <-run.Done():
				continue
			case <-ctx.Done():
				return nil, nil
			}
		}

		// Elsewhere, or not running: the store says, the cluster wakes.
		w.follow()
		x, err := e.st.ExecutionGet(ctx, ws, id)
		if err != nil || domain.IsTerminal(x.Status) || x.Status == domain.StatusAwaitingApproval {
			w.disarm()
			if ctx.Err() != nil {
				return nil, nil
			}
			return x, err
		}
		if w.wait(ctx, followPoll) != nil {
			return nil, nil
		}
	}
}
