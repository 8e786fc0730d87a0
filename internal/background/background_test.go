package background

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestEvery runs Every with an interval of one second in a bubble of fake time for 10.5
// seconds, cancelling its context after cancelAfter (when not zero).
func TestEvery(t *testing.T) {
	t.Parallel()
	always := func(int32) bool { return true }
	for name, tc := range map[string]struct {
		f           func(call int32) bool // answers each call, given its number (from 1)
		cancelAfter time.Duration
		wantCalls   int32
		wantStopped bool
	}{
		"CallsOncePerIntervalNotAtOnce": {f: always, wantCalls: 10},
		"StopsWhenFReturnsFalse":        {f: func(call int32) bool { return call < 2 }, wantCalls: 2, wantStopped: true},
		"StopsWhenContextEnds":          {f: always, cancelAfter: 3500 * time.Millisecond, wantCalls: 3, wantStopped: true},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var calls atomic.Int32
				var stopped atomic.Bool
				go func() {
					Every(ctx, time.Second, func() bool { return tc.f(calls.Add(1)) })
					stopped.Store(true)
				}()
				if tc.cancelAfter > 0 {
					time.Sleep(tc.cancelAfter)
					cancel()
				}
				time.Sleep(10500*time.Millisecond - tc.cancelAfter)
				synctest.Wait()
				if n := calls.Load(); n != tc.wantCalls {
					t.Errorf("%d calls, want %d", n, tc.wantCalls)
				}
				if stopped.Load() != tc.wantStopped {
					t.Errorf("Every returned: %v, want %v", stopped.Load(), tc.wantStopped)
				}
			})
		})
	}
}

func TestTask(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var task Task
		task.Stop() // without Start: does nothing
		type key struct{}
		parent, cancelParent := context.WithCancel(context.WithValue(t.Context(), key{}, "v"))
		var runs, ended atomic.Int32
		run := func(ctx context.Context) {
			runs.Add(1)
			if ctx.Value(key{}) != "v" {
				t.Error("the task's context lost the values of Start's")
			}
			<-ctx.Done()
			time.Sleep(time.Second) // Stop waits for this
			ended.Add(1)
		}
		task.Start(parent, run)
		task.Start(parent, run) // runs already: does nothing
		cancelParent()          // only Stop ends the task
		synctest.Wait()
		if runs.Load() != 1 || ended.Load() != 0 {
			t.Fatalf("runs %d, ended %d; want one run, not ended", runs.Load(), ended.Load())
		}
		task.Stop()
		if ended.Load() != 1 {
			t.Fatal("Stop returned before the run did")
		}
		task.Stop()

		task.Start(parent, run) // a Start after Stop runs it again
		synctest.Wait()
		task.Stop()
		if runs.Load() != 2 || ended.Load() != 2 {
			t.Fatalf("runs %d, ended %d after a restart; want 2 and 2", runs.Load(), ended.Load())
		}
	})
}
