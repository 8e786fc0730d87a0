package api

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/eval"
	"github.com/agentplane/agentplane/internal/llm/providers"
)

// tagDescriptions describes every tag of the route table; openAPIDoc refuses a tag it does
// not know, so a new resource cannot ship with an undescribed tag.
var tagDescriptions = map[string]string{
	"System":            "Liveness, this document, and the service's metadata. No API key needed.",
	"Emulator":          "Routes only the local emulator has: reset its in-memory data and count what it holds.",
	"Auth":              "Sign in with an email and password for a JWT (server only).",
	"MCP server":        "The workspace's agents as tools of a Streamable HTTP MCP server, for desktop and IDE assistants and for other agents.",
	"OpenAI-compatible": "The workspace's agents through OpenAI's API: set an OpenAI SDK's base URL to {server}/api/v1/openai and its API key to an agentplane key. Errors here use OpenAI's error shape instead of the envelope.",
	"Workspaces":        "The workspaces a user belongs to (server only).",
	"API keys":          "Keys that authenticate programs: scoped, optionally bound to addresses and origins, shown raw only once.",
	"Agents":            "Agents and their immutable, versioned configurations; preview, run (execute) and playground runs.",
	"Prompts":           "Versioned Mustache prompt templates, rendered without HTML escaping.",
	"Data sources":      "Versioned connections to databases (PostgreSQL, MySQL/MariaDB, SQLite) and JSON HTTP APIs, queried read-only with bound parameters, a statement timeout and row and byte caps. The emulator answers from generated sample tables.",
	"Credentials":       "Secrets (model-provider keys and others), encrypted at rest and only ever shown masked.",
	"LLM models":        "The model catalog with context windows and prices, plus models a workspace registers.",
	"MCP tools":         "MCP servers and the tools they offer to agents.",
	"Guardrails":        "Input and output checks (block, warn or redact) agents apply to each run.",
	"Memories":          "Facts agents keep, per agent or workspace-wide.",
	"Executions":        "Runs of agents: their lifecycle, streams, trees of child runs, cancellation and the approval inbox.",
	"Chat":              "Chat sessions with an agent: each message runs it over the session's history.",
	"Traces":            "Every run's trace and its spans (prompt rendering, model and tool calls, guardrail checks).",
	"Scores":            "Judgements of runs (numbers, categories, booleans) given to executions, traces, spans and chat sessions, by people, applications or evaluations, with a summary per name.",
	"Assets":            "Images, audio and files runs produced (model replies, MCP tool results) and uploads, stored once per distinct content in each workspace, within its quota.",
	"Datasets":          "Named sets of test cases (an input and, optionally, the output expected) to run agents on in experiments; versioned by every item change, optionally checked against an input schema.",
	"Evaluators":        "Checks that turn a run's output into a score (exact match, contains, regex, JSON Schema, JSON fields, text similarity), checked against a score config like any score; test one on an output without storing anything.",
	"Evaluation rules":  "Online evaluation: score finished executions as they end with an evaluator, for one agent or all, filtered and sampled; each is judged once, in the background, on any node.",
	"Experiments":       "An agent version run on every item of a dataset, each run scored by evaluators: progress, a summary per score, results per item, a comparison of experiments, and a stream of progress.",
	"Score configs":     "What the scores of a name may hold: a data type, a numeric range or categories. Archived, never deleted.",
	"Annotation queues": "Executions for people to review: claim the next item, score it under the queue's score configs, complete it. The scores agree with an automated judge's or not: see GET /scores/agreement.",
	"Triggers":          "Agent triggers: a generic webhook, Slack, Telegram, Teams and WhatsApp bots, and cron schedules that start runs; and the hook endpoint their calls arrive at.",
	"Webhook deliveries": "Completion webhooks: each ended execution of an agent with a webhook_url is POSTed to it, signed with the Standard Webhooks scheme (webhook-id, webhook-timestamp, webhook-signature), " +
		"from a durable outbox retried with exponential backoff for up to 24 hours. These routes show every delivery and its attempts.",
}

// The licence the document declares (the project has no licence file of its own; MIT is the
// one chosen for it).
const (
	licenseName       = "MIT"
	licenseIdentifier = "MIT"
)

