package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/experiment"
)

// experimentPoll is how often an experiment's stream looks for items finished since: the
// items are finished by whichever server drives the experiment, so the database is where
// the stream learns of them.
const experimentPoll = 250 * time.Millisecond

// ExperimentStreamItem is the data of an experiment stream's `item` frame: an item finished.
type ExperimentStreamItem struct {
	ItemID      string            `json:"item_id"`
	ExecutionID *string           `json:"execution_id"`
	Status      string            `json:"status"`
	Scores      domain.JSONObject `json:"scores"`
	Error       *string           `json:"error"`
	// Done is how many items had finished with this one (the frame's id); Total how many
	// the experiment has.
	Done  int `json:"done"`
	Total int `json:"total"`
}

// ExperimentStreamDone is the data of the terminal `done` frame of a completed experiment.
type ExperimentStreamDone struct {
	Status   string                    `json:"status" enum:"completed"`
	Progress domain.ExperimentProgress `json:"progress"`
	Summary  *domain.ExperimentSummary `json:"summary"`
}

// ExperimentStreamError is the data of the terminal `error` frame of an experiment that
// failed or was cancelled.
type ExperimentStreamError struct {
	Message  string                    `json:"message"`
	Code     string                    `json:"code" enum:"failed,cancelled"`
	Progress domain.ExperimentProgress `json:"progress"`
}

// experimentStreamEvents lists the frames of an experiment's stream.
func experimentStreamEvents() []streamEvent {
	return []streamEvent{
		{"item", ExperimentStreamItem{}, "an item finished (completed or failed), scored; its id is its place in the finishing order"},
		{"done", ExperimentStreamDone{}, "terminal: the experiment completed, with its summary"},
		{"error", ExperimentStreamError{}, "terminal: the experiment failed or was cancelled"},
	}
}

// terminalSeq is the id of a finished experiment's terminal frame.
func terminalSeq(x *domain.Experiment) int { return x.Progress.Completed + x.Progress.Failed + 1 }

func isExperimentDone(status string) bool {
	return status != domain.ExperimentPending && status != domain.ExperimentRunning
}

func (s *Server) streamExperimentRoute(w http.ResponseWriter, r *http.Request) error {
	after, err := lastEventID(r)
	if err != nil {
		return err
	}
	x, err := s.store.ExperimentGet(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	if isExperimentDone(x.Status) && after >= terminalSeq(x) {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	ctx, stop := s.watchKey(r)
	defer stop()
	defer s.metrics.StreamOpened()()
	return s.streamExperiment(ctx, newSSE(w), x, after)
}

// streamExperiment sends the frames of items finished after `after` (-1: a finished
// experiment sends only its terminal frame, a running one the frames from now on), then the
// terminal frame, until the client leaves or the server shuts down.
func (s *Server) streamExperiment(ctx context.Context, sse *sseWriter, x *domain.Experiment, after int) error {
	if after < 0 {
		after = x.Progress.Completed + x.Progress.Failed
	}
	ping := time.NewTicker(s.heartbeat)
	defer ping.Stop()
	poll := time.NewTicker(experimentPoll)
	defer poll.Stop()
	for {
		// The status first: items read after it include every one finished before it ended.
		cur, err := s.store.ExperimentGet(ctx, x.WorkspaceID, x.ID)
		if err != nil {
			return nil // gone (deleted with its workspace) or the client left
		}
		if after, err = s.sendExperimentItems(ctx, sse, cur, after); err != nil {
			return err
		}
		if isExperimentDone(cur.Status) {
			return s.sendExperimentEnd(ctx, sse, cur)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.streamsDone:
			return nil
		case <-ping.C:
			if err := sse.ping(); err != nil {
				return nil
			}
		case <-poll.C:
		}
	}
}

// sendExperimentItems sends the frames of the items finished after `after` and returns the
// id of the last frame sent.
func (s *Server) sendExperimentItems(ctx context.Context, sse *sseWriter, x *domain.Experiment, after int) (int, error) {
	for {
		items, err := s.store.ExperimentItemsDone(ctx, x.ID, after, 100)
		if err != nil || len(items) == 0 {
			return after, err
		}
		for _, it := range items {
			data, _ := json.Marshal(ExperimentStreamItem{ItemID: it.ItemID, ExecutionID: it.ExecutionID, Status: it.Status, Scores: it.Scores,
				Error: it.Error, Done: *it.DoneSeq, Total: x.Progress.Total})
			if err := sse.frame(domain.Event{Seq: *it.DoneSeq, Event: "item", Data: data}); err != nil {
				return after, err
			}
			after = *it.DoneSeq
		}
	}
}

// sendExperimentEnd sends a finished experiment's terminal frame.
func (s *Server) sendExperimentEnd(ctx context.Context, sse *sseWriter, x *domain.Experiment) error {
	ev := domain.Event{Seq: terminalSeq(x)}
	if x.Status == domain.ExperimentCompleted {
		items, err := s.store.ExperimentItems(ctx, x.ID, domain.Page{})
		if err != nil {
			return err
		}
		ev.Event = "done"
		ev.Data, _ = json.Marshal(ExperimentStreamDone{Status: x.Status, Progress: x.Progress, Summary: experiment.Summarize(items)})
	} else {
		msg := "the experiment was cancelled"
		if x.Error != nil {
			msg = *x.Error
		}
		ev.Event = "error"
		ev.Data, _ = json.Marshal(ExperimentStreamError{Message: msg, Code: x.Status, Progress: x.Progress})
	}
	return sse.frame(ev)
}
