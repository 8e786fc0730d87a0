package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

// The OpenAI-compatible API: a client of OpenAI's API (its SDKs, the Vercel AI SDK, chat
// front ends) with base URL {server}/api/v1/openai and an API key reaches the workspace's
// agents as models. Each request is one execution (source openai) run by the same engine,
// streams and idempotency as POST /agents/{id}/execute; only the shapes differ.

const openAITag = "OpenAI-compatible"

// openAIBase is the OpenAI-compatible API's base URL path: every error under it, also of a
// request refused before its route (a missing key, an unknown path), is in OpenAI's shape.
const openAIBase = v1 + "/openai"

func (s *Server) openAIRoutes() []route {
	base := openAIBase
	return []route{
		{method: "GET", path: base + "/models", op: "openaiListModels", tag: openAITag, scope: "agents:execute", summary: "The workspace's agents as OpenAI models",
			raw: true, openai: true, resp: OpenAIModelList{}, nocache: true, h: s.openAIModels},
		{method: "POST", path: base + "/chat/completions", op: "openaiChatCompletions", tag: openAITag, scope: "agents:execute", summary: "Run an agent as an OpenAI chat completion",
			body: domain.OpenAIChatRequest{}, raw: true, openai: true, streams: true, resp: OpenAIChatCompletion{}, creates: true, plan: true,
			errs: []int{http.StatusNotFound, http.StatusConflict, http.StatusBadGateway, http.StatusGatewayTimeout}, h: s.openAIChat},
		s.openAIResponsesRoute(),
	}
}