// Reusable response headers, under components/headers.
const (
	hdrRequestID          = "X-Request-ID"
	hdrIdempotentReplayed = "Idempotent-Replayed"
	hdrRateLimitLimit     = "RateLimit-Limit"
	hdrRateLimitRemaining = "RateLimit-Remaining"
	hdrRateLimitReset     = "RateLimit-Reset"
	hdrRetryAfter         = "Retry-After"
	hdrETag               = "ETag"
	hdrCacheControl       = "Cache-Control"
)

// responseHeaders are the headers documented in components/headers.
func responseHeaders(emulator bool) map[string]*huma.Header {
	h := map[string]*huma.Header{
		hdrRequestID: {Description: "The request id: the client's X-Request-ID when it sent a valid one, else a new one. Quote it when reporting a problem.",
			Schema: &huma.Schema{Type: "string"}},
		hdrIdempotentReplayed: {Description: "`true` when this response replays the stored first response to the same Idempotency-Key and body; absent otherwise.",
			Schema: &huma.Schema{Type: "string", Enum: []any{"true"}}},
		hdrETag: {Description: "A strong entity tag of the body (a hash of it). Send it back in If-None-Match to get 304 Not Modified while the answer is unchanged.",
			Schema: &huma.Schema{Type: "string"}},
		hdrCacheControl: {Description: "`private, no-cache`: a client may keep the body but must revalidate it (If-None-Match) before each use, and shared caches must not keep it.",
			Schema: &huma.Schema{Type: "string", Enum: []any{etagCacheControl}}},
	}
	if !emulator {
		h[hdrRateLimitLimit] = &huma.Header{Description: "How many requests the API key (or, with a bearer token, the user) may make at once (its burst); the allowance refills at the server's --rate-limit per second. " +
			"The allowance is shared by every node of the server (through PostgreSQL or Redis). Sent while rate limiting is on.",
			Schema: &huma.Schema{Type: "integer", Minimum: ptr(0.0)}}
		h[hdrRateLimitRemaining] = &huma.Header{Description: "About how many requests the caller may still make at once: the shared allowance as this node last saw it, plus what this node has reserved from it.",
			Schema: &huma.Schema{Type: "integer", Minimum: ptr(0.0)}}
		h[hdrRateLimitReset] = &huma.Header{Description: "Seconds until the caller's allowance is full again.",
			Schema: &huma.Schema{Type: "integer", Minimum: ptr(0.0)}}
		h[hdrRetryAfter] = &huma.Header{Description: "Seconds to wait before retrying: until a token is back (429), or, on a 409 for an Idempotency-Key in progress, until its lease runs out.",
			Schema: &huma.Schema{Type: "integer", Minimum: ptr(0.0)}}
	}
	return h
}

func headerRef(name string) *huma.Header { return &huma.Header{Ref: "#/components/headers/" + name} }

// addHeaders documents the headers a response of rt carries.
func addHeaders(resp *huma.Response, rt route, status int, emulator bool) {
	if resp.Headers == nil {
		resp.Headers = map[string]*huma.Header{}
	}
	resp.Headers[hdrRequestID] = headerRef(hdrRequestID)
	if rt.tagged() && (status == http.StatusOK || status == http.StatusNotModified) {
		resp.Headers[hdrETag] = headerRef(hdrETag)
		resp.Headers[hdrCacheControl] = headerRef(hdrCacheControl)
	}
	if (rt.creates || rt.turn) && status < 300 {
		resp.Headers[hdrIdempotentReplayed] = headerRef(hdrIdempotentReplayed)
	}
	if !emulator && rt.scope != "" && status != http.StatusUnauthorized {
		for _, h := range []string{hdrRateLimitLimit, hdrRateLimitRemaining, hdrRateLimitReset} {
			resp.Headers[h] = headerRef(h)
		}
	}
	if !emulator && (status == http.StatusTooManyRequests || (rt.creates && !rt.turn && status == http.StatusConflict)) {
		resp.Headers[hdrRetryAfter] = headerRef(hdrRetryAfter)
	}
}

// StreamEventExecution is the data of the `execution` frame that opens a chat stream.
type StreamEventExecution struct {
	ExecutionID   string `json:"execution_id" doc:"The execution running the reply; reconnect with GET /api/v1/executions/{execution_id}/stream."`
	UserMessageID string `json:"user_message_id" doc:"The id the user message will have once the reply is stored."`
}

