package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/triggers"
	"github.com/agentplane/agentplane/internal/triggers/platform"
	"github.com/agentplane/agentplane/internal/vault"
)

const (
	// busyWait is how long a chat message waits for the conversation's previous reply to
	// finish before the platform is told to retry (503): within Slack's 3 s.
	busyWait = 2 * time.Second
	// syncReplyWait bounds a Teams run: Teams gives an outgoing webhook 5 s.
	syncReplyWait = 4500 * time.Millisecond
)

func (s *Server) hookRoutes() []route {
	const tag = "Triggers"
	return []route{
		{method: "POST", path: v1 + "/hooks/{token}", op: "receiveHook", tag: tag, summary: "Deliver an event to a trigger (no API key: the token is the credential)",
			status: http.StatusAccepted, resp: domain.Execution{}, alsoOK: map[int]any{http.StatusOK: nil},
			errs: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity,
				http.StatusTooManyRequests, http.StatusServiceUnavailable},
			h: s.receiveHook},
		{method: "GET", path: v1 + "/hooks/{token}", op: "verifyHook", tag: tag, raw: true, summary: "WhatsApp's webhook verification handshake",
			errs: []int{http.StatusBadRequest, http.StatusUnauthorized}, h: s.receiveHook},
	}
}

// hookReplies tracks the replies sent after chat platform runs end, so shutdown can wait
// for them.
type hookReplies struct {
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

func newHookReplies() *hookReplies {
	ctx, cancel := context.WithCancel(context.Background())
	return &hookReplies{ctx: ctx, cancel: cancel}
}

// WaitReplies waits for the chat platform replies still being sent (their runs ended, or
// end as the engine stops); when ctx ends first they are abandoned. Call it after the
// engine stopped. Safe to call more than once.
func (s *Server) WaitReplies(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		s.replies.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.replies.cancel()
		<-done
	}
}

// ExecutionLimits checks the workspace's plan limits inside tx, the transaction that records
// an execution: for runs started outside a request (schedules).
func (s *Server) ExecutionLimits(ctx context.Context, tx *store.Store, ws string) error {
	return s.checkExecutionLimits(ctx, tx, ws)
}

// hookNotFound is the one answer for every token that does not name an enabled trigger.
func hookNotFound() error { return errorf(http.StatusNotFound, "hook not found") }

func (s *Server) receiveHook(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	token := pathID(r, "token")
	if !triggers.IsHookToken(token) {
		return hookNotFound()
	}
	t, secrets, err := vault.TriggerByToken(ctx, s.store, auth.HashKey(token), s.cfg.Secrets)
	if store.IsNotFound(err) {
		return hookNotFound()
	}
	if err != nil {
		return err
	}
	spec, ok := platform.Lookup(t.Type)
	if !ok || spec.Platform == nil || !t.Enabled {
		return hookNotFound()
	}
	p := spec.Platform
	if r.Method == http.MethodGet && !spec.HookGET {
		return hookNotFound()
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errorf(http.StatusRequestEntityTooLarge, "request body exceeds %d bytes", maxBodyBytes)
		}
		return badRequest("could not read the request body")
	}
	cfg := platform.Config{}
	for k, v := range t.Config {
		cfg[k] = v
	}
	for k, v := range secrets {
		if k != "webhook_secret" {
			cfg[k] = v
		}
	}
	if err := p.Verify(r, body, cfg, time.Now()); err != nil {
		s.log.DebugContext(ctx, "hook call not verified", slog.String("trigger_id", t.ID), slog.String("reason", err.Error()))
		msg := err.Error()
		if !errors.Is(err, platform.ErrVerify) {
			msg = "verification failed"
		}
		return errorf(http.StatusUnauthorized, "the call could not be verified as coming from %s: %s", t.Type, msg)
	}
	if err := s.limitHook(w, r, t.ID); err != nil {
		return err
	}
	// As for every JSON body: invalid UTF-8 is refused, and so is a string holding NUL, which
	// PostgreSQL cannot store.
	if !utf8.Valid(body) {
		return badRequest("request body is not valid UTF-8")
	}
	if bytes.Contains(body, []byte(`\u0000`)) {
		if err := findNUL(body); err != nil {
			return err
		}
	}
	ev, err := p.Parse(r, body, cfg)
	if err != nil {
		if errors.Is(err, platform.ErrParse) {
			return badRequest("%s", err.Error())
		}
		return err
	}
	if ev.Respond != nil {
		writePlatformResponse(w, ev.Respond)
		return nil
	}
	a, versionID, config, err := triggers.Target(ctx, s.store, t)
	if err != nil {
		return err
	}
	var doc []byte
	mapping := t.InputMapping
	if !spec.Chat {
		doc = body
	} else {
		doc = triggers.PlatformDocument(ev.Text, ev.User, ev.Payload)
		if len(mapping) == 0 {
			mapping = triggers.DefaultPlatformMapping
		}
	}
	input := triggers.MapInput(mapping, doc)
	if err := config.CheckInput(input); err != nil {
		return err
	}
	req := runtime.SubmitRequest{WorkspaceID: t.WorkspaceID, Agent: a, VersionID: versionID, Config: config, Input: input,
		Metadata: map[string]any{"trigger_id": t.ID}, Source: t.Type, TimeoutMS: defaultTimeoutMS, EndUserID: optString(ev.User)}
	if !spec.Chat {
		return s.webhookRun(w, r, t, ev, req)
	}
	return s.chatPlatformRun(w, r, t, p, ev, req)
}

