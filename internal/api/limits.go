package api

import (
	"context"
	"net/http"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// Plan bounds what one workspace may hold and run on the server. A zero field is unlimited.
type Plan struct {
	// MaxAgents is how many agents a workspace may hold.
	MaxAgents int
	// MaxExecutionsPerMonth is how many executions a workspace may start per calendar month (UTC).
	MaxExecutionsPerMonth int
	// MaxConcurrentExecutions is how many executions may be pending, running or awaiting
	// approval at once in a workspace.
	MaxConcurrentExecutions int
}

// liveStatuses are the statuses counted against MaxConcurrentExecutions.
var liveStatuses = []string{domain.StatusPending, domain.StatusRunning, domain.StatusAwaitingApproval}

func planExceeded(format string, args ...any) *Error {
	return errorf(http.StatusPaymentRequired, format, args...)
}

// checkAgentLimit refuses a new agent when the workspace holds MaxAgents already. It runs in
// the transaction that creates the agent, under the workspace's plan lock, so simultaneous
// creations never overshoot.
func (s *Server) checkAgentLimit(ctx context.Context, tx *store.Store, ws string) error {
	limit := s.cfg.Plan.MaxAgents
	if limit <= 0 {
		return nil
	}
	if err := tx.PlanLock(ctx, ws); err != nil {
		return err
	}
	n, err := tx.AgentCount(ctx, ws)
	if err != nil {
		return err
	}
	if n >= limit {
		return planExceeded("plan limit max_agents (%d) reached: the workspace holds %d agents; delete one or raise the limit", limit, n)
	}
	return nil
}

// executionLimited says whether the plan limits executions at all.
func (s *Server) executionLimited() bool {
	return s.cfg.Plan.MaxExecutionsPerMonth > 0 || s.cfg.Plan.MaxConcurrentExecutions > 0
}

// checkExecutionLimits refuses a new execution when the workspace has started
// MaxExecutionsPerMonth this month or has MaxConcurrentExecutions in flight. It runs in the
// transaction that records the execution (runtime.SubmitRequest.BeforeCreate), under the
// workspace's plan lock, so simultaneous requests never overshoot.
func (s *Server) checkExecutionLimits(ctx context.Context, tx *store.Store, ws string) error {
	p := s.cfg.Plan
	if !s.executionLimited() {
		return nil
	}
	if err := tx.PlanLock(ctx, ws); err != nil {
		return err
	}
	if p.MaxExecutionsPerMonth > 0 {
		now := time.Now().UTC()
		month := domain.Time{Time: time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)}
		n, err := tx.ExecutionCount(ctx, ws, month, nil)
		if err != nil {
			return err
		}
		if n >= p.MaxExecutionsPerMonth {
			return planExceeded("plan limit max_executions_per_month (%d) reached: %d executions started since %s",
				p.MaxExecutionsPerMonth, n, month.Format("2006-01-02"))
		}
	}
	if p.MaxConcurrentExecutions > 0 {
		n, err := tx.ExecutionCount(ctx, ws, domain.Time{}, liveStatuses)
		if err != nil {
			return err
		}
		if n >= p.MaxConcurrentExecutions {
			return planExceeded("plan limit max_concurrent_executions (%d) reached: %d executions are pending, running or awaiting approval",
				p.MaxConcurrentExecutions, n)
		}
	}
	return nil
}