// StreamEventThinking is the data of a `thinking` frame: reasoning or progress text.
type StreamEventThinking struct {
	Content string `json:"content" doc:"Reasoning the model streams, or a progress note (a step starting, an approval wait)."`
}

// StreamEventToolStart is the data of a `tool_start` frame.
type StreamEventToolStart struct {
	ID   string `json:"id" doc:"The tool call's id; the matching tool_end has the same."`
	Name string `json:"name" doc:"The tool called."`
}

// StreamEventToolEnd is the data of a `tool_end` frame.
type StreamEventToolEnd struct {
	ID      string `json:"id" doc:"The tool call's id."`
	Name    string `json:"name" doc:"The tool called."`
	Summary string `json:"summary" doc:"A short summary of the tool's result."`
}

// StreamEventContent is the data of a `content` frame: a delta of the output text.
type StreamEventContent struct {
	Content string `json:"content" doc:"The next piece of the output text (about a word); concatenated, the deltas are the output."`
}

// StreamEventDone is the data of the terminal `done` frame of a completed execution.
type StreamEventDone struct {
	Output     any               `json:"output" doc:"The execution's output: {\"content\": text}, or an object matching the version's output_schema."`
	TokenUsage domain.TokenUsage `json:"token_usage"`
	Time       float64           `json:"time" minimum:"0" doc:"Seconds from the execution's creation to its end."`
	Model      string            `json:"model,omitempty" doc:"The model that answered the last model call: the version's, or the fallback that answered when it failed (config.fallback_models). Absent when no model answered."`
}

// StreamEventError is the data of the terminal `error` frame of an execution that did not
// complete.
type StreamEventError struct {
	Message string `json:"message" doc:"What went wrong, in a sentence."`
	Code    string `json:"code,omitempty" enum:"failed,cancelled,rejected,timeout,interrupted,unauthorized" doc:"Why the execution ended: failed (an error in the run), cancelled (POST /executions/{id}/cancel), rejected (an approval was denied), timeout (it ran out of time), interrupted (the server running it stopped, crashed or shut down after its first model call). unauthorized ends the stream, not the run: the API key that opened it was revoked, rotated or expired (the run goes on; resume with a valid key and Last-Event-ID)."`
}

// streamEvent is one kind of frame an SSE route sends: its event name, the Go type of its
// data, and what it means.
type streamEvent struct {
	name string
	data any
	desc string
}

// streamEvents lists the frames of an SSE route in the order they can come.
func streamEvents(chat bool) []streamEvent {
	evs := []streamEvent{
		{"thinking", StreamEventThinking{}, "reasoning or a progress note; any number, any time before the terminal frame"},
		{"tool_start", StreamEventToolStart{}, "a tool call starts"},
		{"tool_end", StreamEventToolEnd{}, "that tool call returned"},
		{"content", StreamEventContent{}, "a delta of the output text"},
		{"done", StreamEventDone{}, "terminal: the execution completed"},
		{"error", StreamEventError{}, "terminal: the execution failed, was cancelled, rejected, timed out or was interrupted; or the stream's API key stopped working (code unauthorized)"},
	}
	if chat {
		evs = append([]streamEvent{{"execution", StreamEventExecution{}, "first frame (id 0): the execution started for the message"}}, evs...)
	}
	return evs
}