// writePlatformResponse writes an answer in the platform's own format.
func writePlatformResponse(w http.ResponseWriter, resp *platform.Response) {
	if resp.ContentType != "" {
		w.Header().Set("Content-Type", resp.ContentType)
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(resp.Body)
}

// claimEvent returns a BeforeCreate that records the event's dedup key with the execution
// and checks the plan limits, in the transaction that creates the execution.
// With reply set, the reply the run owes is recorded there too, so it is sent even if this
// node stops before the run ends.
func (s *Server) claimEvent(t *domain.Trigger, ev *platform.Event, reply bool) func(ctx context.Context, tx *store.Store, x *domain.Execution) error {
	return func(ctx context.Context, tx *store.Store, x *domain.Execution) error {
		if ev.DedupKey != "" {
			if err := tx.TriggerEventClaim(ctx, t.ID, ev.DedupKey, x.ID, time.Now()); err != nil {
				return err
			}
		}
		if reply {
			if err := tx.TriggerReplyCreate(ctx, &domain.TriggerReply{ExecutionID: x.ID, WorkspaceID: t.WorkspaceID, TriggerID: t.ID, ReplyTo: ev.ReplyTo}); err != nil {
				return err
			}
		}
		return s.checkExecutionLimits(ctx, tx, t.WorkspaceID)
	}
}

// answerDuplicate answers a retried event with the execution its first delivery started.
func (s *Server) answerDuplicate(w http.ResponseWriter, r *http.Request, t *domain.Trigger, dup *store.DuplicateEventError) error {
	w.Header().Set("Idempotent-Replayed", "true")
	if dup.ExecutionID != "" {
		// On SQLite a transaction queued behind the first delivery's shares its commit: it
		// can see the event recorded a moment before the execution is readable elsewhere.
		for wait := time.Millisecond; ; wait *= 2 {
			x, err := s.store.ExecutionGet(r.Context(), t.WorkspaceID, dup.ExecutionID)
			if err == nil {
				writeData(w, http.StatusOK, x)
				return nil
			}
			if !store.IsNotFound(err) || wait > time.Second {
				break
			}
			select {
			case <-time.After(wait):
			case <-r.Context().Done():
				return nil
			}
		}
	}
	writeData(w, http.StatusOK, nil)
	return nil
}

// webhookRun runs a generic webhook's event: queued (202), or with respond "sync" waited
// for (200 once it ends).
func (s *Server) webhookRun(w http.ResponseWriter, r *http.Request, t *domain.Trigger, ev *platform.Event, req runtime.SubmitRequest) error {
	sync := t.Config["respond"] == "sync"
	req.Async = !sync
	req.BeforeCreate = runtime.SQLHook(s.claimEvent(t, ev, false))
	x, run, err := s.engine.Submit(r.Context(), req)
	var dup *store.DuplicateEventError
	if errors.As(err, &dup) {
		return s.answerDuplicate(w, r, t, dup)
	}
	if err != nil {
		return err
	}
	return s.answerSubmitted(w, r, x, run, req.TimeoutMS)
}

// answerInSession answers the question a chat session's run waits for with content, if it
// waits for one (see answerQuestion); nil, nil otherwise.
func (s *Server) answerInSession(ctx context.Context, t *domain.Trigger, ev *platform.Event, sessionID string) (*chatTurn, error) {
	c, err := s.store.ChatSessionGet(ctx, t.WorkspaceID, sessionID)
	if err != nil || c.ActiveExecutionID == nil {
		return nil, err
	}
	// The event's key is recorded with the answer: a redelivered answer is a duplicate.
	var claim func(ctx context.Context, tx *store.Store, x *domain.Execution) error
	if ev.DedupKey != "" {
		claim = func(ctx context.Context, tx *store.Store, x *domain.Execution) error {
			return tx.TriggerEventClaim(ctx, t.ID, ev.DedupKey, x.ID, time.Now())
		}
	}
	return s.answerQuestion(ctx, t.WorkspaceID, *c.ActiveExecutionID, store.NewID(), ev.Text, t.Type, claim)
}

// chatPlatformRun runs a chat platform's message as a turn of the conversation's chat
// session. Teams waits for the reply and answers with it; the others answer 202 at once and
// reply through the platform's API when the run ends.
func (s *Server) chatPlatformRun(w http.ResponseWriter, r *http.Request, t *domain.Trigger, p platform.Platform, ev *platform.Event, req runtime.SubmitRequest) error {
	ctx := r.Context()
	began := time.Now()
	conversation := ev.ConversationKey
	if conversation == "" {
		conversation = "user:" + ev.User
	}
	title := t.Name + " · " + conversation
	if len([]rune(title)) > 200 {
		title = string([]rune(title)[:200])
	}
	sessionID, err := s.store.TriggerSession(ctx, t, conversation, title, req.EndUserID)
	if err != nil {
		return err
	}
	req.Metadata["session_id"] = sessionID
	replies := s.cfg.Replier != nil && !p.Sync()
	req.BeforeCreate = runtime.SQLHook(s.claimEvent(t, ev, replies))
	var x *domain.Execution
	var run *runtime.Waiter
	// A run of the conversation waiting for the answer to its question: this message answers it.
	var dup *store.DuplicateEventError
	if turn, err := s.answerInSession(ctx, t, ev, sessionID); errors.As(err, &dup) {
		if p.Sync() {
			return s.answerSyncDuplicate(w, r, t, p, ev, dup)
		}
		return s.answerDuplicate(w, r, t, dup)
	} else if err != nil {
		return err
	} else if turn != nil {
		x, run = &domain.Execution{ID: turn.executionID, WorkspaceID: t.WorkspaceID}, turn.run
		if replies {
			// The run's next reply goes to the answer's message (its question was sent already).
			if err := s.store.TriggerReplyReopen(ctx, x.ID, ev.ReplyTo); err != nil {
				return err
			}
		}
	}
	deadline := time.Now().Add(busyWait)
	for x == nil {
		req.Chat = &runtime.ChatTurn{SessionID: sessionID, UserMessageID: store.NewID(), Content: ev.Text}
		x, run, err = s.engine.Submit(ctx, req)
		var busy *store.ConflictError
		if !errors.As(err, &busy) || time.Now().After(deadline) {
			break
		}
		// The conversation's previous reply is still running: wait a little for it.
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil
		}
	}
	if errors.As(err, &dup) {
		if p.Sync() {
			return s.answerSyncDuplicate(w, r, t, p, ev, dup)
		}
		return s.answerDuplicate(w, r, t, dup)
	}
	var busy *store.ConflictError
	if errors.As(err, &busy) {
		return &Error{Status: http.StatusServiceUnavailable, Code: statusCodes[http.StatusServiceUnavailable],
			Message: "the conversation's previous message is still being answered; retry shortly", Header: http.Header{"Retry-After": {"5"}}}
	}
	if err != nil {
		return err
	}
	if p.Sync() {
		// Teams' 5 s count from its call: time spent waiting for a busy session is taken off.
		wait := time.NewTimer(syncReplyWait - time.Since(began))
		defer wait.Stop()
		select {
		case <-run.Done():
		case <-wait.C:
		case <-ctx.Done():
			return nil
		}
		text := triggers.ReplyText(context.WithoutCancel(ctx), s.store, t.WorkspaceID, x.ID)
		resp, err := p.Reply(ctx, nil, platform.Credential{}, ev, text)
		if err != nil {
			return err
		}
		writePlatformResponse(w, resp)
		return nil
	}
	if replies {
		s.replies.wg.Add(1)
		go func() {
			defer s.replies.wg.Done()
			s.sendReply(x.ID, run)
		}()
	}
	writeData(w, http.StatusAccepted, x)
	return nil
}

