package runtime

import (
	"context"
	"sync"

	"github.com/agentplane/agentplane/internal/domain"
)

// executorConfig is what an executor needs.
type executorConfig struct {
	// Context is the parent of every pass's context: cancelled (with the cause) when the
	// node stops.
	Context context.Context
	// Runs are the runs in progress in this process: each pass is registered there from
	// the moment its row is this node's until it stops.
	Runs *registry
	// Pipeline runs one pass over x (agent and pre may be nil) and returns the execution as
	// recorded, nil when its outcome could not be recorded.
	Pipeline func(ctx context.Context, h *handle, x *domain.Execution, agent *domain.Agent, pre *prepared) *domain.Execution
}

// executor runs the passes of executions this node owns (claimed from the queue, created
// running, resumed after an approval, or a sub-agent's inline): it registers each pass's
// handle, runs the pipeline in its context, and closes the handle when the pass stops.
type executor struct {
	cfg executorConfig
	// wg tracks the passes started in the background and the producer's workers, for Stop.
	wg sync.WaitGroup
}

func newExecutor(cfg executorConfig) *executor { return &executor{cfg: cfg} }

// register makes the handle of a pass over x, which this node owns, with a context under
// parent; the caller is claiming (see registry).
func (ex *executor) register(parent context.Context, x *domain.Execution) *handle {
	ctx, cancel := context.WithCancelCause(parent)
	h := &handle{ctx: ctx, cancel: cancel, done: make(chan struct{}), attempt: x.Attempt}
	ex.cfg.Runs.add(x.ID, h)
	return h
}

// start registers a pass over x and runs it in the background, tracked for wait. agent and
// pre may be nil. The caller is claiming (see registry).
func (ex *executor) start(x *domain.Execution, agent *domain.Agent, pre *prepared) *Waiter {
	h := ex.register(ex.cfg.Context, x)
	ex.wg.Go(func() { ex.run(x, agent, h, pre) })
	return &Waiter{h: h}
}

// run runs the registered pass h over x in this goroutine, then releases its handle: its
// context is cancelled, it leaves the registry, and done is closed after result is set.
func (ex *executor) run(x *domain.Execution, agent *domain.Agent, h *handle, pre *prepared) {
	defer func() {
		h.cancel(nil)
		ex.cfg.Runs.remove(x.ID, h)
		close(h.done)
	}()
	h.result = ex.cfg.Pipeline(h.ctx, h, x, agent, pre)
}

// wait returns once every pass started in the background (and every worker sharing wg)
// has stopped.
func (ex *executor) wait() { ex.wg.Wait() }
