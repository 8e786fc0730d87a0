package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// TestExecutor: a pass is registered before start returns and runs the pipeline in a
// context under the executor's, its result is set before done is closed, and once it
// stops its handle leaves the registry with its context cancelled; stopping the node
// cancels the passes still running with the node's cause, and wait returns when they end.
func TestExecutor(t *testing.T) {
	t.Parallel()
	t.Run("one pass", func(t *testing.T) {
		runs := newRegistry()
		release := make(chan struct{})
		ex := newExecutor(executorConfig{Context: context.Background(), Runs: runs,
			Pipeline: func(ctx context.Context, h *handle, x *domain.Execution, _ *domain.Agent, _ *prepared) *domain.Execution {
				if ctx != h.ctx {
					t.Error("the pipeline does not run in its handle's context")
				}
				<-release
				return &domain.Execution{ID: x.ID, Status: domain.StatusCompleted}
			}})
		w := ex.start(&domain.Execution{ID: "x1", Attempt: 2}, nil, nil)
		h := runs.get("x1")
		if h == nil || h != w.h || h.attempt != 2 {
			t.Fatalf("registered %+v, want the waiter's handle of attempt 2", h)
		}
		select {
		case <-w.Done():
			t.Fatal("done before the pipeline returned")
		case <-time.After(20 * time.Millisecond):
		}
		close(release)
		<-w.Done()
		if w.Result() == nil || w.Result().Status != domain.StatusCompleted {
			t.Fatalf("result %+v, want the pipeline's", w.Result())
		}
		if runs.get("x1") != nil || h.ctx.Err() == nil {
			t.Fatal("a stopped pass stays registered, or its context live")
		}
		ex.wait()
	})
	t.Run("node stops", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		stopped := errors.New("node stops")
		runs := newRegistry()
		ex := newExecutor(executorConfig{Context: ctx, Runs: runs,
			Pipeline: func(ctx context.Context, _ *handle, _ *domain.Execution, _ *domain.Agent, _ *prepared) *domain.Execution {
				<-ctx.Done()
				if !errors.Is(context.Cause(ctx), stopped) {
					t.Errorf("cause %v, want the node's", context.Cause(ctx))
				}
				return nil
			}})
		ws := []*Waiter{ex.start(&domain.Execution{ID: "a"}, nil, nil), ex.start(&domain.Execution{ID: "b"}, nil, nil)}
		if runs.count() != 2 {
			t.Fatalf("%d registered, want 2", runs.count())
		}
		cancel(stopped)
		ex.wait()
		for _, w := range ws {
			select {
			case <-w.Done():
			default:
				t.Fatal("wait returned before a pass was done")
			}
			if w.Result() != nil {
				t.Fatal("a pass whose outcome was not recorded has a result")
			}
		}
		if runs.count() != 0 {
			t.Fatalf("%d still registered", runs.count())
		}
	})
	t.Run("inline pass", func(t *testing.T) {
		runs := newRegistry()
		ex := newExecutor(executorConfig{Context: context.Background(), Runs: runs,
			Pipeline: func(ctx context.Context, _ *handle, x *domain.Execution, a *domain.Agent, _ *prepared) *domain.Execution {
				if depthFrom(ctx) != 3 || a == nil || runs.get(x.ID) == nil {
					t.Errorf("depth %d, agent %v: the inline pass lost its caller's context, agent or registration", depthFrom(ctx), a)
				}
				return x
			}})
		x := &domain.Execution{ID: "child"}
		h := ex.register(withDepth(context.Background(), 3), x)
		ex.run(x, &domain.Agent{ID: "a"}, h, nil)
		if h.result != x || runs.get("child") != nil {
			t.Fatal("an inline pass did not record its result or stayed registered")
		}
	})
}
