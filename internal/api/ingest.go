package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/metrics"
	"github.com/agentplane/agentplane/internal/store"
)

// Ingest limits.
const (
	maxIngestBytes  = 5 << 20 // per request body, as sent and once inflated
	maxIngestSpans  = 10000   // per request
	maxIngestIDLen  = 128
	maxIngestName   = 1000
	maxIngestErrors = 100 // rejected spans listed in a JSON ingest answer
)

// ingestSpan is one span of POST /traces/ingest.
type ingestSpan struct {
	ID          string             `json:"id" maxLength:"128" pattern:"^[A-Za-z0-9._:-]+$" doc:"The span's id, unique in its trace (OTLP: 16 hex digits)."`
	TraceID     string             `json:"trace_id" maxLength:"128" pattern:"^[A-Za-z0-9._:-]+$" doc:"The trace's id (OTLP: 32 hex digits; or an execution's trace id)."`
	ParentID    *string            `json:"parent_id,omitempty" maxLength:"128" pattern:"^[A-Za-z0-9._:-]+$" doc:"The parent span's id; absent for a root span."`
	Name        string             `json:"name" maxLength:"1000"`
	Kind        string             `json:"kind,omitempty" enum:"agent,prompt,llm,tool,guardrail,history,approval,validation,step,subagent,memory,embedding,span" doc:"Default: llm when model is set, else span."`
	Status      string             `json:"status,omitempty" enum:"ok,error" doc:"Default ok (error when error is set)."`
	StartedAt   *domain.Time       `json:"started_at" doc:"RFC 3339; required."`
	EndedAt     *domain.Time       `json:"ended_at,omitempty" doc:"RFC 3339; not before started_at."`
	Model       *string            `json:"model,omitempty" maxLength:"200"`
	Provider    *string            `json:"provider,omitempty" maxLength:"200"`
	Input       json.RawMessage    `json:"input,omitempty" doc:"Any JSON; kept up to 32 KiB."`
	Output      json.RawMessage    `json:"output,omitempty" doc:"Any JSON; kept up to 32 KiB."`
	Error       *string            `json:"error,omitempty"`
	TokenUsage  *domain.TokenUsage `json:"token_usage,omitempty" doc:"prompt_tokens and completion_tokens (total_tokens is derived)."`
	Cost        *float64           `json:"cost,omitempty" doc:"USD; default: the model catalog's price of token_usage when model is known."`
	Attributes  map[string]any     `json:"attributes,omitempty"`
	ServiceName *string            `json:"service_name,omitempty" maxLength:"200"`
	AgentID     *string            `json:"agent_id,omitempty" maxLength:"200" doc:"Sets the trace's agent_id."`
	SessionID   *string            `json:"session_id,omitempty" maxLength:"200" doc:"Sets the trace's session_id."`
	EndUserID   *string            `json:"end_user_id,omitempty" maxLength:"200" doc:"Sets the trace's end_user_id."`
}

// ingestRequest documents the body of POST /traces/ingest (the handler decodes each span on
// its own, so that a malformed one is rejected alone).
type ingestRequest struct {
	Spans []ingestSpan `json:"spans" doc:"1 to 10,000 spans of any number of traces."`
}

// ingestError names one rejected span.
type ingestError struct {
	Index   int    `json:"index" doc:"The span's position in the request (0-based)."`
	ID      string `json:"id"`
	TraceID string `json:"trace_id"`
	Message string `json:"message"`
}

// ingestResult is the answer of POST /traces/ingest.
type ingestResult struct {
	Accepted int           `json:"accepted" doc:"Spans stored."`
	Rejected int           `json:"rejected" doc:"Spans refused."`
	Errors   []ingestError `json:"errors" doc:"Why spans were refused (the first 100)."`
}

