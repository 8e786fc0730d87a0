package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// annotationClaimTTL is how long POST /annotation-queues/{id}/next holds an item for its
// reviewer.
const annotationClaimTTL = 10 * time.Minute

// AnnotationItemsAdded is the answer of POST /annotation-queues/{id}/items.
type AnnotationItemsAdded struct {
	Added   []*domain.AnnotationItem `json:"added" doc:"The items made, in the order of execution_ids."`
	Skipped int                      `json:"skipped" doc:"Executions that were in the queue already."`
}

// AnnotationClaim is the answer of POST /annotation-queues/{id}/next.
type AnnotationClaim struct {
	Item      *domain.AnnotationItem  `json:"item" doc:"The item claimed for the caller for 10 minutes; null when none is left to claim."`
	Execution *domain.Execution       `json:"execution" doc:"The item's execution to review (input, output, agent, status); null with item."`
	Queue     *domain.AnnotationQueue `json:"queue" doc:"The queue, with its score configs and counts."`
}

// AnnotationCompleted is the answer of POST /annotation-queues/{id}/items/{item_id}/complete.
type AnnotationCompleted struct {
	Item   *domain.AnnotationItem `json:"item"`
	Scores []*domain.Score        `json:"scores" doc:"The scores written (source annotation, on the item's execution)."`
}

func (s *Server) annotationRoutes() []route {
	const tag = "Annotation queues"
	q := v1 + "/annotation-queues"
	return []route{
		{method: "GET", path: q, op: "listAnnotationQueues", tag: tag, scope: "scores:read", summary: "List annotation queues, newest first",
			list: true,
			resp: domain.AnnotationQueue{}, h: s.listAnnotationQueues},
		{method: "POST", path: q, op: "createAnnotationQueue", tag: tag, scope: "scores:write", summary: "Create an annotation queue",
			body: domain.AnnotationQueueCreateRequest{}, resp: domain.AnnotationQueue{}, status: http.StatusCreated, creates: true, errs: []int{http.StatusConflict}, h: s.createAnnotationQueue},
		{method: "GET", path: q + "/{id}", op: "getAnnotationQueue", tag: tag, scope: "scores:read", summary: "Get an annotation queue",
			resp: domain.AnnotationQueue{}, h: byID(s, s.store.AnnotationQueueGet)},
		{method: "PATCH", path: q + "/{id}", op: "updateAnnotationQueue", tag: tag, scope: "scores:write", summary: "Update an annotation queue",
			body: domain.AnnotationQueueUpdateRequest{}, resp: domain.AnnotationQueue{},
			errs: []int{http.StatusConflict}, h: s.updateAnnotationQueue},
		{method: "DELETE", path: q + "/{id}", op: "deleteAnnotationQueue", tag: tag, scope: "scores:write", summary: "Delete an annotation queue",
			resp: domain.AnnotationQueue{}, h: byID(s, s.store.AnnotationQueueDelete)},
		{method: "GET", path: q + "/{id}/items", op: "listAnnotationItems", tag: tag, scope: "scores:read", summary: "List a queue's items, newest first",
			list:   true,
			params: []param{{name: "status", typ: "string", desc: "Only items in this state.", enum: domain.AnnotationStatuses}},
			resp:   domain.AnnotationItem{}, h: childListByStatus(s, s.store.AnnotationItemList)},
		{method: "POST", path: q + "/{id}/items", op: "addAnnotationItems", tag: tag, scope: "scores:write", summary: "Add executions to a queue",
			body: domain.AnnotationItemsAddRequest{}, resp: AnnotationItemsAdded{}, status: http.StatusCreated, h: s.addAnnotationItems},
		{method: "GET", path: q + "/{id}/items/{item_id}", op: "getAnnotationItem", tag: tag, scope: "scores:read", summary: "Get a queue item",
			resp: domain.AnnotationItem{}, h: s.getAnnotationItem},
		{method: "POST", path: q + "/{id}/next", op: "claimNextAnnotationItem", tag: tag, scope: "scores:write", summary: "Claim the next item to review",
			resp: AnnotationClaim{}, nocache: true, h: s.claimNextAnnotationItem},
		{method: "POST", path: q + "/{id}/items/{item_id}/complete", op: "completeAnnotationItem", tag: tag, scope: "scores:write", summary: "Complete a review",
			body: domain.AnnotationCompleteRequest{}, resp: AnnotationCompleted{}, errs: []int{http.StatusConflict}, h: s.completeAnnotationItem},
		{method: "GET", path: v1 + "/scores/agreement", op: "scoreAgreement", tag: "Scores", scope: "scores:read", summary: "Agreement of two score names",
			params: []param{{name: "judge", typ: "string", desc: "The first score name, e.g. an LLM judge's.", required: true},
				{name: "human", typ: "string", desc: "The second score name, e.g. the reviewers'.", required: true},
				{name: "created_after", typ: "string", desc: "RFC 3339 time: only scores created after it."},
				{name: "created_before", typ: "string", desc: "RFC 3339 time: only scores created before it."}},
			resp: domain.ScoreAgreement{}, errs: []int{http.StatusUnprocessableEntity}, h: s.scoreAgreement},
	}
}

