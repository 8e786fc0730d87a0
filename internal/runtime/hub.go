package runtime

import (
	"sync"

	"github.com/agentplane/agentplane/internal/domain"
)

// hub fans the frames of live executions out to stream subscribers. A topic keeps every
// frame of its run, so a subscriber never misses one and a slow reader never blocks the run:
// publishing appends and pokes each subscriber's 1-slot signal channel, and a subscriber
// reads whatever frames it has not seen yet.
type hub struct {
	mu       sync.Mutex
	topics   map[string]*topic
	watchers map[string][]chan struct{}
	// cl carries frames to other nodes following a run of this one; nil on a single node.
	cl *cluster
}

type topic struct {
	id     string
	ws     string // the execution's workspace
	base   int    // the seq before this topic's first frame (frames up to it are stored)
	cl     *cluster
	mu     sync.Mutex
	frames []domain.Event
	closed bool // the run has ended in this process; frames are complete and stored
	subs   map[*Subscription]struct{}
	// stored is the highest seq known to be stored: frames up to it can be read from the store.
	stored int
	// For other nodes following the run (see cluster): remote says some do; notified is the
	// last seq sent to them; catchup asks the next send to start with a stored marker.
	remote   bool
	notified int
	catchup  bool
}

// Subscription follows one execution's frames.
type Subscription struct {
	t      *topic
	h      *hub
	id     string
	signal chan struct{}
}

func newHub() *hub { return &hub{topics: map[string]*topic{}, watchers: map[string][]chan struct{}{}} }

// watch returns a channel closed at the next change of an execution that is not running
// here (a run starting, or an end recorded without a run); streams of queued or waiting
// executions wait on it instead of polling.
func (h *hub) watch(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	h.mu.Lock()
	h.watchers[id] = append(h.watchers[id], ch)
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		ws := h.watchers[id]
		for i, w := range ws {
			if w == ch {
				h.watchers[id] = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(h.watchers[id]) == 0 {
			delete(h.watchers, id)
		}
	}
}

// notify wakes the watchers of an execution; h.mu must be held.
func (h *hub) notifyLocked(id string) {
	for _, ch := range h.watchers[id] {
		close(ch)
	}
	delete(h.watchers, id)
}

func (h *hub) notify(id string) {
	h.mu.Lock()
	h.notifyLocked(id)
	h.mu.Unlock()
}

// open creates the topic of a pass starting in this process. A pass gets a topic of its own
// even when the previous pass's is still open (it is closing): subscribers of that one move
// to this one when it closes, reading what lies between from the store.
func (h *hub) open(ws, id string, base int) *topic {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := &topic{id: id, ws: ws, base: base, stored: base, cl: h.cl, subs: map[*Subscription]struct{}{}}
	h.topics[id] = t
	if h.cl != nil && h.cl.interested(id) {
		// Followed from another node before it started here: its frames go out from the first.
		t.remote, t.catchup = true, true
		h.cl.kickTopic(t)
	}
	h.notifyLocked(id)
	return t
}

// publish appends frames and wakes the subscribers, here and (when some follow the run) on
// other nodes.
func (t *topic) publish(frames ...domain.Event) {
	t.mu.Lock()
	t.frames = append(t.frames, frames...)
	for s := range t.subs {
		select {
		case s.signal <- struct{}{}:
		default:
		}
	}
	remote := t.remote
	t.mu.Unlock()
	if remote {
		t.cl.kickTopic(t)
	}
}

// setStored records that the frames up to seq are stored.
func (t *topic) setStored(seq int) {
	t.mu.Lock()
	t.stored = max(t.stored, seq)
	t.mu.Unlock()
}

// lookup returns the topic of a run in progress here, or nil.
func (h *hub) lookup(id string) *topic {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.topics[id]
}

// close marks the run ended here; subscribers drain what is left and stop.
func (h *hub) close(id string, t *topic) {
	t.mu.Lock()
	t.closed = true
	for s := range t.subs {
		select {
		case s.signal <- struct{}{}:
		default:
		}
	}
	t.mu.Unlock()
	h.mu.Lock()
	if h.topics[id] == t {
		delete(h.topics, id)
	}
	h.notifyLocked(id)
	h.mu.Unlock()
}

// Subscribe follows an execution's frames if it is running in this process; ok is false
// otherwise (its frames are all in the store, or it has not started here).
func (h *hub) Subscribe(id string) (*Subscription, bool) {
	h.mu.Lock()
	t := h.topics[id]
	h.mu.Unlock()
	if t == nil {
		return nil, false
	}
	s := &Subscription{t: t, h: h, id: id, signal: make(chan struct{}, 1)}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, false
	}
	t.subs[s] = struct{}{}
	s.signal <- struct{}{}
	return s, true
}

// Workspace is the workspace of the followed execution.
func (s *Subscription) Workspace() string { return s.t.ws }

// Base is the seq before the first frame this subscription can return: frames up to it
// must be read from the store.
func (s *Subscription) Base() int { return s.t.base }

// Signal is ready whenever new frames may be available or the run has ended.
func (s *Subscription) Signal() <-chan struct{} { return s.signal }

// Next returns the frames with seq greater than after, and whether the run has ended here
// (then no more frames will come through this subscription).
func (s *Subscription) Next(after int) ([]domain.Event, bool) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	i := len(s.t.frames)
	for i > 0 && s.t.frames[i-1].Seq > after {
		i--
	}
	out := append([]domain.Event(nil), s.t.frames[i:]...)
	return out, s.t.closed
}

// Last returns the seq of the newest frame published so far (0 if none).
func (s *Subscription) Last() int {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	if n := len(s.t.frames); n > 0 {
		return s.t.frames[n-1].Seq
	}
	return 0
}

// EndedBy reports whether the run's terminal frame (done or error) was published with a seq
// at or before after: a stream resumed there has nothing more to get.
func (s *Subscription) EndedBy(after int) bool {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	n := len(s.t.frames)
	if n == 0 {
		return false
	}
	last := s.t.frames[n-1]
	return (last.Event == "done" || last.Event == "error") && last.Seq <= after
}

// Close stops the subscription.
func (s *Subscription) Close() {
	s.t.mu.Lock()
	delete(s.t.subs, s)
	s.t.mu.Unlock()
}
