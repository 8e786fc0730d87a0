// Package background holds what the background services share: their Start/Stop lifecycle
// (Task) and the loop of lease renewers and periodic passes (Every).
package background

import (
	"context"
	"sync"
	"time"
)

// Every calls f once per interval, the first time one interval after the call, until ctx
// ends or f returns false; then it returns.
func Every(ctx context.Context, interval time.Duration, f func() bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !f() {
			return
		}
	}
}

// Task is the goroutine a background service runs between its Start and Stop, the lifecycle
// they share. The zero Task is ready to start.
type Task struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// Start runs run in a goroutine under a context that keeps ctx's values but not its
// cancellation: only Stop ends it. A second Start while it runs does nothing.
func (t *Task) Start(ctx context.Context, run func(ctx context.Context)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	t.cancel, t.done = cancel, done
	go func() {
		defer close(done)
		run(ctx)
	}()
}

// Stop cancels run's context and waits for it to return. Safe to call more than once, and
// without Start; a Start after it runs the task again.
func (t *Task) Stop() {
	t.mu.Lock()
	cancel, done := t.cancel, t.done
	t.cancel = nil
	t.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}