// sseResponse documents a text/event-stream response. OpenAPI 3.1 has no native way to
// describe a stream of events, so the media type's schema describes one frame, as APIs
// commonly do for SSE: ExecutionStreamFrame or ChatStreamFrame, a oneOf of StreamFrame*
// objects told apart by their `event` (the discriminator), each with the `id` and the `data`
// of that event (StreamEvent*).
func sseResponse(reg huma.Registry, rt route) *huma.Response {
	chat := strings.HasPrefix(rt.path, v1+"/chat/")
	name, prefix, evs := "ExecutionStreamFrame", "StreamFrame", streamEvents(chat)
	if chat {
		name = "ChatStreamFrame"
	}
	if strings.HasPrefix(rt.path, v1+"/experiments/") {
		name, prefix, evs = "ExperimentStreamFrame", "ExperimentStreamFrame", experimentStreamEvents()
	}
	var b strings.Builder
	b.WriteString("A Server-Sent Events stream (`text/event-stream`). Each frame is `id: <sequence>`, `event: <name>`, `data: <JSON>` and a blank line; ")
	b.WriteString("a `: ping` comment keeps an idle stream open. Exactly one terminal frame (`done` or `error`) ends the stream. ")
	fmt.Fprintf(&b, "The schema (%s) describes one frame: its `id`, its `event` and the JSON of its `data`. The events:\n\n", name)
	frame := &huma.Schema{Description: "One frame of the stream, told apart by `event`.", Discriminator: &huma.Discriminator{PropertyName: "event", Mapping: map[string]string{}}}
	for _, ev := range evs {
		data := reg.Schema(reflect.TypeOf(ev.data), true, "")
		fname := prefix + camel(ev.name)
		ref := "#/components/schemas/" + fname
		reg.Map()[fname] = &huma.Schema{
			Type: huma.TypeObject, Description: "The `" + ev.name + "` frame: " + ev.desc + ".",
			Properties: map[string]*huma.Schema{
				"id":    {Type: huma.TypeInteger, Minimum: ptr(0.0), Description: "The frame's sequence number in the stream (its `id:` line); send the last one seen as Last-Event-ID to resume after it."},
				"event": {Type: huma.TypeString, Enum: []any{ev.name}, Description: "The event name (its `event:` line)."},
				"data":  data,
			},
			Required: []string{"id", "event", "data"},
		}
		frame.OneOf = append(frame.OneOf, &huma.Schema{Ref: ref})
		frame.Discriminator.Mapping[ev.name] = ref
		fmt.Fprintf(&b, "- `%s` (data: %s): %s\n", ev.name, strings.TrimPrefix(data.Ref, "#/components/schemas/"), ev.desc)
	}
	reg.Map()[name] = frame
	return &huma.Response{Description: b.String(), Content: map[string]*huma.MediaType{
		"text/event-stream": {Schema: &huma.Schema{Ref: "#/components/schemas/" + name}},
	}}
}

// camel turns an event name such as tool_start into ToolStart.
func camel(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// forEachSchema calls fn on every schema of the document: components and the inline
// schemas of parameters, request bodies and responses, and everything nested in them.
func forEachSchema(doc *huma.OpenAPI, fn func(*huma.Schema)) {
	var walk func(s *huma.Schema)
	walk = func(s *huma.Schema) {
		if s == nil {
			return
		}
		fn(s)
		for _, p := range s.Properties {
			walk(p)
		}
		walk(s.Items)
		walk(s.Not)
		if as, ok := s.AdditionalProperties.(*huma.Schema); ok {
			walk(as)
		}
		for _, sub := range s.OneOf {
			walk(sub)
		}
		for _, sub := range s.AnyOf {
			walk(sub)
		}
		for _, sub := range s.AllOf {
			walk(sub)
		}
	}
	for _, s := range doc.Components.Schemas.Map() {
		walk(s)
	}
	for _, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			for _, p := range op.Parameters {
				walk(p.Schema)
			}
			if op.RequestBody != nil {
				for _, mt := range op.RequestBody.Content {
					walk(mt.Schema)
				}
			}
			for _, resp := range op.Responses {
				for _, mt := range resp.Content {
					walk(mt.Schema)
				}
			}
		}
	}
}

// documentRegistered documents what registers itself rather than living in struct tags (trigger
// types, agent types, evaluator types and model providers), and the rules of the domain's
// request types that struct tags cannot say (each prompt tag's, a score's name or config).
func documentRegistered(reg huma.Registry) {
	triggerTypeSchemas(reg)
	agentTypeSchemas(reg)
	documentEnum(reg, "type", eval.Types(), "Evaluator", "EvaluatorCreateRequest", "EvaluatorUpdateRequest")
	// A trigger's version_id and a data source's credential_id are read raw (absent, null or
	// a string, as nullableID reads them): say so.
	for name, prop := range map[string]string{"TriggerUpdateRequest": "version_id", "DataSourceUpdateRequest": "credential_id"} {
		if sch := reg.Map()[name]; sch != nil && sch.Properties[prop] != nil {
			sch.Properties[prop].Type, sch.Properties[prop].Nullable = huma.TypeString, true
		}
	}
	// A prompt's tags: each as domain's Validate and trimTags take it.
	for _, name := range []string{"PromptCreateRequest", "PromptUpdateRequest"} {
		if sch := reg.Map()[name]; sch != nil {
			tagItems(sch)
		}
	}
	// A score names what is scored (a name that is not blank) or a score config (a
	// config_id), or both: domain.ScoreCreateRequest.Validate's rule.
	if sch := reg.Map()["ScoreCreateRequest"]; sch != nil {
		sch.AnyOf = []*huma.Schema{
			{Required: []string{"name"}, Properties: map[string]*huma.Schema{"name": {MinLength: ptr(1), Pattern: `\S`}}},
			{Required: []string{"config_id"}, Properties: map[string]*huma.Schema{"config_id": {MinLength: ptr(1)}}},
		}
	}
	if sch := reg.Map()["CredentialCreateRequest"]; sch != nil && sch.Properties["provider"] != nil {
		sch.Properties["provider"].Description += " Model providers: " + strings.Join(providers.Names(), ", ") + "."
	}
}

