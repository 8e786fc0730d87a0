package background

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// every runs Every(ctx, time.Second, …) in a goroutine, counting the calls in calls; f
// answers each call, given its number (from 1). The returned channel closes when Every
// returns.
func every(ctx context.Context, calls *atomic.Int32, f func(n int32) bool) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Second, func() bool { return f(calls.Add(1)) })
	}()
	return done
}

func returned(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

func TestEvery(t *testing.T) {
	t.Parallel()
	always := func(int32) bool { return true }

	t.Run("CallsOncePerInterval", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			var calls atomic.Int32
			done := every(ctx, &calls, always)
			time.Sleep(500 * time.Millisecond)
			synctest.Wait()
			if n := calls.Load(); n != 0 {
				t.Fatalf("%d calls before the first interval", n)
			}
			time.Sleep(3 * time.Second)
			synctest.Wait()
			if n := calls.Load(); n != 3 {
				t.Fatalf("%d calls after 3.5 intervals, want 3", n)
			}
			cancel()
			<-done
		})
	})

	t.Run("StopsWhenFReturnsFalse", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var calls atomic.Int32
			done := every(t.Context(), &calls, func(n int32) bool { return n < 2 })
			time.Sleep(10 * time.Second)
			synctest.Wait()
			if !returned(done) {
				t.Fatal("Every still runs after f returned false")
			}
			if n := calls.Load(); n != 2 {
				t.Fatalf("%d calls, want 2", n)
			}
		})
	})

	t.Run("StopsWhenContextEnds", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			var calls atomic.Int32
			done := every(ctx, &calls, always)
			time.Sleep(1500 * time.Millisecond)
			cancel()
			synctest.Wait()
			if !returned(done) {
				t.Fatal("Every still runs after its context ended")
			}
			time.Sleep(5 * time.Second)
			if n := calls.Load(); n != 1 {
				t.Fatalf("%d calls, want 1", n)
			}
		})
	})
}

func TestTask(t *testing.T) {
	t.Parallel()

	t.Run("StopWithoutStart", func(t *testing.T) {
		var task Task
		task.Stop()
		task.Stop()
	})

	t.Run("OneRunUntilStop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
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
			var task Task
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
	})
}