// otlpResponseDoc documents the JSON form of the OTLP answer.
type otlpResponseDoc struct {
	PartialSuccess *otlpPartialSuccess `json:"partialSuccess,omitempty" doc:"Counts and explains the rejected spans (empty when none was)."`
}

type otlpPartialSuccess struct {
	RejectedSpans string `json:"rejectedSpans,omitempty" doc:"How many spans were rejected (an int64, written as a string in OTLP JSON)."`
	ErrorMessage  string `json:"errorMessage,omitempty" doc:"Names the first rejected spans and why."`
}

// readIngestBody reads a body of at most maxIngestBytes, inflating gzip (also bounded),
// and returns it with its media type, which must be one of types (415 otherwise).
func readIngestBody(w http.ResponseWriter, r *http.Request, types ...string) ([]byte, string, error) {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if ct == "" {
		mt, err = types[0], nil
	}
	known := false
	for _, t := range types {
		known = known || mt == t
	}
	if err != nil || !known {
		return nil, "", errorf(http.StatusUnsupportedMediaType, "Content-Type must be %s, got %q", strings.Join(types, " or "), ct)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return nil, "", errorf(http.StatusUnsupportedMediaType, "Content-Type charset must be utf-8 (or absent), got %q", cs)
	}
	tooLarge := errorf(http.StatusRequestEntityTooLarge, "request body exceeds %d bytes", maxIngestBytes)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxIngestBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, "", tooLarge
		}
		return nil, "", badRequest("could not read the request body")
	}
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, "", badRequest("request body is not valid gzip: %v", err)
		}
		inflated, err := io.ReadAll(io.LimitReader(zr, maxIngestBytes+1))
		if err != nil {
			return nil, "", badRequest("request body is not valid gzip: %v", err)
		}
		if len(inflated) > maxIngestBytes {
			return nil, "", errorf(http.StatusRequestEntityTooLarge, "request body exceeds %d bytes once inflated", maxIngestBytes)
		}
		body = inflated
	default:
		return nil, "", errorf(http.StatusUnsupportedMediaType, "Content-Encoding must be gzip or absent, got %q", enc)
	}
	return body, mt, nil
}

