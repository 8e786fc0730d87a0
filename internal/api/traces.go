package api

import (
	"net/http"

	"github.com/agentplane/agentplane/internal/store"
)

func (s *Server) traceRoutes() []route {
	const tag = "Traces"
	return []route{
		{method: "GET", path: v1 + "/traces", op: "listTraces", tag: tag, scope: "traces:read", summary: "List traces, newest first", desc: "The workspace's traces, newest first, with their totals (tokens, cost, duration) but without spans. Filter by `agent_id`, `execution_id` or `session_id`.", list: true,
			params: []param{{name: "agent_id", typ: "string"}, {name: "execution_id", typ: "string"}, {name: "session_id", typ: "string"}},
			resp:   store.Trace{}, h: s.listTraces},
		{method: "GET", path: v1 + "/traces/{id}", op: "getTrace", tag: tag, scope: "traces:read", summary: "Get a trace with its spans", desc: "One trace with its spans ordered by start time: prompt rendering, history trimming, each model call, tool call, guardrail check, sub-agent and approval wait.",
			resp: store.Trace{}, h: s.getTrace},
	}
}

func (s *Server) listTraces(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	items, total, err := s.store.TraceList(r.Context(), s.workspace(r), store.TraceFilter{AgentID: q.Get("agent_id"),
		ExecutionID: q.Get("execution_id"), SessionID: q.Get("session_id")}, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) getTrace(w http.ResponseWriter, r *http.Request) error {
	t, err := s.store.TraceGet(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	if t.Spans == nil {
		t.Spans = []*store.Span{}
	}
	writeData(w, http.StatusOK, t)
	return nil
}