// reviewer is who a request reviews as: its signed-in user, else its API key; the emulator,
// which has neither, has one reviewer.
func reviewer(r *http.Request) domain.Reviewer {
	if a := scoreAuthor(r); a != nil {
		return domain.Reviewer{ID: a.Type + ":" + a.ID, Name: a.Name}
	}
	return domain.Reviewer{ID: "emulator", Name: "emulator"}
}

func (s *Server) listAnnotationQueues(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	items, total, err := s.store.AnnotationQueueList(r.Context(), s.workspace(r), p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) createAnnotationQueue(w http.ResponseWriter, r *http.Request) error {
	var req domain.AnnotationQueueCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	req.Name = strings.TrimSpace(req.Name)
	q, err := s.store.AnnotationQueueCreate(r.Context(), &domain.AnnotationQueue{WorkspaceID: s.workspace(r), Name: req.Name,
		Description: req.Description, ScoreConfigIDs: req.ScoreConfigIDs})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, q)
	return nil
}

func (s *Server) updateAnnotationQueue(w http.ResponseWriter, r *http.Request) error {
	var req domain.AnnotationQueueUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	p := domain.AnnotationQueuePatch{Description: req.Description}
	if req.Name != nil {
		p.Name = ptr(strings.TrimSpace(*req.Name))
	}
	if req.ScoreConfigIDs != nil {
		p.ScoreConfigIDs = ptr(domain.Strings(*req.ScoreConfigIDs))
	}
	q, err := s.store.AnnotationQueueUpdate(r.Context(), s.workspace(r), pathID(r, "id"), p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, q)
	return nil
}

func (s *Server) addAnnotationItems(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.store.AnnotationQueueGet(r.Context(), s.workspace(r), pathID(r, "id")); err != nil {
		return err // a queue of another workspace is a 404 whatever the body
	}
	var req domain.AnnotationItemsAddRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	added, skipped, err := s.store.AnnotationItemsAdd(r.Context(), s.workspace(r), pathID(r, "id"), req.ExecutionIDs)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, AnnotationItemsAdded{Added: added, Skipped: skipped})
	return nil
}

func (s *Server) getAnnotationItem(w http.ResponseWriter, r *http.Request) error {
	it, err := s.store.AnnotationItemGet(r.Context(), s.workspace(r), pathID(r, "id"), pathID(r, "item_id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, it)
	return nil
}

func (s *Server) claimNextAnnotationItem(w http.ResponseWriter, r *http.Request) error {
	ws, qid := s.workspace(r), pathID(r, "id")
	it, err := s.store.AnnotationNext(r.Context(), ws, qid, reviewer(r), annotationClaimTTL)
	if err != nil {
		return err
	}
	out := AnnotationClaim{Item: it}
	if it != nil {
		if out.Execution, err = s.store.ExecutionGet(r.Context(), ws, it.ExecutionID); err != nil {
			return err
		}
	}
	if out.Queue, err = s.store.AnnotationQueueGet(r.Context(), ws, qid); err != nil {
		return err
	}
	writeData(w, http.StatusOK, out)
	return nil
}

func (s *Server) completeAnnotationItem(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.store.AnnotationItemGet(r.Context(), s.workspace(r), pathID(r, "id"), pathID(r, "item_id")); err != nil {
		return err // an item of another workspace is a 404 whatever the body
	}
	var req domain.AnnotationCompleteRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	scores := make([]*domain.Score, len(req.Scores))
	for i, sc := range req.Scores {
		scores[i] = &domain.Score{ConfigID: ptr(sc.ConfigID), Value: sc.Value, StringValue: sc.StringValue, Comment: sc.Comment,
			Metadata: domain.JSONObject(sc.Metadata)}
	}
	it, written, err := s.store.AnnotationComplete(r.Context(), s.workspace(r), pathID(r, "id"), pathID(r, "item_id"), reviewer(r), scoreAuthor(r), scores)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, AnnotationCompleted{Item: it, Scores: written})
	return nil
}

func (s *Server) scoreAgreement(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	judge, human := strings.TrimSpace(q.Get("judge")), strings.TrimSpace(q.Get("human"))
	if judge == "" || human == "" {
		return badRequest("judge and human are required: the two score names to compare")
	}
	var after, before domain.Time
	if err := createdRange(q, &after, &before); err != nil {
		return err
	}
	a, err := s.store.ScoreAgreementOf(r.Context(), s.workspace(r), judge, human, after, before)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, a)
	return nil
}
