package runtime

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/agentplane/agentplane/internal/domain"
)

// rescuerConfig is what a rescuer needs.
type rescuerConfig struct {
	Store Store
	// Node is this node's id, named in the error of the runs it fails.
	Node   string
	Logger *slog.Logger
	// Rescued is told of each run rescued, once its transaction committed: queued again
	// (requeued) or failed.
	Rescued func(ctx context.Context, x *domain.Execution, requeued bool)
}

// rescuer takes over the runs of stopped nodes (their lease expired); the elected leader
// runs it (see elector).
type rescuer struct{ cfg rescuerConfig }

func newRescuer(cfg rescuerConfig) *rescuer { return &rescuer{cfg: cfg} }

// rescueBatch bounds the rows one rescue transaction takes.
const rescueBatch = 100

// rescue takes over the runs whose lease expired (their node stopped): a run whose pass
// never reached a model call goes back to the queue, one that had is failed as interrupted
// with its terminal frame above every id its node may have sent, and its chat session
// released, in the transaction that took it. It returns how many it rescued.
func (r *rescuer) rescue(ctx context.Context) (int, error) {
	total := 0
	for {
		type rescued struct {
			x        *domain.Execution
			requeued bool
		}
		var done []rescued
		err := r.cfg.Store.InTx(ctx, func(tx Store) error {
			done = done[:0]
			xs, err := tx.ExecutionsExpired(ctx, rescueBatch)
			if err != nil {
				return err
			}
			for _, x := range xs {
				requeued := false
				if !x.ModelCalled && x.ParentID == nil {
					if requeued, err = tx.ExecutionRequeue(ctx, x.WorkspaceID, x.ID, nil, nil); err != nil {
						return err
					}
				}
				if !requeued {
					if err := r.fail(ctx, tx, x); err != nil {
						return err
					}
				}
				done = append(done, rescued{x: x, requeued: requeued})
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		for _, d := range done {
			owner := "(unknown)"
			if d.x.OwnerNode != nil {
				owner = *d.x.OwnerNode
			}
			r.cfg.Logger.Warn("rescued an execution whose node stopped", "execution_id", d.x.ID, "owner", owner, "requeued", d.requeued)
			r.cfg.Rescued(ctx, d.x, d.requeued)
		}
		total += len(done)
		if len(done) < rescueBatch {
			return total, nil
		}
	}
}

// fail fails a rescued run inside the rescue's transaction.
func (r *rescuer) fail(ctx context.Context, tx Store, x *domain.Execution) error {
	owner := "a server that is gone"
	if x.OwnerNode != nil {
		owner = "server " + *x.OwnerNode
	}
	msg := fmt.Sprintf("the server running this execution (%s) stopped before it finished; it was marked failed by server %s", owner, r.cfg.Node)
	now := domain.Now()
	dur := now.Sub(x.CreatedAt.Time).Milliseconds()
	last, err := tx.EventLastSeq(ctx, x.ID)
	if err != nil {
		return err
	}
	seq := max(last, x.SeqReserved) + 1
	attempt := x.Attempt
	patch := domain.ExecutionPatch{Move: domain.MoveFail, Error: &msg, CompletedAt: &now, DurationMS: &dur, ClearState: true, From: domain.StatusRunning,
		SeqUsed: &seq, Attempt: &attempt}
	if _, err := tx.ExecutionTransition(ctx, x.WorkspaceID, x.ID, domain.MoveFail.Status(), patch); err != nil {
		return err
	}
	if err := tx.EventAppend(ctx, x.ID, []domain.Event{{Seq: seq, Event: "error", Data: errorFrame(msg, CodeInterrupted)}}); err != nil {
		return err
	}
	if err := tx.TraceFinish(ctx, x.WorkspaceID, x.TraceID, domain.StatusFailed, x.TokenUsage, x.Cost, now, dur); err != nil {
		return err
	}
	if x.ParentID == nil {
		// The session's lock is the run's lease: it ends with it.
		return tx.ChatSessionUnlockFor(ctx, x.WorkspaceID, x.ID)
	}
	return nil
}
