package auth

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

// TestHashGate: hashes run at most the gate's slots at once, a bounded number wait (each for
// a bounded time), and the rest are refused at once with ErrBusy.
func TestHashGate(t *testing.T) {
	if got, want := cap(hashing.slots), max(1, runtime.GOMAXPROCS(0)/2); got != want {
		t.Fatalf("%d hashing slots, want %d (half the cores)", got, want)
	}
	ctx := context.Background()
	g := newHashGate(1, 1, 100*time.Millisecond)
	release, err := g.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := g.acquire(ctx) // queues, then gives up at maxWait
		waited <- err
	}()
	for g.waiting.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	if _, err := g.acquire(ctx); !errors.Is(err, ErrBusy) {
		t.Fatalf("with the queue full: %v, want ErrBusy at once", err)
	}
	if err := <-waited; !errors.Is(err, ErrBusy) {
		t.Fatalf("after waiting too long: %v, want ErrBusy", err)
	}
	release()
	r2, err := g.acquire(ctx)
	if err != nil {
		t.Fatalf("a free slot: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.acquire(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	r2()
}