// validSpanID reports whether an SDK id is 1 to maxIngestIDLen letters, digits, '-', '_',
// '.' or ':' (OTLP's hex ids, KSUIDs and UUIDs fit; every id can be a path segment).
func validSpanID(id string) bool {
	if id == "" || len(id) > maxIngestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// checkSpan applies the rules every ingested span follows; "" when it is valid.
func checkSpan(sp *domain.Span) string {
	switch {
	case !validSpanID(sp.TraceID):
		return "trace_id must be 1 to 128 letters, digits, '-', '_', '.' or ':'"
	case !validSpanID(sp.ID):
		return "id must be 1 to 128 letters, digits, '-', '_', '.' or ':'"
	case sp.ParentID != nil && !validSpanID(*sp.ParentID):
		return "parent_id must be 1 to 128 letters, digits, '-', '_', '.' or ':'"
	case strings.TrimSpace(sp.Name) == "":
		return "name is required"
	case utf8.RuneCountInString(sp.Name) > maxIngestName:
		return "name must be at most 1000 characters"
	case sp.StartedAt.IsZero():
		return "started_at is required"
	case sp.EndedAt != nil && sp.EndedAt.Before(sp.StartedAt.Time):
		return "ended_at is before started_at"
	case sp.TokenUsage.PromptTokens < 0 || sp.TokenUsage.CompletionTokens < 0:
		return "token_usage must not be negative"
	case sp.Cost < 0:
		return "cost must not be negative"
	}
	return ""
}

// pricer prices model calls at the catalog's (or the workspace's) per-million-token prices,
// looking each model up once per request.
type pricer struct {
	st     *store.Store
	ws     string
	models map[string]*domain.LLMModel
}

// fill sets a model call's cost (unless given) and provider (unless given) from the entry of
// its model.
func (p *pricer) fill(ctx context.Context, sp *domain.Span, costGiven bool) error {
	if sp.Model == nil {
		return nil
	}
	m, err := p.model(ctx, *sp.Model)
	if err != nil || m == nil {
		return err
	}
	if !costGiven {
		u := sp.TokenUsage
		sp.Cost = (float64(u.PromptTokens)*m.InputPricePerMillion + float64(u.CompletionTokens)*m.OutputPricePerMillion) / 1e6
	}
	if sp.Provider == nil && m.Provider != "" {
		provider := m.Provider
		sp.Provider = &provider
	}
	return nil
}

// model is the catalog's or the workspace's entry of a model id, nil for an unknown one.
func (p *pricer) model(ctx context.Context, model string) (*domain.LLMModel, error) {
	m, ok := p.models[model]
	if !ok {
		var err error
		if m, err = p.st.LLMModelGet(ctx, p.ws, model); err != nil && !store.IsNotFound(err) {
			return nil, err
		}
		if p.models == nil {
			p.models = map[string]*domain.LLMModel{}
		}
		p.models[model] = m
	}
	return m, nil
}

func (s *Server) ingestSpans(w http.ResponseWriter, r *http.Request) error {
	body, _, err := readIngestBody(w, r, "application/json")
	if err != nil {
		return err
	}
	var req struct {
		Spans []json.RawMessage `json:"spans"`
	}
	if err := decodeBytes(body, &req); err != nil {
		return err
	}
	if len(req.Spans) == 0 {
		return domain.Invalid("spans", "must hold at least one span")
	}
	if len(req.Spans) > maxIngestSpans {
		return errorf(http.StatusRequestEntityTooLarge, "spans: at most %d spans per request, got %d", maxIngestSpans, len(req.Spans))
	}
	ws := s.workspace(r)
	res := ingestResult{Errors: []ingestError{}}
	reject := func(i int, id, trace, msg string) {
		res.Rejected++
		if len(res.Errors) < maxIngestErrors {
			res.Errors = append(res.Errors, ingestError{Index: i, ID: id, TraceID: trace, Message: msg})
		}
	}
	prices := &pricer{st: s.store, ws: ws}
	spans := make([]*domain.Span, 0, len(req.Spans))
	for i, raw := range req.Spans {
		var in ingestSpan
		if err := json.Unmarshal(raw, &in); err != nil {
			reject(i, "", "", "not a span object: "+jsonError(err).Error())
			continue
		}
		sp, msg := in.span(ws)
		if msg == "" {
			msg = checkSpan(sp)
		}
		if msg != "" {
			reject(i, in.ID, in.TraceID, msg)
			continue
		}
		if err := prices.fill(r.Context(), sp, in.Cost != nil); err != nil {
			return err
		}
		spans = append(spans, sp)
	}
	if err := s.store.SpanIngest(r.Context(), ws, spans); err != nil {
		return err
	}
	res.Accepted = len(spans)
	s.metrics.IngestSpans(metrics.IngestSDK, res.Accepted, res.Rejected)
	writeData(w, http.StatusOK, res)
	return nil
}

// span turns an SDK span into a stored one; a message when a field is invalid.
func (in *ingestSpan) span(ws string) (*domain.Span, string) {
	sp := &domain.Span{ID: in.ID, TraceID: in.TraceID, WorkspaceID: ws, ParentID: in.ParentID, Name: in.Name, Kind: in.Kind,
		Status: in.Status, Model: in.Model, Provider: in.Provider, Input: in.Input, Output: in.Output, Error: in.Error,
		Attributes: domain.JSONObject(in.Attributes), ServiceName: in.ServiceName, EndedAt: in.EndedAt}
	if in.StartedAt != nil {
		sp.StartedAt = *in.StartedAt
	}
	if in.TokenUsage != nil {
		sp.TokenUsage = domain.TokenUsage{PromptTokens: in.TokenUsage.PromptTokens, CompletionTokens: in.TokenUsage.CompletionTokens,
			TotalTokens: in.TokenUsage.PromptTokens + in.TokenUsage.CompletionTokens}
	}
	if in.Cost != nil {
		sp.Cost = *in.Cost
	}
	if sp.Kind == "" {
		sp.Kind = "span"
		if sp.Model != nil {
			sp.Kind = "llm"
		}
	}
	if err := domain.OneOf("kind", sp.Kind, domain.SpanKinds); err != nil {
		return nil, err.Error()
	}
	if sp.Status == "" {
		sp.Status = "ok"
		if sp.Error != nil {
			sp.Status = "error"
		}
	}
	if err := domain.OneOf("status", sp.Status, domain.SpanStatuses); err != nil {
		return nil, err.Error()
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"model", in.Model}, {"provider", in.Provider}, {"service_name", in.ServiceName}, {"agent_id", in.AgentID},
		{"session_id", in.SessionID}, {"end_user_id", in.EndUserID}} {
		if f.v != nil && utf8.RuneCountInString(*f.v) > 200 {
			return nil, f.name + " must be at most 200 characters"
		}
	}
	sp.TraceAgentID, sp.TraceSessionID, sp.TraceEndUserID = domain.Deref(in.AgentID), domain.Deref(in.SessionID), domain.Deref(in.EndUserID)
	if sp.Attributes == nil {
		sp.Attributes = domain.JSONObject{}
	}
	return sp, ""
}