// answerSyncDuplicate answers a retried Teams message with the first delivery's reply.
func (s *Server) answerSyncDuplicate(w http.ResponseWriter, r *http.Request, t *domain.Trigger, p platform.Platform, ev *platform.Event, dup *store.DuplicateEventError) error {
	text := triggers.ReplyText(r.Context(), s.store, t.WorkspaceID, dup.ExecutionID)
	resp, err := p.Reply(r.Context(), nil, platform.Credential{}, ev, text)
	if err != nil {
		return err
	}
	writePlatformResponse(w, resp)
	return nil
}

// sendReply sends the reply of a chat platform's run as soon as it stops. Should this fail,
// or this node stop first, the schedulers' reply sweep sends it (it was recorded with the
// execution).
func (s *Server) sendReply(executionID string, run *runtime.Waiter) {
	select {
	case <-run.Done():
	case <-s.replies.ctx.Done():
		return
	}
	if _, err := s.cfg.Replier.Deliver(s.replies.ctx, executionID); err != nil && s.replies.ctx.Err() == nil {
		s.log.Warn("reply not recorded", slog.String("execution_id", executionID), slog.Any("error", err))
	}
}

// logPath is a request's path as logs show it: a hook token (the credential of its
// trigger) is replaced by {token}.
func logPath(r *http.Request) string {
	if rest, ok := strings.CutPrefix(r.URL.Path, v1+"/hooks/"); ok && rest != "" {
		return v1 + "/hooks/{token}"
	}
	return r.URL.Path
}
