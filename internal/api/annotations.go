package api

import (
	"net/http"
	"strings"

	"github.com/agentplane/agentplane/internal/store"
)

// annotationClaimMS is how long POST /annotation-queues/{id}/next gives a reviewer an item.
const annotationClaimMS = 10 * 60 * 1000

// maxAnnotationItemsPerRequest bounds one POST /annotation-queues/{id}/items.
const maxAnnotationItemsPerRequest = 100

type annotationQueueCreateRequest struct {
	Name           string   `json:"name" maxLength:"200" doc:"Unique in the workspace."`
	Description    string   `json:"description,omitempty" maxLength:"2000"`
	ScoreConfigIDs []string `json:"score_config_ids" doc:"The score configs reviewers score each execution under (at least one, none archived)."`
}

type annotationItemsAddRequest struct {
	ExecutionIDs []string `json:"execution_ids" doc:"Executions of the workspace to review (1 to 100); one already in the queue is skipped."`
}

// AnnotationItemsAdded is the answer to adding executions to a queue.
type AnnotationItemsAdded struct {
	Count int                     `json:"count" doc:"Items added (executions already in the queue are not counted)."`
	Items []*store.AnnotationItem `json:"items"`
}

type annotationScore struct {
	ConfigID    string   `json:"config_id" doc:"One of the queue's score configs."`
	Value       *float64 `json:"value,omitempty"`
	StringValue *string  `json:"string_value,omitempty" maxLength:"200"`
	Comment     string   `json:"comment,omitempty" maxLength:"10000"`
}

type annotationCompleteRequest struct {
	Scores []annotationScore `json:"scores" doc:"The reviewer's scores of the item's execution, each checked against its config as on POST /scores."`
}

// AnnotationCompleted is a completed item with the scores it recorded.
type AnnotationCompleted struct {
	Item   *store.AnnotationItem `json:"item"`
	Scores []*store.Score        `json:"scores"`
}

func (s *Server) annotationRoutes() []route {
	const tag = "Annotation queues"
	q := v1 + "/annotation-queues/{id}"
	return []route{
		{method: "GET", path: v1 + "/annotation-queues", op: "listAnnotationQueues", tag: tag, scope: "scores:read", summary: "List annotation queues",
			desc: "The workspace's annotation queues, newest first.", list: true, resp: store.AnnotationQueue{}, h: s.listAnnotationQueues},
		{method: "POST", path: v1 + "/annotation-queues", op: "createAnnotationQueue", tag: tag, scope: "scores:write", summary: "Create an annotation queue",
			desc: "A queue of executions for people to score under `score_config_ids`. Names are unique in a workspace (409).",
			body: annotationQueueCreateRequest{}, resp: store.AnnotationQueue{}, status: http.StatusCreated, creates: true, h: s.createAnnotationQueue},
		{method: "GET", path: q, op: "getAnnotationQueue", tag: tag, scope: "scores:read", summary: "Get an annotation queue",
			desc: "One annotation queue.", resp: store.AnnotationQueue{}, h: byID(s, s.store.AnnotationQueueGet)},
		{method: "GET", path: q + "/items", op: "listAnnotationItems", tag: tag, scope: "scores:read", summary: "List a queue's items",
			desc: "The queue's items, newest first: `pending`, `claimed` (by `claimed_by` until `claim_expires_at`; shown pending once that passed) or `completed`.",
			list: true, resp: store.AnnotationItem{}, h: childList(s, s.store.AnnotationItemList)},
		{method: "POST", path: q + "/items", op: "addAnnotationItems", tag: tag, scope: "scores:write", summary: "Add executions to a queue",
			desc: "Adds executions of the workspace (1 to 100), all or none: a missing one is a 422 naming its index; one already in the queue is skipped.",
			body: annotationItemsAddRequest{}, resp: AnnotationItemsAdded{}, status: http.StatusCreated, creates: true, h: s.addAnnotationItems},
		{method: "POST", path: q + "/next", op: "claimAnnotationItem", tag: tag, scope: "scores:write", summary: "Claim the next item to review",
			desc: "Gives the caller (its user, or its API key) the oldest item that is pending or whose claim ran out, for 10 minutes; two callers never get the same item. " +
				"204 when nothing is left to review.",
			resp: store.AnnotationItem{}, alsoOK: map[int]any{http.StatusNoContent: nil}, h: s.claimAnnotationItem},
		{method: "POST", path: q + "/items/{item_id}/complete", op: "completeAnnotationItem", tag: tag, scope: "scores:write", summary: "Score a claimed item",
			desc: "Records the caller's scores of the item's execution (source `annotation`, each under one of the queue's score configs and checked like any score) " +
				"and marks the item completed, all or nothing. The item must be claimed by the caller and the claim not run out (409).",
			body: annotationCompleteRequest{}, resp: AnnotationCompleted{}, errs: []int{http.StatusConflict}, h: s.completeAnnotationItem},
	}
}