// exportOTLP is the OTLP/HTTP traces receiver.
func (s *Server) exportOTLP(w http.ResponseWriter, r *http.Request) error {
	body, mt, err := readIngestBody(w, r, "application/x-protobuf", "application/json")
	if err != nil {
		return err
	}
	req := ptraceotlp.NewExportRequest()
	if mt == "application/json" {
		err = req.UnmarshalJSON(body)
	} else {
		err = req.UnmarshalProto(body)
	}
	if err != nil {
		return badRequest("the body is not an OTLP ExportTraceServiceRequest in %s: %v", mt, err)
	}
	td := req.Traces()
	if n := td.SpanCount(); n > maxIngestSpans {
		return errorf(http.StatusRequestEntityTooLarge, "at most %d spans per request, got %d", maxIngestSpans, n)
	}
	ws := s.workspace(r)
	spans, rejected, msgs, err := otlpSpans(r.Context(), td, ws, &pricer{st: s.store, ws: ws})
	if err != nil {
		return err
	}
	if err := s.store.SpanIngest(r.Context(), ws, spans); err != nil {
		return err
	}
	s.metrics.IngestSpans(metrics.IngestOTLP, len(spans), rejected)
	resp := ptraceotlp.NewExportResponse()
	if rejected > 0 {
		ps := resp.PartialSuccess()
		ps.SetRejectedSpans(int64(rejected))
		ps.SetErrorMessage(fmt.Sprintf("%d of %d spans rejected: %s", rejected, rejected+len(spans), strings.Join(msgs, "; ")))
	}
	var out []byte
	if mt == "application/json" {
		out, err = resp.MarshalJSON()
	} else {
		out, err = resp.MarshalProto()
	}
	if err != nil {
		return fmt.Errorf("encode OTLP response: %w", err)
	}
	w.Header().Set("Content-Type", mt)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
	return nil
}

// maxOTLPMessages bounds how many rejected spans the partial_success message names.
const maxOTLPMessages = 10

