package eval

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// finalStatuses are the statuses a rule's filter may name: those an execution ends in.
var finalStatuses = []string{domain.StatusCompleted, domain.StatusFailed, domain.StatusCancelled, domain.StatusRejected}

// PrepareRule checks an evaluation rule as it would be stored (a new one, or a stored one
// with a patch merged in): its evaluator and agent exist in the workspace, sampling is a
// share, and the filter names final statuses and non-empty sources. A rule with no status
// filter gets ["completed"]: failed and cancelled runs have no output to judge, unless the
// rule asks for them.
func PrepareRule(ctx context.Context, st *store.Store, r *domain.EvaluationRule) error {
	if _, err := st.EvaluatorGet(ctx, r.WorkspaceID, r.EvaluatorID); store.IsNotFound(err) {
		return &store.ReferenceError{Field: "evaluator_id", Resource: "evaluator", ID: r.EvaluatorID}
	} else if err != nil {
		return err
	}
	if r.AgentID != nil {
		if err := st.CheckRefs(ctx, r.WorkspaceID, domain.KindAgent, "agent_id", *r.AgentID); err != nil {
			return err
		}
	}
	if math.IsNaN(r.Sampling) || r.Sampling < 0 || r.Sampling > 1 {
		return &store.ValidationError{Field: "sampling", Message: fmt.Sprintf("must be from 0 to 1 (the share of executions scored), got %g", r.Sampling)}
	}
	if len(r.Filter.Status) == 0 {
		r.Filter.Status = []string{domain.StatusCompleted}
	}
	for i, s := range r.Filter.Status {
		if !slices.Contains(finalStatuses, s) {
			return &store.ValidationError{Field: fmt.Sprintf("filter.status[%d]", i),
				Message: fmt.Sprintf("must be a status an execution ends in (%s), got %q", strings.Join(finalStatuses, ", "), s)}
		}
	}
	for i, s := range r.Filter.Source {
		if strings.TrimSpace(s) == "" {
			return &store.ValidationError{Field: fmt.Sprintf("filter.source[%d]", i), Message: "must not be empty"}
		}
	}
	return nil
}

// Matches reports whether a finished execution is one the rule scores, sampling aside: of
// the rule's agent (or any), and passing every condition of its filter. Metadata values are
// compared as JSON values.
func Matches(r *domain.EvaluationRule, x *domain.Execution) bool {
	if r.AgentID != nil && *r.AgentID != x.AgentID {
		return false
	}
	f := r.Filter
	if len(f.Status) > 0 && !slices.Contains(f.Status, x.Status) {
		return false
	}
	if len(f.Source) > 0 && !slices.Contains(f.Source, x.Source) {
		return false
	}
	for k, want := range f.Metadata {
		got, ok := x.Metadata[k]
		if !ok || !reflect.DeepEqual(got, want) {
			return false
		}
	}
	return true
}

// Sampled reports whether the execution falls in the rule's sample: the first 8 bytes of
// SHA-256 over the two ids, read as a share of 2^64, are below the rate. Every node, and
// every retry of the transaction that ends the run, decides the same.
func Sampled(ruleID, execID string, rate float64) bool {
	if rate >= 1 {
		return true
	}
	sum := sha256.Sum256([]byte(ruleID + "/" + execID))
	return float64(binary.BigEndian.Uint64(sum[:8]))/math.Exp2(64) < rate
}
