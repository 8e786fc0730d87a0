package runtime

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// producerConfig is what a producer needs.
type producerConfig struct {
	// Workers is the number of runs taken from the queue at once.
	Workers int
	// Poll is how often an idle producer looks at the queue when nothing woke it.
	Poll time.Duration
	// Claim takes the next queued run, nil when there is none; Run runs what Claim took.
	Claim func() (*claimed, error)
	Run   func(*claimed)
	// Logger reports failed claims.
	Logger *slog.Logger
}

// claimed is a run Claim took: the row, and the handle registered for its pass.
type claimed struct {
	x *domain.Execution
	h *handle
}

// producer is the worker pool of the durable queue: each worker claims a queued run and
// runs it, one at a time, waiting when the queue is empty until poked (a run queued here or
// announced by another node) or the poll interval passes; drain stops the claims.
type producer struct {
	cfg      producerConfig
	wake     chan struct{}
	idle     atomic.Int32  // workers waiting for work
	draining chan struct{} // closed by drain: no more claims
	drained  sync.Once
}

func newProducer(cfg producerConfig) *producer {
	return &producer{cfg: cfg, wake: make(chan struct{}, cfg.Workers), draining: make(chan struct{})}
}

// start runs the workers and the poll loop on wg, until drain.
func (p *producer) start(wg *sync.WaitGroup) {
	for range p.cfg.Workers {
		wg.Go(p.worker)
	}
	wg.Go(p.pollLoop)
	p.poke()
}

// drain stops the claims; runs in progress go on. Calling it again does nothing.
func (p *producer) drain() { p.drained.Do(func() { close(p.draining) }) }

// poke wakes one idle worker, if one is waiting.
func (p *producer) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// idleWorkers is how many workers wait for work.
func (p *producer) idleWorkers() int { return int(p.idle.Load()) }

// pollLoop wakes one idle worker every Poll (one claim per node, not per worker).
func (p *producer) pollLoop() {
	t := time.NewTicker(p.cfg.Poll)
	defer t.Stop()
	for {
		select {
		case <-p.draining:
			return
		case <-t.C:
			if p.idle.Load() > 0 {
				p.poke()
			}
		}
	}
}

// worker claims queued runs and runs them, one at a time, until the drain.
func (p *producer) worker() {
	for {
		select {
		case <-p.draining:
			return
		default:
		}
		c, err := p.cfg.Claim()
		if err != nil {
			p.cfg.Logger.Error("claim execution", "error", err)
			select {
			case <-p.draining:
			case <-time.After(p.cfg.Poll):
			}
			continue
		}
		if c == nil {
			p.idle.Add(1)
			select {
			case <-p.draining:
			case <-p.wake:
			}
			p.idle.Add(-1)
			continue
		}
		p.poke() // there may be more
		p.cfg.Run(c)
	}
}