// otlpSpans maps OTLP spans onto stored ones (GenAI semantic conventions onto their fields)
// and rejects the invalid ones, with a message for each of the first few.
func otlpSpans(ctx context.Context, td ptrace.Traces, ws string, prices *pricer) ([]*domain.Span, int, []string, error) {
	spans := make([]*domain.Span, 0, td.SpanCount())
	rejected := 0
	var msgs []string
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		var service *string
		if v, ok := rs.Resource().Attributes().Get("service.name"); ok && cleanText(v.AsString()) != "" {
			svc := cleanText(v.AsString())
			service = &svc
		}
		sss := rs.ScopeSpans()
		for j := range sss.Len() {
			ss := sss.At(j)
			scope := ss.Scope().Name()
			sl := ss.Spans()
			for k := range sl.Len() {
				sp, msg := otlpSpan(sl.At(k), ws, service, scope)
				if msg != "" {
					rejected++
					if len(msgs) < maxOTLPMessages {
						msgs = append(msgs, msg)
					}
					continue
				}
				if err := prices.fill(ctx, sp, false); err != nil {
					return nil, 0, nil, err
				}
				spans = append(spans, sp)
			}
		}
	}
	return spans, rejected, msgs, nil
}

// genAIKinds maps gen_ai.operation.name onto span kinds.
var genAIKinds = map[string]string{
	"chat": "llm", "text_completion": "llm", "generate_content": "llm", "embeddings": "embedding",
	"execute_tool": "tool", "invoke_agent": "agent", "create_agent": "agent",
}

func otlpSpan(o ptrace.Span, ws string, service *string, scope string) (*domain.Span, string) {
	tid, sid := o.TraceID(), o.SpanID()
	ids := fmt.Sprintf("span %s of trace %s", sid, tid)
	switch {
	case tid.IsEmpty():
		return nil, fmt.Sprintf("span %s: trace_id is empty or all zero", sid)
	case sid.IsEmpty():
		return nil, fmt.Sprintf("a span of trace %s: span_id is empty or all zero", tid)
	case strings.TrimSpace(o.Name()) == "":
		return nil, ids + ": name is empty"
	case o.StartTimestamp() == 0:
		return nil, ids + ": start_time_unix_nano is missing"
	case o.EndTimestamp() < o.StartTimestamp():
		return nil, ids + ": end_time_unix_nano is before start_time_unix_nano"
	case utf8.RuneCountInString(o.Name()) > maxIngestName:
		return nil, ids + ": name is over 1000 characters"
	}
	sp := &domain.Span{ID: sid.String(), TraceID: tid.String(), WorkspaceID: ws, Name: cleanText(o.Name()), Kind: "span", Status: "ok",
		StartedAt: otlpTime(o.StartTimestamp()), ServiceName: service}
	attrs := attrWriter{buf: make([]byte, 0, 256)}
	attrs.buf = append(attrs.buf, '{')
	end := otlpTime(o.EndTimestamp())
	sp.EndedAt = &end
	if p := o.ParentSpanID(); !p.IsEmpty() {
		ps := p.String()
		sp.ParentID = &ps
	}
	if st := o.Status(); st.Code() == ptrace.StatusCodeError {
		sp.Status = "error"
		msg := cleanText(st.Message())
		if msg == "" {
			msg = "error"
		}
		sp.Error = &msg
	}
	if k := o.Kind(); k != ptrace.SpanKindUnspecified {
		attrs.str("otel.span_kind", strings.ToLower(k.String()))
	}
	if scope != "" {
		attrs.str("otel.scope.name", scope)
	}
	var op string
	var requestModel, responseModel, system, providerName string
	for key, v := range o.Attributes().All() {
		switch key {
		case "gen_ai.request.model":
			requestModel = cleanText(v.AsString())
		case "gen_ai.response.model":
			responseModel = cleanText(v.AsString())
		case "gen_ai.system":
			system = cleanText(v.AsString())
		case "gen_ai.provider.name":
			providerName = cleanText(v.AsString())
		case "gen_ai.operation.name":
			op = v.AsString()
		case "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens":
			sp.TokenUsage.PromptTokens = int(otlpInt(v))
		case "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens":
			sp.TokenUsage.CompletionTokens = int(otlpInt(v))
		case "gen_ai.input.messages", "gen_ai.prompt", "input.value":
			sp.Input = otlpJSON(v)
			continue // kept as the span's input, not twice
		case "gen_ai.output.messages", "gen_ai.completion", "output.value":
			sp.Output = otlpJSON(v)
			continue
		case "session.id", "gen_ai.conversation.id":
			sp.TraceSessionID = cleanText(v.AsString())
		case "user.id", "enduser.id":
			sp.TraceEndUserID = cleanText(v.AsString())
		case "gen_ai.agent.id":
			sp.TraceAgentID = cleanText(v.AsString())
		}
		attrs.value(key, v)
	}
	if exc := otlpEvents(&attrs, o.Events(), o.DroppedEventsCount()); exc != "" && sp.Status == "error" && (sp.Error == nil || *sp.Error == "error") {
		sp.Error = &exc // an error status without a message: the recorded exception says what failed
	}
	otlpLinks(&attrs, o.Links())
	sp.AttributesJSON = string(append(attrs.buf, '}'))
	if sp.TokenUsage.PromptTokens < 0 || sp.TokenUsage.CompletionTokens < 0 {
		return nil, ids + ": gen_ai.usage token counts must not be negative"
	}
	sp.TokenUsage.TotalTokens = sp.TokenUsage.PromptTokens + sp.TokenUsage.CompletionTokens
	if m := firstNonEmpty(responseModel, requestModel); m != "" {
		sp.Model = &m
		sp.Kind = "llm"
	}
	if p := firstNonEmpty(providerName, system); p != "" {
		sp.Provider = &p
	}
	if k, ok := genAIKinds[op]; ok {
		sp.Kind = k
	}
	return sp, ""
}

