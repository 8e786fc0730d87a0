package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// cancelWait bounds how long Cancel waits for the node running an execution to stop it.
const cancelWait = 30 * time.Second

// cancelLook is how often Cancel looks again when nothing woke it (a lease that expires in
// between, a lost message).
const cancelLook = time.Second

// cancelNext is what a Cancel step asks for next.
type cancelNext int

const (
	cancelDone  cancelNext = iota // answer with the step's result
	cancelAgain                   // look again at once (the row moved meanwhile)
	cancelLater                   // wait for a change, then look again
)

// canceller is one Cancel call. asked names the owner and pass asked to stop the run
// ("node/attempt"), once asked; lastAsk is when.
type canceller struct {
	e       *Engine
	ws, id  string
	w       *watch
	asked   string
	lastAsk time.Time
}

// Cancel stops a pending, running or awaiting execution and returns it as recorded
// cancelled: a run in progress anywhere is cancelled through its context (on this node
// directly, on another through a message to it) and the answer waits until the run has
// recorded itself cancelled, so no model call starts after it. A run that ended otherwise
// first is a *store.TransitionError naming how; a cancel decided on an awaiting_approval
// execution that an approve moved first is a *store.ConflictError (one decision wins).
func (e *Engine) Cancel(ctx context.Context, ws, id string) (*domain.Execution, error) {
	c := &canceller{e: e, ws: ws, id: id, w: e.newWatch(id)}
	defer c.w.close()
	deadline := time.Now().Add(cancelWait)
	for {
		c.w.arm()
		x, err := e.st.ExecutionGet(ctx, ws, id)
		if err != nil {
			return nil, err
		}
		out, next, err := c.step(ctx, x)
		switch next {
		case cancelDone:
			return out, err
		case cancelAgain:
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("cancel execution %s: the server running it did not stop it within %s", id, cancelWait)
		}
		if err := c.w.wait(ctx, cancelLook); err != nil {
			return nil, err
		}
	}
}

// step acts on the execution as last read.
func (c *canceller) step(ctx context.Context, x *domain.Execution) (*domain.Execution, cancelNext, error) {
	switch {
	case domain.IsTerminal(x.Status):
		return c.ended(ctx, x)
	case x.Status == domain.StatusPending || x.Status == domain.StatusAwaitingApproval:
		return c.idle(ctx, x)
	case x.Status == domain.StatusRunning:
		return c.running(ctx, x)
	}
	return nil, cancelLater, nil
}

// ended answers for an execution that has ended: cancelled by this call, or otherwise first.
func (c *canceller) ended(ctx context.Context, x *domain.Execution) (*domain.Execution, cancelNext, error) {
	if x.Status == domain.StatusCancelled && c.asked != "" {
		c.e.cancelDescendants(ctx, c.ws, c.id)
		return x, cancelDone, nil
	}
	return nil, cancelDone, &store.TransitionError{ID: c.id, From: x.Status, To: domain.StatusCancelled}
}

// idle closes an execution no run holds (queued, or waiting for approval).
func (c *canceller) idle(ctx context.Context, x *domain.Execution) (*domain.Execution, cancelNext, error) {
	err := c.e.closeDirect(ctx, x, domain.MoveCancel, CodeCancelled, "execution cancelled", "cancelled", "", "", false)
	if err == nil {
		return c.cancelled(ctx)
	}
	if !isTransition(err) {
		return nil, cancelDone, err
	}
	if x.Status != domain.StatusAwaitingApproval {
		return nil, cancelAgain, nil // claimed meanwhile: cancel the run
	}

	// Decided on the waiting run; an approve (or deny) decided first.
	now, err := c.e.st.ExecutionGet(ctx, c.ws, c.id)
	if err != nil {
		return nil, cancelDone, err
	}
	if domain.IsTerminal(now.Status) {
		return nil, cancelDone, &store.TransitionError{ID: c.id, From: now.Status, To: domain.StatusCancelled}
	}
	return nil, cancelDone, &store.ConflictError{Message: fmt.Sprintf("execution %s was approved and is %s again; this cancel was decided on it waiting for approval: cancel again to stop it", c.id, now.Status)}
}

// running stops a run in progress: this node's through its context, a stopped node's by
// closing its row here, a live node's by asking it.
func (c *canceller) running(ctx context.Context, x *domain.Execution) (*domain.Execution, cancelNext, error) {
	e := c.e
	owner := ""
	if x.OwnerNode != nil {
		owner = *x.OwnerNode
	}
	key := fmt.Sprintf("%s/%d", owner, x.Attempt)
	switch {
	case owner == e.node:
		if !e.cancelOwned(c.id) {
			return nil, cancelAgain, nil // its run ended meanwhile: look again
		}
		c.asked = key
	case e.notify.cl == nil || e.leaseExpired(x):
		// Its node stopped: close it here (unless the rescuer does first). On SQLite, one
		// process, another node's run is a dead process's; a live one (two processes on one
		// file, which is not supported) would find its writes fenced.
		err := e.closeDirect(ctx, x, domain.MoveCancel, CodeCancelled, "execution cancelled", "", "", "", e.notify.cl != nil)
		if err == nil {
			return c.cancelled(ctx)
		}
		if !isTransition(err) {
			return nil, cancelDone, err
		}
		return nil, cancelAgain, nil
	default:
		c.w.follow()
		if c.asked != key || time.Since(c.lastAsk) > time.Second {
			// Sent after the interest, so the owner hears who waits before it stops the run.
			e.notify.send(message{K: msgCancel, N: e.node, X: c.id, O: owner})
			c.asked, c.lastAsk = key, time.Now()
		}
	}
	return nil, cancelLater, nil
}

// cancelled answers with the execution this call closed, its descendants cancelled too.
func (c *canceller) cancelled(ctx context.Context) (*domain.Execution, cancelNext, error) {
	c.e.cancelDescendants(ctx, c.ws, c.id)
	x, err := c.e.st.ExecutionGet(context.WithoutCancel(ctx), c.ws, c.id)
	return x, cancelDone, err
}

// cancelOwned cancels this node's run of an execution; it reports false when there is none
// (its run ended, or the row is not this node's).
func (e *Engine) cancelOwned(id string) bool {
	h := e.runs.settled(id)
	if h == nil {
		return false
	}
	h.cancel(errCancelled)
	return true
}

// leaseExpired reports whether x's lease has run out (its node stopped renewing it). The
// database's clock decides: the guarded write in closeDirect checks it again there.
func (e *Engine) leaseExpired(x *domain.Execution) bool {
	return x.LeaseExpiresAt == nil || time.UnixMilli(*x.LeaseExpiresAt).Before(time.Now().Add(-time.Second))
}

// cancelDescendants cancels the unfinished executions under one (children waiting for
// approval are not reached by the parent's context).
func (e *Engine) cancelDescendants(ctx context.Context, ws, id string) {
	tree, err := e.st.ExecutionTree(ctx, ws, id)
	if err != nil {
		return
	}
	var walk func(n *domain.ExecutionNode)
	walk = func(n *domain.ExecutionNode) {
		for _, c := range n.Children {
			if !domain.IsTerminal(c.Status) {
				if _, err := e.Cancel(ctx, ws, c.ID); err != nil && !isTransition(err) {
					e.log.Warn("cancel child execution", "execution_id", c.ID, "error", err)
				}
			}
			walk(c)
		}
	}
	walk(tree)
}