// documentEnum sets the enum of property prop of the named component schemas: for lists
// that are declared once, in a registry, rather than in struct tags.
func documentEnum(reg huma.Registry, prop string, values []string, schemas ...string) {
	for _, name := range schemas {
		sch := reg.Map()[name]
		if sch == nil || sch.Properties[prop] == nil {
			continue
		}
		enum := make([]any, len(values))
		for i, v := range values {
			enum[i] = v
		}
		sch.Properties[prop].Enum = enum
	}
}

// arraysNotNullable undoes huma's default of documenting every slice as "array or null":
// the server always sends [] for an empty list (a nil slice in a response is a bug the
// response validator catches), and clients should not have to handle null.
func arraysNotNullable(doc *huma.OpenAPI) {
	forEachSchema(doc, func(s *huma.Schema) {
		if s.Type == huma.TypeArray {
			s.Nullable = false
		}
	})
}

// NormalizePublicURL checks a public base URL (Config.PublicURL, --public-url): it must be an
// absolute http(s) URL without query, fragment or credentials. It returns the URL without a
// trailing slash, the form a servers entry takes.
func NormalizePublicURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%q is not an absolute http:// or https:// URL without query, fragment or credentials", s)
	}
	return strings.TrimRight(s, "/"), nil
}

// withServers returns the document with its servers member set to the one base URL.
func withServers(doc []byte, base string) []byte {
	prefix := serversPrefix(base)
	out := make([]byte, 0, len(prefix)+len(doc))
	out = append(out, prefix...)
	return append(out, doc[1:]...)
}

// serversPrefix is the start of the document up to and including the servers member: the
// cached document (built once, without servers) follows from its second byte on.
func serversPrefix(base string) []byte {
	u, _ := json.Marshal(base) // a string always marshals
	return []byte(`{"servers":[{"url":` + string(u) + `,"description":"This server."}],`)
}

// requestBaseURL is the base URL the request reached this server at: its Host, with https
// when it came over TLS, or when a trusted proxy says so in X-Forwarded-Proto.
func (s *Server) requestBaseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if s.trusted != nil {
		if peer, err := netip.ParseAddrPort(r.RemoteAddr); err == nil && s.trusted.Contains(peer.Addr()) {
			vals := r.Header.Values("X-Forwarded-Proto")
			if len(vals) > 0 {
				// The right-most value is the one the nearest (trusted) proxy set.
				parts := strings.Split(vals[len(vals)-1], ",")
				switch p := strings.ToLower(strings.TrimSpace(parts[len(parts)-1])); p {
				case "http", "https":
					scheme = p
				}
			}
		}
	}
	host := r.Host
	if host == "" || strings.ContainsAny(host, "/?#@ \\") {
		return "/"
	}
	if h, _, err := net.SplitHostPort(host); err == nil && h == "" {
		return "/"
	}
	return scheme + "://" + host
}

// openAPI serves the document: the --public-url variant when one is configured, else the
// cached document with servers spliced in from the request.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if s.cfg.PublicURL != "" {
		h.Set("Content-Length", strconv.Itoa(len(s.openapiPublic)))
		_, _ = w.Write(s.openapiPublic)
		return nil
	}
	prefix := serversPrefix(s.requestBaseURL(r))
	h.Set("Content-Length", strconv.Itoa(len(prefix)+len(s.openapi)-1))
	if _, err := w.Write(prefix); err == nil {
		_, _ = w.Write(s.openapi[1:])
	}
	return nil
}