// otlpEvents writes a span's events as the attribute otel.events, in order: [{name, time
// (RFC 3339, UTC, nanoseconds), attributes}] (span.RecordError's exception events among
// them, with their exception.type, exception.message and exception.stacktrace), and the
// count the sender dropped as otel.dropped_events. It returns the message of the last
// exception event ("type: message" when both are set), "" when there is none.
func otlpEvents(w *attrWriter, evs ptrace.SpanEventSlice, dropped uint32) string {
	var exc string
	w.array("otel.events", evs.Len(), func(i int, o *attrWriter) {
		ev := evs.At(i)
		o.str("name", cleanText(ev.Name()))
		o.str("time", ev.Timestamp().AsTime().UTC().Format(time.RFC3339Nano))
		o.attrs("attributes", ev.Attributes())
		if n := ev.DroppedAttributesCount(); n > 0 {
			o.key("dropped_attributes")
			o.buf = strconv.AppendUint(o.buf, uint64(n), 10)
		}
		if ev.Name() != "exception" {
			return
		}
		var parts []string
		for _, k := range []string{"exception.type", "exception.message"} {
			if v, ok := ev.Attributes().Get(k); ok && v.AsString() != "" {
				parts = append(parts, cleanText(v.AsString()))
			}
		}
		if len(parts) > 0 {
			exc = strings.Join(parts, ": ")
		}
	})
	if dropped > 0 {
		w.key("otel.dropped_events")
		w.buf = strconv.AppendUint(w.buf, uint64(dropped), 10)
	}
	return exc
}

// otlpLinks writes a span's links as the attribute otel.links: [{trace_id, span_id,
// attributes}], the spans it is causally related to outside its parent (a batch job's
// inputs, say).
func otlpLinks(w *attrWriter, links ptrace.SpanLinkSlice) {
	w.array("otel.links", links.Len(), func(i int, o *attrWriter) {
		l := links.At(i)
		o.str("trace_id", l.TraceID().String())
		o.str("span_id", l.SpanID().String())
		o.attrs("attributes", l.Attributes())
	})
}

// cleanText makes an OTLP string storable as text in both dialects: valid UTF-8 (protobuf
// does not check it) without NUL (PostgreSQL's text cannot hold it).
func cleanText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

