package llmtest

import "github.com/agentplane/agentplane/internal/llm"

// Recorder collects the events of a model call: Emit is Provider.Complete's callback,
// Sent llm.Call's (every event counts as reaching the client).
type Recorder struct{ Events []llm.Event }

// Emit records ev.
func (r *Recorder) Emit(ev llm.Event) error {
	r.Events = append(r.Events, ev)
	return nil
}

// Sent records ev and reports it delivered.
func (r *Recorder) Sent(ev llm.Event) bool {
	r.Events = append(r.Events, ev)
	return true
}

// Texts returns the texts of the recorded events of one kind, in order.
func (r *Recorder) Texts(kind string) []string {
	var out []string
	for _, ev := range r.Events {
		if ev.Kind == kind {
			out = append(out, ev.Text)
		}
	}
	return out
}

// Sent is llm.Call's callback for events that all reach the client.
func Sent(llm.Event) bool { return true }
