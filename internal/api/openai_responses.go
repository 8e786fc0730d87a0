package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

// OpenAI's Responses API over agent runs. A stored response is a chat turn: its id is
// resp_ and the execution's id, and previous_response_id continues that turn's chat session,
// whose history the platform keeps (so a conversation goes on from any node).

// responseIDPrefix starts every response id; the rest is the execution's id.
const responseIDPrefix = "resp_"

// OpenAIOutputText is the text part of a response's message.
type OpenAIOutputText struct {
	Type        string `json:"type" enum:"output_text"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

// OpenAIOutputMessage is the assistant message a response outputs.
type OpenAIOutputMessage struct {
	Type    string             `json:"type" enum:"message"`
	ID      string             `json:"id"`
	Status  string             `json:"status" enum:"in_progress,completed"`
	Role    string             `json:"role" enum:"assistant"`
	Content []OpenAIOutputText `json:"content"`
}

// OpenAIResponseUsage is a run's token usage in the Responses API's names.
type OpenAIResponseUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// OpenAIResponse is the answer of POST /openai/responses.
type OpenAIResponse struct {
	ID                 string                `json:"id" doc:"resp_ and the execution's id; pass it as previous_response_id to continue."`
	Object             string                `json:"object" enum:"response"`
	CreatedAt          int64                 `json:"created_at"`
	Status             string                `json:"status" enum:"in_progress,completed"`
	Model              string                `json:"model"`
	Instructions       *string               `json:"instructions"`
	PreviousResponseID *string               `json:"previous_response_id"`
	Output             []OpenAIOutputMessage `json:"output"`
	Usage              *OpenAIResponseUsage  `json:"usage"`
	Metadata           map[string]any        `json:"metadata"`
	Store              bool                  `json:"store"`
	Error              *OpenAIError          `json:"error"`
	ParallelToolCalls  bool                  `json:"parallel_tool_calls"`
	ToolChoice         string                `json:"tool_choice"`
	Tools              []any                 `json:"tools"`
	ExecutionID        string                `json:"execution_id" doc:"agentplane's addition: the execution that answered."`
	SessionID          *string               `json:"session_id" doc:"agentplane's addition: the chat session keeping the conversation (null with store false)."`
}

func (s *Server) openAIResponsesRoute() route {
	return route{method: "POST", path: v1 + "/openai/responses", op: "openaiResponses", tag: openAITag, scope: "agents:execute", summary: "Run an agent as an OpenAI response",
		body: domain.OpenAIResponsesRequest{}, raw: true, openai: true, streams: true, resp: OpenAIResponse{}, creates: true, plan: true,
		errs: []int{http.StatusNotFound, http.StatusConflict, http.StatusBadGateway, http.StatusGatewayTimeout}, h: s.openAIResponses}
}

// responsesInput reads input: a string, or messages (Responses items of type message, or
// bare {role, content}) whose last one is the user's.
func responsesInput(raw json.RawMessage) ([]domain.OpenAIMessage, error) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []domain.OpenAIMessage{{Role: "user", Content: raw}}, nil
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &items); err != nil || len(raw) == 0 {
		return nil, badRequest("input must be a string or an array of messages")
	}
	msgs := make([]domain.OpenAIMessage, len(items))
	for i, it := range items {
		if it.Type != "" && it.Type != "message" {
			return nil, domain.Invalid("input["+strconv.Itoa(i)+"].type", "%q is not supported: only messages are (the agent's own tools apply)", it.Type)
		}
		msgs[i] = domain.OpenAIMessage{Role: it.Role, Content: it.Content}
	}
	return msgs, nil
}

// responseTurn is where a response's turn goes: a session to continue or create (nil with
// store false).
type responseTurn struct {
	sessionID string
	create    *domain.ChatSession // the session the first turn creates
	previous  *string
}

// turnOf finds the session previous_response_id continues (its agent must be the model's),
// or prepares the one a first stored response creates.
func (s *Server) turnOf(ctx context.Context, r *http.Request, req *domain.OpenAIResponsesRequest, agent *domain.Agent, text string) (*responseTurn, error) {
	ws := s.workspace(r)
	if !req.Stored() {
		return nil, nil
	}
	if req.PreviousResponseID == "" {
		title := text
		if len(title) > 80 {
			title = strings.ToValidUTF8(title[:80], "") + "…"
		}
		return &responseTurn{sessionID: store.NewID(), create: &domain.ChatSession{WorkspaceID: ws, AgentID: agent.ID, Title: title,
			Metadata: domain.JSONObject{"source": "openai"}, UserID: userIDOf(r), EndUserID: optString(req.User)}}, nil
	}
	id, ok := strings.CutPrefix(req.PreviousResponseID, responseIDPrefix)
	prevNotFound := errorf(http.StatusNotFound, "previous_response_id %s: no stored response has this id", req.PreviousResponseID)
	if !ok {
		return nil, prevNotFound
	}
	x, err := s.store.ExecutionGet(ctx, ws, id)
	if store.IsNotFound(err) || (err == nil && x.SessionID == nil) {
		return nil, prevNotFound
	}
	if err != nil {
		return nil, err
	}
	if x.AgentID != agent.ID {
		return nil, domain.Invalid("model", "previous_response_id %s was answered by agent %s, not %s: a conversation stays with one agent", req.PreviousResponseID, x.AgentID, agent.ID)
	}
	return &responseTurn{sessionID: *x.SessionID, previous: &req.PreviousResponseID}, nil
}

func (s *Server) openAIResponses(w http.ResponseWriter, r *http.Request) error {
	var req domain.OpenAIResponsesRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	msgs, err := responsesInput(req.Input)
	if err != nil {
		return err
	}
	if err := domain.CheckOpenAIMessages(msgs); err != nil {
		return err
	}
	conv, text, err := conversationOf(msgs)
	if err != nil {
		return err
	}
	conv.System = strings.TrimSpace(strings.Join([]string{req.Instructions, conv.System}, "\n\n"))
	t, err := s.resolveModel(r.Context(), s.workspace(r), req.Model)
	if err != nil {
		return err
	}
	input, err := inputOf(t.cfg, text)
	if err != nil {
		return err
	}
	turn, err := s.turnOf(r.Context(), r, &req, t.agent, text)
	if err != nil {
		return err
	}
	o := &openAIRun{target: t, conv: conv, input: input, endUser: req.User, metadata: req.Metadata}
	if turn != nil {
		o.chat = &runtime.ChatTurn{SessionID: turn.sessionID, UserMessageID: store.NewID(), Content: text}
		o.session = turn.create
		// The platform keeps the whole conversation: earlier user and assistant messages of the
		// input are stored in the session with the turn and reach the model as its history.
		for _, m := range conv.Messages {
			o.earlier = append(o.earlier, &domain.ChatMessage{Role: m.Role, Content: m.Content})
		}
		conv.Messages = nil
	}
	x, run, err := s.startOpenAIRun(r, o)
	if err != nil {
		return err
	}
	resp := OpenAIResponse{ID: responseIDPrefix + x.ID, Object: "response", CreatedAt: x.CreatedAt.Unix(), Status: "in_progress", Model: req.Model,
		Instructions: optString(req.Instructions), Metadata: req.Metadata, Store: turn != nil, Output: []OpenAIOutputMessage{},
		ToolChoice: "auto", Tools: []any{}, ExecutionID: x.ID, SessionID: x.SessionID}
	if turn != nil {
		resp.PreviousResponseID = turn.previous
	}
	if resp.Metadata == nil {
		resp.Metadata = map[string]any{}
	}
	if req.Stream {
		return s.streamOpenAI(w, r, x, run, &responseStreamer{resp: resp})
	}
	final, err := s.awaitRun(r, x, run)
	if final == nil || err != nil {
		return err
	}
	if err := runOutcomeError(final); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, completedResponse(resp, outputText(final.Output), final.TokenUsage))
	return nil
}

// completedResponse is resp completed with its output text and usage.
func completedResponse(resp OpenAIResponse, text string, u domain.TokenUsage) OpenAIResponse {
	resp.Status = "completed"
	resp.Output = []OpenAIOutputMessage{outputMessage(resp.ExecutionID, "completed", text)}
	resp.Usage = &OpenAIResponseUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	return resp
}

func outputMessage(xid, status, text string) OpenAIOutputMessage {
	return OpenAIOutputMessage{Type: "message", ID: "msg_" + xid, Status: status, Role: "assistant",
		Content: []OpenAIOutputText{{Type: "output_text", Text: text, Annotations: []any{}}}}
}

// responseStreamer turns an execution's frames into the Responses event stream.
type responseStreamer struct {
	resp    OpenAIResponse
	seq     int
	started bool
	text    strings.Builder
}

// event is one `event: <type>` frame whose data carries type and sequence_number.
func (rs *responseStreamer) event(typ string, fields map[string]any) []byte {
	fields["type"], fields["sequence_number"] = typ, rs.seq
	rs.seq++
	b, _ := json.Marshal(fields)
	return append(append(append(append([]byte("event: "), typ...), "\ndata: "...), b...), '\n', '\n')
}

// start is the events before the first text: the response, its message and its text part.
func (rs *responseStreamer) start() []byte {
	rs.started = true
	item := outputMessage(rs.resp.ExecutionID, "in_progress", "")
	item.Content = []OpenAIOutputText{}
	out := rs.event("response.created", map[string]any{"response": rs.resp})
	out = append(out, rs.event("response.in_progress", map[string]any{"response": rs.resp})...)
	out = append(out, rs.event("response.output_item.added", map[string]any{"output_index": 0, "item": item})...)
	return append(out, rs.event("response.content_part.added", map[string]any{"item_id": item.ID, "output_index": 0, "content_index": 0,
		"part": OpenAIOutputText{Type: "output_text", Text: "", Annotations: []any{}}})...)
}

func (rs *responseStreamer) delta(text string) []byte {
	var out []byte
	if !rs.started {
		out = rs.start()
	}
	rs.text.WriteString(text)
	return append(out, rs.event("response.output_text.delta", map[string]any{"item_id": "msg_" + rs.resp.ExecutionID, "output_index": 0,
		"content_index": 0, "delta": text, "logprobs": []any{}})...)
}

func (rs *responseStreamer) frame(ev domain.Event) []byte {
	switch ev.Event {
	case "content":
		text := contentOf(ev)
		if text == "" {
			return nil
		}
		return rs.delta(text)
	case "done":
		d := doneOf(ev)
		var out []byte
		if rs.text.Len() == 0 {
			out = rs.delta(outputText(d.Output))
		}
		text := rs.text.String()
		id := "msg_" + rs.resp.ExecutionID
		out = append(out, rs.event("response.output_text.done", map[string]any{"item_id": id, "output_index": 0, "content_index": 0, "text": text, "logprobs": []any{}})...)
		out = append(out, rs.event("response.content_part.done", map[string]any{"item_id": id, "output_index": 0, "content_index": 0,
			"part": OpenAIOutputText{Type: "output_text", Text: text, Annotations: []any{}}})...)
		out = append(out, rs.event("response.output_item.done", map[string]any{"output_index": 0, "item": outputMessage(rs.resp.ExecutionID, "completed", text)})...)
		return append(out, rs.event("response.completed", map[string]any{"response": completedResponse(rs.resp, text, d.TokenUsage)})...)
	case "error":
		return rs.fail(streamErrorOf(rs.resp.ExecutionID, ev.Data))
	}
	return nil
}

// fail is the `error` event ending a stream; its error object makes OpenAI SDKs raise.
func (rs *responseStreamer) fail(e OpenAIErrorBody) []byte {
	return rs.event("error", map[string]any{"code": e.Error.Code, "message": e.Error.Message, "param": nil, "error": e.Error})
}