// openAIModels lists the workspace's agents as models.
func (s *Server) openAIModels(w http.ResponseWriter, r *http.Request) error {
	ws := s.workspace(r)
	out := OpenAIModelList{Object: "list", Data: []OpenAIModel{}}
	for page := 1; ; page++ {
		items, total, err := s.store.AgentList(r.Context(), ws, domain.AgentFilter{}, domain.Page{Page: page, Limit: 100})
		if err != nil {
			return err
		}
		for _, a := range items {
			out.Data = append(out.Data, OpenAIModel{ID: a.ID, Object: "model", Created: a.CreatedAt.Unix(), OwnedBy: ws, Name: a.Name, Description: a.Description})
		}
		if len(items) == 0 || page*100 >= total {
			break
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// openAITarget is the agent and version a request's model names.
type openAITarget struct {
	agent     *domain.Agent
	versionID *string
	cfg       *domain.AgentConfig
}

// resolveModel finds the agent a model string names: an agent id, an agent name (unique in
// the workspace), either followed by @N for version N; else the active version.
func (s *Server) resolveModel(ctx context.Context, ws, model string) (*openAITarget, error) {
	ref, version, err := domain.ParseModelRef(model)
	if err != nil {
		return nil, err
	}
	a, err := s.agentByRef(ctx, ws, ref)
	if err != nil {
		return nil, err
	}
	t := &openAITarget{agent: a, versionID: a.ActiveVersionID, cfg: a.Config}
	if version > 0 {
		v, err := s.store.AgentVersionNumbered(ctx, ws, a.ID, version)
		if err != nil {
			return nil, err
		}
		t.versionID, t.cfg = &v.ID, &v.Config
	}
	if t.cfg == nil {
		return nil, conflict("agent %s has no active version; create and promote one first", a.ID)
	}
	return t, nil
}

// agentByRef finds an agent by id, else by its name; a name several agents share is a 422.
func (s *Server) agentByRef(ctx context.Context, ws, ref string) (*domain.Agent, error) {
	a, err := s.store.AgentGet(ctx, ws, ref)
	if err == nil || !store.IsNotFound(err) {
		return a, err
	}
	named, err := s.store.AgentsNamed(ctx, ws, ref)
	switch {
	case err != nil:
		return nil, err
	case len(named) == 0:
		return nil, errorf(http.StatusNotFound, "model %q: no agent of the workspace has this id or name (GET /api/v1/openai/models lists them)", ref)
	case len(named) > 1:
		return nil, domain.Invalid("model", "%q names several agents; use the agent id", ref)
	}
	return named[0], nil
}

// messageText reads a message's content: a string, or the text of an array of text parts.
func messageText(i int, raw json.RawMessage) (string, error) {
	field := "messages[" + strconv.Itoa(i) + "].content"
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badRequest("%s must be a string or an array of content parts", field)
	}
	var b strings.Builder
	for j, p := range parts {
		if p.Type != "text" && p.Type != "input_text" && p.Type != "output_text" {
			return "", domain.Invalid(field+"["+strconv.Itoa(j)+"].type", "%q is not supported: only text parts are", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// openAIRun is what an OpenAI-compatible request asks to run, decoded and validated.
type openAIRun struct {
	target   *openAITarget
	conv     *runtime.Conversation
	input    map[string]any
	endUser  string
	metadata map[string]any
	chat     *runtime.ChatTurn     // a Responses turn kept in a chat session
	session  *domain.ChatSession   // the session that turn creates, with the execution
	earlier  []*domain.ChatMessage // the input's earlier messages, stored in that session first
}

// conversationOf splits chat messages, whose roles domain.CheckOpenAIMessages has checked,
// into the extra system text, the earlier turns and the last user message.
func conversationOf(msgs []domain.OpenAIMessage) (*runtime.Conversation, string, error) {
	conv := &runtime.Conversation{}
	var system []string
	for i, m := range msgs[:len(msgs)-1] {
		text, err := messageText(i, m.Content)
		if err != nil {
			return nil, "", err
		}
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, text)
		} else {
			conv.Messages = append(conv.Messages, llm.Message{Role: m.Role, Content: text})
		}
	}
	conv.System = strings.Join(system, "\n\n")
	last := msgs[len(msgs)-1]
	text, err := messageText(len(msgs)-1, last.Content)
	if err != nil {
		return nil, "", err
	}
	if strings.TrimSpace(text) == "" {
		return nil, "", domain.Invalid("messages["+strconv.Itoa(len(msgs)-1)+"].content", "the user message must not be empty")
	}
	return conv, text, nil
}

// inputOf makes a run's input from the user's text: {"message": text}, or, when the version
// has an input_schema, the text read as a JSON object that must match it.
func inputOf(cfg *domain.AgentConfig, text string) (map[string]any, error) {
	input := map[string]any{"message": text}
	if hasSchema(cfg.InputSchema) {
		var obj map[string]any
		if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
			return nil, domain.Invalid("input", "the agent has an input_schema: the last user message must be a JSON object matching it")
		}
		input = obj
	}
	return input, cfg.CheckInput(input)
}

// decodeOpenAIChat reads and validates a chat completion request.
func (s *Server) decodeOpenAIChat(w http.ResponseWriter, r *http.Request) (*domain.OpenAIChatRequest, *openAIRun, error) {
	var req domain.OpenAIChatRequest
	if err := decode(w, r, &req); err != nil {
		return nil, nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, nil, err
	}
	conv, text, err := conversationOf(req.Messages)
	if err != nil {
		return nil, nil, err
	}
	if conv.OutputSchema, err = req.ResponseFormat.OutputSchema(); err != nil {
		return nil, nil, err
	}
	t, err := s.resolveModel(r.Context(), s.workspace(r), req.Model)
	if err != nil {
		return nil, nil, err
	}
	input, err := inputOf(t.cfg, text)
	if err != nil {
		return nil, nil, err
	}
	return &req, &openAIRun{target: t, conv: conv, input: input, endUser: req.User, metadata: req.Metadata}, nil
}

// startOpenAIRun records the run's execution (source openai) and starts it, checking the plan
// limits and linking the request's Idempotency-Key as execute does. A retry that took over
// the key of a request whose process died answers the execution that request created.
func (s *Server) startOpenAIRun(r *http.Request, o *openAIRun) (*domain.Execution, *runtime.Waiter, error) {
	ws := s.workspace(r)
	req := runtime.SubmitRequest{WorkspaceID: ws, Agent: o.target.agent, VersionID: o.target.versionID, Config: o.target.cfg,
		Input: o.input, Metadata: o.metadata, Source: "openai", TimeoutMS: defaultTimeoutMS, UserID: userIDOf(r),
		EndUserID: optString(o.endUser), Conversation: o.conv, Chat: o.chat}
	claim := idempotencyClaimOf(r)
	if claim != nil && claim.ExecutionID != "" {
		x, err := s.store.ExecutionGet(r.Context(), ws, claim.ExecutionID)
		return x, nil, err
	}
	if s.executionLimited() || claim != nil || o.session != nil || len(o.earlier) > 0 {
		req.BeforeCreate = runtime.SQLHook(func(ctx context.Context, tx *store.Store, x *domain.Execution) error {
			if err := s.checkExecutionLimits(ctx, tx, ws); err != nil {
				return err
			}
			if o.session != nil {
				// The session of a first response is created with its turn, or not at all.
				o.session.ID = o.chat.SessionID
				if _, err := tx.ChatSessionCreate(ctx, o.session); err != nil {
					return err
				}
			}
			if len(o.earlier) > 0 {
				// Earlier messages of a stored response's input join its session before the turn.
				if err := tx.ChatMessageAppend(ctx, ws, o.chat.SessionID, o.earlier...); err != nil {
					return err
				}
			}
			if claim != nil {
				return tx.IdempotencyLinkExecution(ctx, claim, x.ID)
			}
			return nil
		})
	}
	return s.engine.Submit(r.Context(), req)
}

// awaitRun waits for a run this request started (run) or an earlier one (x) to stop, up
// to the default timeout; nil, nil when the client left first.
func (s *Server) awaitRun(r *http.Request, x *domain.Execution, run *runtime.Waiter) (*domain.Execution, error) {
	ctx, cancel := context.WithTimeout(r.Context(), defaultTimeoutMS*time.Millisecond)
	defer cancel()
	if run != nil {
		select {
		case <-run.Done():
			if res := run.Result(); res != nil {
				return res, nil
			}
		case <-ctx.Done():
		}
	} else {
		got, err := s.engine.Await(ctx, x.WorkspaceID, x.ID)
		if err != nil || got != nil {
			return got, err
		}
	}
	if r.Context().Err() != nil {
		return nil, nil
	}
	return s.store.ExecutionGet(context.WithoutCancel(r.Context()), x.WorkspaceID, x.ID)
}

// runOutcomeError is the error of a run that stopped without completing: a 409 naming the
// execution to approve, a 502 for one that failed, was cancelled or rejected, a 504 for one
// still going.
func runOutcomeError(x *domain.Execution) error {
	switch x.Status {
	case domain.StatusCompleted:
		return nil
	case domain.StatusAwaitingApproval:
		return &Error{Status: http.StatusConflict, Code: "approval_required", ExecutionID: x.ID,
			Message: "execution " + x.ID + " is awaiting approval: approve it with POST /api/v1/executions/" + x.ID + "/approve, then read its output with GET /api/v1/executions/" + x.ID}
	case domain.StatusPending, domain.StatusRunning:
		return &Error{Status: http.StatusGatewayTimeout, Code: "timeout", ExecutionID: x.ID,
			Message: "execution " + x.ID + " is still running; read its output later with GET /api/v1/executions/" + x.ID}
	}
	msg := x.Status
	if x.Error != nil {
		msg += ": " + *x.Error
	}
	return &Error{Status: http.StatusBadGateway, Code: "execution_failed", ExecutionID: x.ID, Message: "execution " + x.ID + " " + msg}
}

// outputText is a completed run's output as text: its content, or its structured output as
// JSON.
func outputText(output json.RawMessage) string {
	var text struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(output, &text) == nil && text.Content != nil {
		var obj map[string]any
		if json.Unmarshal(output, &obj) == nil && len(obj) == 1 {
			return *text.Content
		}
	}
	return string(output)
}

func (s *Server) openAIChat(w http.ResponseWriter, r *http.Request) error {
	req, o, err := s.decodeOpenAIChat(w, r)
	if err != nil {
		return err
	}
	x, run, err := s.startOpenAIRun(r, o)
	if err != nil {
		return err
	}
	if req.Stream {
		c := &chatChunker{id: "chatcmpl-" + x.ID, model: req.Model, created: x.CreatedAt.Unix(),
			usage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage}
		return s.streamOpenAI(w, r, x, run, c)
	}
	final, err := s.awaitRun(r, x, run)
	if final == nil || err != nil {
		return err
	}
	if err := runOutcomeError(final); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, OpenAIChatCompletion{ID: "chatcmpl-" + final.ID, Object: "chat.completion", Created: final.CreatedAt.Unix(), Model: req.Model,
		Choices: []OpenAIChoice{{Message: OpenAIChatMessage{Role: "assistant", Content: outputText(final.Output)}, FinishReason: "stop"}},
		Usage:   openAIUsageOf(final.TokenUsage), ExecutionID: final.ID})
	return nil
}

// errAwaitingApproval ends an OpenAI-compatible stream whose run stopped for approval.
var errAwaitingApproval = errors.New("the run is awaiting approval")

// streamOpenAI streams run x in another protocol's frames (translate turns each of the
// execution's frames into the bytes to send) through the execution stream machinery: the
// same frames, resumable ids and key checks as GET /executions/{id}/stream. A run that stops
// for approval has no terminal frame: the stream ends with an `error` frame naming the
// execution to approve.
func (s *Server) streamOpenAI(w http.ResponseWriter, r *http.Request, x *domain.Execution, run *runtime.Waiter, tr streamTranslator) error {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	if run != nil {
		go func() {
			select {
			case <-run.Done():
				if res := run.Result(); res != nil && res.Status == domain.StatusAwaitingApproval {
					cancel(errAwaitingApproval)
				}
			case <-ctx.Done():
			}
		}()
	}
	sse := newSSE(w)
	sse.translate = tr.frame
	err := s.streamKeyed(r.WithContext(ctx), sse, x.WorkspaceID, x.ID, 0)
	if !errors.Is(context.Cause(ctx), errAwaitingApproval) || r.Context().Err() != nil {
		return err
	}
	// The frames the stream had not sent when the run stopped, then the approval error.
	rest, err := s.store.EventList(context.WithoutCancel(ctx), x.ID, sse.last)
	if err != nil {
		return err
	}
	for _, ev := range rest {
		if err := sse.frame(ev); err != nil {
			return nil
		}
	}
	ae := runOutcomeError(&domain.Execution{ID: x.ID, Status: domain.StatusAwaitingApproval}).(*Error)
	_ = sse.write(tr.fail(openAIErrorOf(ae)))
	return nil
}
