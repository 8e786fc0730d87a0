// Package claimloop runs work that any node may claim from a table under a lease (the
// webhooks' outbox, online evaluation's judgments): a loop that claims due items as slots
// free up, attempts each in its own goroutine, and sleeps until the next poll or a nudge.
package claimloop

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// wakeDelay is how long a nudged loop waits before it looks: the transaction that wrote
// the rows commits after the hook that nudged it returns.
const wakeDelay = 20 * time.Millisecond

// Config is what a Loop needs.
type Config[T any] struct {
	// Slots is how many attempts run at once (at least 1).
	Slots int
	// Poll is how often an idle loop looks for due items.
	Poll time.Duration
	// Claim takes at most limit due items for this node, under their lease.
	Claim func(ctx context.Context, limit int) ([]T, error)
	// Attempt works one claimed item and records its outcome.
	Attempt func(ctx context.Context, item T)
	// BeforeLook, when set, runs before each look of the loop (the webhooks' pruning).
	BeforeLook func()
	// Logger hears a failed claim, as "claim due <What>".
	Logger *slog.Logger
	What   string
}

// Loop claims and attempts due items until Stop.
type Loop[T any] struct {
	cfg  Config[T]
	wake chan struct{}

	mu       sync.Mutex
	started  bool
	stopped  bool
	stopLoop chan struct{} // closed by Stop: the loop claims nothing more
	loopDone chan struct{}
	ctx      context.Context // attempts run under it; cancelled when Stop's grace ends
	cancel   context.CancelFunc
	inflight sync.WaitGroup
	slots    chan struct{}
}

// New returns a Loop; Start runs it.
func New[T any](cfg Config[T]) *Loop[T] {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Loop[T]{cfg: cfg, wake: make(chan struct{}, 1), stopLoop: make(chan struct{}), loopDone: make(chan struct{}),
		slots: make(chan struct{}, max(cfg.Slots, 1))}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l
}

// Context is the context attempts run under: cancelled when Stop's grace ends.
func (l *Loop[T]) Context() context.Context { return l.ctx }

// Nudge tells the loop that items may be due: it looks shortly after.
func (l *Loop[T]) Nudge() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Start runs the loop until Stop. Calling it again, or after Stop, does nothing.
func (l *Loop[T]) Start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.stopped {
		return
	}
	l.started = true
	go l.loop()
}

// Stop ends the loop, lets attempts in progress finish until ctx ends, then cancels the rest
// (their leases expire and any node takes them again). Safe to call twice.
func (l *Loop[T]) Stop(ctx context.Context) {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return
	}
	l.stopped = true
	started := l.started
	close(l.stopLoop)
	l.mu.Unlock()
	if started {
		<-l.loopDone
	}
	idle := make(chan struct{})
	go func() { l.inflight.Wait(); close(idle) }()
	select {
	case <-idle:
	case <-ctx.Done():
		l.cancel()
		<-idle
	}
	l.cancel()
}

func (l *Loop[T]) loop() {
	defer close(l.loopDone)
	timer := time.NewTimer(0)
	defer timer.Stop()
	due := time.Now() // when the timer fires
	reset := func(after time.Duration) {
		timer.Reset(after)
		due = time.Now().Add(after)
	}
	for {
		select {
		case <-l.stopLoop:
			return
		case <-l.wake:
			// A look already due sooner stays: a stream of nudges must not keep delaying it.
			if time.Until(due) > wakeDelay {
				reset(wakeDelay)
			}
			continue
		case <-timer.C:
		}
		if l.cfg.BeforeLook != nil {
			l.cfg.BeforeLook()
		}
		n, err := l.claimAndStart()
		if err != nil {
			l.cfg.Logger.Error("claim due "+l.cfg.What, "error", err)
		}
		next := l.cfg.Poll
		if n > 0 {
			// There may be more due: wait for a free slot before claiming more, so claimed
			// items never wait in memory, then look again at once.
			select {
			case l.slots <- struct{}{}:
				<-l.slots
			case <-l.stopLoop:
				return
			}
			next = 0
		}
		reset(next)
	}
}

// claimAndStart claims as many due items as there are free slots and starts their
// attempts; it returns how many it started.
func (l *Loop[T]) claimAndStart() (int, error) {
	free := cap(l.slots) - len(l.slots)
	if free <= 0 {
		return 0, nil
	}
	items, err := l.cfg.Claim(l.ctx, free)
	if err != nil {
		return 0, err
	}
	for _, it := range items {
		l.slots <- struct{}{}
		l.inflight.Add(1)
		go func() {
			defer l.inflight.Done()
			defer func() { <-l.slots }()
			l.cfg.Attempt(l.ctx, it)
		}()
	}
	return len(items), nil
}

// RunDue claims every item due now, in batches of batch, attempts them under ctx and waits
// for the outcomes; it returns how many attempts it made. Tests drive the work with it
// instead of the loop.
func (l *Loop[T]) RunDue(ctx context.Context, batch int) (int, error) {
	total := 0
	for {
		items, err := l.cfg.Claim(ctx, batch)
		if err != nil {
			return total, err
		}
		var wg sync.WaitGroup
		for _, it := range items {
			wg.Go(func() { l.cfg.Attempt(ctx, it) })
		}
		wg.Wait()
		total += len(items)
		if len(items) < batch {
			return total, nil
		}
	}
}