// reviewer is who a request reviews as: its user, else its API key; "emulator" in the emulator,
// where there are neither.
func reviewer(r *http.Request) string {
	if a := scoreAuthor(r); a != nil {
		return a.ID
	}
	return "emulator"
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
	var req annotationQueueCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := firstErr(required("name", req.Name), maxLen("name", req.Name, 200), maxLen("description", req.Description, 2000)); err != nil {
		return err
	}
	q, err := s.store.AnnotationQueueCreate(r.Context(), &store.AnnotationQueue{WorkspaceID: s.workspace(r), Name: strings.TrimSpace(req.Name),
		Description: req.Description, ScoreConfigIDs: req.ScoreConfigIDs})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, q)
	return nil
}

func (s *Server) addAnnotationItems(w http.ResponseWriter, r *http.Request) error {
	var req annotationItemsAddRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if _, err := s.store.AnnotationQueueGet(r.Context(), s.workspace(r), pathID(r, "id")); err != nil {
		return err // a queue of another workspace is a 404 before anything is checked
	}
	if len(req.ExecutionIDs) == 0 || len(req.ExecutionIDs) > maxAnnotationItemsPerRequest {
		return invalid("execution_ids", "must hold 1 to %d execution ids, got %d", maxAnnotationItemsPerRequest, len(req.ExecutionIDs))
	}
	items, err := s.store.AnnotationItemsAdd(r.Context(), s.workspace(r), pathID(r, "id"), req.ExecutionIDs)
	if err != nil {
		return err
	}
	if items == nil {
		items = []*store.AnnotationItem{}
	}
	writeData(w, http.StatusCreated, AnnotationItemsAdded{Count: len(items), Items: items})
	return nil
}

func (s *Server) claimAnnotationItem(w http.ResponseWriter, r *http.Request) error {
	it, err := s.store.AnnotationItemClaim(r.Context(), s.workspace(r), pathID(r, "id"), reviewer(r), annotationClaimMS)
	if err != nil {
		return err
	}
	if it == nil {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	writeData(w, http.StatusOK, it)
	return nil
}

func (s *Server) completeAnnotationItem(w http.ResponseWriter, r *http.Request) error {
	var req annotationCompleteRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	scores := make([]*store.Score, len(req.Scores))
	for i, sc := range req.Scores {
		if err := maxLen("comment", sc.Comment, maxScoreCommentLen); err != nil {
			return err
		}
		scores[i] = &store.Score{ConfigID: ptr(sc.ConfigID), Value: sc.Value, StringValue: sc.StringValue, Comment: sc.Comment,
			Author: scoreAuthor(r), Metadata: store.JSONObject{"annotation_queue_id": pathID(r, "id")}}
	}
	it, out, err := s.store.AnnotationItemComplete(r.Context(), s.workspace(r), pathID(r, "id"), pathID(r, "item_id"), reviewer(r), scores)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, AnnotationCompleted{Item: it, Scores: out})
	return nil
}
