package triggers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/triggers/platform"
	"github.com/agentplane/agentplane/internal/vault"
)

// Reply delivery settings.
const (
	// replyLease is how long one attempt holds a reply before another sender may take it.
	replyLease = time.Minute
	// maxReplyAttempts bounds the attempts of one reply; then it is recorded failed.
	maxReplyAttempts = 5
	// replyTimeout bounds one attempt.
	replyTimeout = 30 * time.Second
)

// Replier sends the replies chat platform runs owe (Slack, Telegram, WhatsApp), each once:
// the reply is recorded with its execution, and a sender claims it before sending. The node
// running the run sends it as the run stops (Deliver); Sweep, run by every node's scheduler,
// sends those whose sender crashed or failed, once their lease or backoff ran out.
type Replier struct {
	Store   Store
	Secrets *secretbox.Box
	// Client carries the platform API calls.
	Client *http.Client
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (r *Replier) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Replier) log() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Sweep sends every reply that is due; it returns how many went out.
func (r *Replier) Sweep(ctx context.Context) (int, error) {
	ids, err := r.Store.TriggerRepliesDue(ctx, r.now(), 50)
	if err != nil {
		return 0, err
	}
	sent := 0
	for _, id := range ids {
		ok, err := r.Deliver(ctx, id)
		if err != nil {
			return sent, err
		}
		if ok {
			sent++
		}
	}
	return sent, nil
}

// Deliver sends the reply execution executionID owes, if it is pending and no other sender
// holds it; it reports whether it was sent. A failed attempt is retried later (by Sweep)
// with backoff, up to maxReplyAttempts. Only store errors are returned.
func (r *Replier) Deliver(ctx context.Context, executionID string) (bool, error) {
	rep, err := r.Store.TriggerReplyClaim(ctx, executionID, r.now(), replyLease)
	if err != nil || rep == nil {
		return false, err
	}
	log := r.log().With(slog.String("trigger_id", rep.TriggerID), slog.String("execution_id", executionID))
	sendErr := r.send(ctx, rep)
	if sendErr == nil {
		return true, r.Store.TriggerReplyFinish(context.WithoutCancel(ctx), executionID, domain.ReplySent, "", time.Time{})
	}
	status, retryAt := domain.ReplyPending, r.now().Add(time.Duration(1<<min(rep.Attempts, 8))*5*time.Second)
	var apiErr *platform.APIError
	if errors.As(sendErr, &apiErr) && apiErr.RetryAfter > 0 {
		retryAt = r.now().Add(apiErr.RetryAfter)
	}
	var perm *permanentError
	if rep.Attempts >= maxReplyAttempts || errors.As(sendErr, &perm) {
		status = domain.ReplyFailed
	}
	log.Warn("reply not sent", slog.Int("attempt", rep.Attempts), slog.String("outcome", status), slog.Any("error", sendErr))
	return false, r.Store.TriggerReplyFinish(context.WithoutCancel(ctx), executionID, status, sendErr.Error(), retryAt)
}

// permanentError is a reply failure no retry can mend (the trigger or its credential gone).
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

func (r *Replier) send(ctx context.Context, rep *domain.TriggerReply) error {
	ctx, cancel := context.WithTimeout(ctx, replyTimeout)
	defer cancel()
	t, err := r.Store.TriggerGet(ctx, rep.WorkspaceID, rep.TriggerID)
	if store.IsNotFound(err) {
		return &permanentError{"the trigger was deleted"}
	}
	if err != nil {
		return err
	}
	spec, ok := platform.Lookup(t.Type)
	if !ok || spec.Platform == nil || spec.Platform.Sync() {
		return &permanentError{fmt.Sprintf("a %s trigger sends no replies", t.Type)}
	}
	p := spec.Platform
	credID, _ := t.Config[spec.ReplyCredential].(string)
	c, token, err := vault.CredentialForRun(ctx, r.Store, t.WorkspaceID, credID, "", r.Secrets)
	if store.IsNotFound(err) {
		return &permanentError{fmt.Sprintf("bot credential %s not found", credID)}
	}
	if err != nil {
		return fmt.Errorf("bot credential %s: %w", credID, err)
	}
	cred := platform.Credential{Token: token}
	if base, ok := c.Metadata["base_url"].(string); ok {
		cred.BaseURL = base
	}
	text := ReplyText(ctx, r.Store, rep.WorkspaceID, rep.ExecutionID)
	_, err = p.Reply(ctx, r.Client, cred, &platform.Event{ReplyTo: rep.ReplyTo}, text)
	return err
}

// ReplyText is what a chat platform is told once a run stopped (or while it still runs): the
// agent's reply, or a short note saying why there is none.
func ReplyText(ctx context.Context, st Store, ws, executionID string) string {
	x, err := st.ExecutionGet(ctx, ws, executionID)
	if err != nil {
		return "Sorry, I could not answer."
	}
	switch x.Status {
	case domain.StatusCompleted:
		if m, err := st.ChatReplyOf(ctx, ws, x.ID); err == nil && strings.TrimSpace(m.Content) != "" {
			return m.Content
		}
		return "(no answer)"
	case domain.StatusAwaitingApproval:
		// An ask_user question goes to the thread; the thread's next message answers it.
		if a, err := st.ApprovalPending(ctx, ws, x.ID); err == nil && a != nil && a.Kind == domain.ApprovalQuestion {
			if len(a.Choices) > 0 {
				return a.Question + " (" + strings.Join(a.Choices, " / ") + ")"
			}
			return a.Question
		}
		return "Your request is waiting for approval (execution " + x.ID + ")."
	case domain.StatusPending, domain.StatusRunning:
		return "Still working on it (execution " + x.ID + ")."
	}
	return "Sorry, I could not answer (execution " + x.ID + " " + x.Status + ")."
}