// attrWriter writes a span's attributes as a JSON object, straight from OTLP's values (the
// common scalars without encoding/json's reflection): what JSON cannot hold (NaN, infinities)
// becomes its string form, invalid UTF-8 becomes U+FFFD.
type attrWriter struct {
	buf []byte
	n   int
}

func (w *attrWriter) key(k string) {
	if w.n > 0 {
		w.buf = append(w.buf, ',')
	}
	w.n++
	w.buf = appendJSONString(w.buf, k)
	w.buf = append(w.buf, ':')
}

// array writes the member k as an array of n objects, the members of the i-th written by
// fill; nothing when n is 0.
func (w *attrWriter) array(k string, n int, fill func(i int, o *attrWriter)) {
	if n == 0 {
		return
	}
	w.key(k)
	w.buf = append(w.buf, '[')
	for i := range n {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		o := attrWriter{buf: append(w.buf, '{')}
		fill(i, &o)
		w.buf = append(o.buf, '}')
	}
	w.buf = append(w.buf, ']')
}

// attrs writes the attribute map m as the object member k.
func (w *attrWriter) attrs(k string, m pcommon.Map) {
	w.key(k)
	o := attrWriter{buf: append(w.buf, '{')}
	for k, v := range m.All() {
		o.value(k, v)
	}
	w.buf = append(o.buf, '}')
}

func (w *attrWriter) str(k, v string) {
	w.key(k)
	w.buf = appendJSONString(w.buf, v)
}

func (w *attrWriter) value(k string, v pcommon.Value) {
	w.key(k)
	switch v.Type() {
	case pcommon.ValueTypeStr:
		w.buf = appendJSONString(w.buf, v.Str())
	case pcommon.ValueTypeInt:
		w.buf = strconv.AppendInt(w.buf, v.Int(), 10)
	case pcommon.ValueTypeBool:
		w.buf = strconv.AppendBool(w.buf, v.Bool())
	case pcommon.ValueTypeDouble:
		if f := v.Double(); math.IsNaN(f) || math.IsInf(f, 0) {
			w.buf = appendJSONString(w.buf, v.AsString())
		} else {
			w.buf = strconv.AppendFloat(w.buf, f, 'g', -1, 64)
		}
	case pcommon.ValueTypeEmpty:
		w.buf = append(w.buf, "null"...)
	default: // maps, slices, bytes
		b, err := json.Marshal(v.AsRaw())
		if err != nil { // NaN somewhere inside: OTLP's own JSON form, as a string
			b, _ = json.Marshal(v.AsString())
		}
		w.buf = append(w.buf, b...)
	}
}

// appendJSONString appends s as a JSON string (encoding/json's escaping: control characters
// escaped, invalid UTF-8 as U+FFFD).
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func otlpTime(ts pcommon.Timestamp) domain.Time {
	return domain.Time{Time: ts.AsTime().UTC().Truncate(time.Millisecond)}
}

func otlpInt(v pcommon.Value) int64 {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int()
	case pcommon.ValueTypeDouble:
		return int64(v.Double())
	case pcommon.ValueTypeStr:
		var n int64
		_, _ = fmt.Sscan(v.Str(), &n)
		return n
	}
	return 0
}

// otlpJSON keeps an attribute as JSON: a string holding JSON as that JSON, any other value as
// its JSON form.
func otlpJSON(v pcommon.Value) json.RawMessage {
	if v.Type() == pcommon.ValueTypeStr {
		s := v.Str()
		if t := strings.TrimSpace(s); t != "" && (t[0] == '{' || t[0] == '[') && utf8.ValidString(t) && json.Valid([]byte(t)) {
			return json.RawMessage(t)
		}
		b, _ := json.Marshal(s)
		return b
	}
	b, err := json.Marshal(v.AsRaw())
	if err != nil {
		return nil
	}
	return b
}
