package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/experiment"
	"github.com/agentplane/agentplane/internal/store"
)

// Bounds of an experiment request.
const (
	defaultExperimentConcurrency = 4
	maxExperimentItems           = 10_000
	maxCompared                  = 5
)

type experimentCreateRequest struct {
	DatasetID    string         `json:"dataset_id" minLength:"1" pattern:"\\S" doc:"The dataset whose items run."`
	AgentID      string         `json:"agent_id" minLength:"1" pattern:"\\S" doc:"The agent to run."`
	VersionID    string         `json:"version_id,omitempty" doc:"The agent version to run; default: the active one (recorded)."`
	EvaluatorIDs []string       `json:"evaluator_ids,omitempty" maxItems:"20" doc:"Evaluators that score every completed run."`
	Concurrency  int            `json:"concurrency,omitempty" minimum:"0" maximum:"64" doc:"Items run at once (default 4, at most 64)."`
	Name         string         `json:"name,omitempty" maxLength:"200"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

func (s *Server) experimentRoutes() []route {
	const tag = "Experiments"
	id := v1 + "/experiments/{id}"
	return []route{
		{method: "GET", path: v1 + "/experiments", op: "listExperiments", tag: tag, scope: "datasets:read", summary: "List experiments",
			list: true,
			params: []param{{name: "dataset_id", typ: "string", desc: "Only experiments on this dataset."}, {name: "agent_id", typ: "string", desc: "Only experiments of this agent."},
				{name: "status", typ: "string", desc: "Only experiments of this status.", enum: []string{domain.ExperimentPending, domain.ExperimentRunning,
					domain.ExperimentCompleted, domain.ExperimentFailed, domain.ExperimentCancelled}}},
			resp: domain.Experiment{}, h: s.listExperiments},
		{method: "POST", path: v1 + "/experiments", op: "createExperiment", tag: tag, scope: "agents:execute", also: "datasets:read", summary: "Start an experiment",
			body: experimentCreateRequest{}, resp: domain.Experiment{}, status: http.StatusAccepted, creates: true, errs: []int{http.StatusConflict}, h: s.createExperiment},
		{method: "GET", path: v1 + "/experiments/compare", op: "compareExperiments", tag: tag, scope: "datasets:read", summary: "Compare experiments",
			params: []param{{name: "ids", typ: "string", desc: "Two to five experiment ids, comma-separated."}},
			resp:   experiment.Comparison{}, errs: []int{http.StatusBadRequest, http.StatusNotFound}, h: s.compareExperiments},
		{method: "GET", path: id, op: "getExperiment", tag: tag, scope: "datasets:read", summary: "Get an experiment",
			resp: domain.Experiment{}, nocache: true, h: s.getExperiment},
		{method: "POST", path: id + "/cancel", op: "cancelExperiment", tag: tag, scope: "agents:execute", also: "datasets:read", summary: "Cancel an experiment",
			resp: domain.Experiment{}, errs: []int{http.StatusConflict}, h: s.cancelExperiment},
		{method: "GET", path: id + "/results", op: "listExperimentResults", tag: tag, scope: "datasets:read", summary: "List an experiment's results",
			list: true, resp: domain.ExperimentItem{}, nocache: true, h: s.listExperimentResults},
		{method: "GET", path: id + "/stream", op: "streamExperiment", tag: tag, scope: "datasets:read", sse: true, summary: "Stream an experiment's progress (SSE)",
			params: []param{{name: "last_event_id", typ: "integer", desc: "Same as the Last-Event-ID header."}}, errs: []int{http.StatusBadRequest}, h: s.streamExperimentRoute},
	}
}

func (s *Server) listExperiments(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	// status is one of the route's documented values: the route table checks it.
	f := domain.ExperimentFilter{DatasetID: q.Get("dataset_id"), AgentID: q.Get("agent_id"), Status: q.Get("status")}
	items, total, err := s.store.ExperimentList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) createExperiment(w http.ResponseWriter, r *http.Request) error {
	var req experimentCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	x, items, err := s.newExperiment(r, req)
	if err != nil {
		return err
	}
	created, err := s.store.ExperimentCreate(r.Context(), x, items)
	if err != nil {
		return err
	}
	if s.cfg.Experiments != nil {
		s.cfg.Experiments.Wake()
	}
	writeData(w, http.StatusAccepted, created)
	return nil
}

// newExperiment checks what a request names and returns the experiment and its items.
func (s *Server) newExperiment(r *http.Request, req experimentCreateRequest) (*domain.Experiment, []*domain.DatasetItem, error) {
	ctx, ws := r.Context(), s.workspace(r)
	// The document bounds concurrency (0 to 64) and evaluator_ids (at most 20), the names
	// (not blank, at most 200 characters): the body is checked against it before this runs.
	if req.Concurrency == 0 {
		req.Concurrency = defaultExperimentConcurrency
	}
	d, err := s.store.DatasetGet(ctx, ws, req.DatasetID)
	if err != nil {
		return nil, nil, referenced("dataset_id", "dataset", req.DatasetID, err)
	}
	a, err := s.store.AgentGet(ctx, ws, req.AgentID)
	if err != nil {
		return nil, nil, referenced("agent_id", "agent", req.AgentID, err)
	}
	versionID := req.VersionID
	if versionID == "" {
		if a.ActiveVersionID == nil {
			return nil, nil, conflict("agent %s has no active version; create and promote one, or give version_id", a.ID)
		}
		versionID = *a.ActiveVersionID
	} else if _, err := s.store.AgentVersionGet(ctx, ws, a.ID, versionID); err != nil {
		return nil, nil, referenced("version_id", "agent version", versionID, err)
	}
	seen := map[string]bool{}
	for i, id := range req.EvaluatorIDs {
		if seen[id] {
			return nil, nil, domain.Invalid(fmt.Sprintf("evaluator_ids[%d]", i), "evaluator %s is listed twice", id)
		}
		seen[id] = true
		if _, err := s.store.EvaluatorGet(ctx, ws, id); err != nil {
			return nil, nil, referenced(fmt.Sprintf("evaluator_ids[%d]", i), "evaluator", id, err)
		}
	}
	items, err := s.store.DatasetItemsAll(ctx, ws, d.ID)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case len(items) == 0:
		return nil, nil, conflict("dataset %s has no items: add some first", d.ID)
	case len(items) > maxExperimentItems:
		return nil, nil, domain.Invalid("dataset_id", "dataset %s has %d items; an experiment runs at most %d", d.ID, len(items), maxExperimentItems)
	}
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = fmt.Sprintf("%s on %s", a.Name, d.Name)
	}
	return &domain.Experiment{WorkspaceID: ws, Name: name, DatasetID: d.ID, DatasetVersion: d.Version, AgentID: a.ID, VersionID: versionID,
		EvaluatorIDs: domain.Strings(req.EvaluatorIDs), Concurrency: req.Concurrency, Metadata: req.Metadata}, items, nil
}

// referenced turns the not-found of a resource a request names into a 422 naming the field.
func referenced(field, resource, id string, err error) error {
	if store.IsNotFound(err) {
		return &store.ReferenceError{Field: field, Resource: resource, ID: id}
	}
	return err
}

func (s *Server) getExperiment(w http.ResponseWriter, r *http.Request) error {
	x, err := s.store.ExperimentGet(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	items, err := s.store.ExperimentItems(r.Context(), x.ID, domain.Page{})
	if err != nil {
		return err
	}
	x.Summary = experiment.Summarize(items)
	writeData(w, http.StatusOK, x)
	return nil
}

func (s *Server) cancelExperiment(w http.ResponseWriter, r *http.Request) error {
	x, running, err := s.store.ExperimentCancel(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	for _, id := range running {
		// A run that ended meanwhile is fine as it is.
		if _, err := s.engine.Cancel(r.Context(), x.WorkspaceID, id); err != nil && !isTransitionErr(err) && !store.IsNotFound(err) {
			return err
		}
	}
	writeData(w, http.StatusOK, x)
	return nil
}

func isTransitionErr(err error) bool {
	var te *store.TransitionError
	return errors.As(err, &te)
}

func (s *Server) listExperimentResults(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	x, err := s.store.ExperimentGet(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	p.After = nil // rows are in dataset order: a cursor opens a page by number
	items, err := s.store.ExperimentItems(r.Context(), x.ID, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, x.Progress.Total)
	return nil
}

func (s *Server) compareExperiments(w http.ResponseWriter, r *http.Request) error {
	raw := strings.TrimSpace(r.URL.Query().Get("ids"))
	ids := strings.Split(raw, ",")
	if raw == "" || len(ids) < 2 || len(ids) > maxCompared {
		return badRequest("ids must list two to %d experiment ids, comma-separated, got %q", maxCompared, raw)
	}
	xs := make([]*domain.Experiment, len(ids))
	items := make([][]*domain.ExperimentItem, len(ids))
	for i, id := range ids {
		x, err := s.store.ExperimentGet(r.Context(), s.workspace(r), strings.TrimSpace(id))
		if err != nil {
			return err
		}
		if items[i], err = s.store.ExperimentItems(r.Context(), x.ID, domain.Page{}); err != nil {
			return err
		}
		x.Summary = experiment.Summarize(items[i])
		xs[i] = x
	}
	writeData(w, http.StatusOK, experiment.Compare(xs, items))
	return nil
}
