package runtime

import "sync"

// registry is the runs in progress in this process, by execution id: the handles that
// cancel, wait for and heartbeat them.
type registry struct {
	// claimMu is held for reading from the statement that makes a row this node's (create,
	// claim, resume) until its handle is added, and for writing by whoever needs to know
	// that every running row of this node has a handle (cancel, heartbeat).
	claimMu sync.RWMutex
	mu      sync.Mutex
	live    map[string]*handle
}

func newRegistry() *registry { return &registry{live: map[string]*handle{}} }

// claiming is called before a row becomes this node's, and claimed once its handle is added.
// (Two calls rather than one returning its release: that function value would be allocated
// on every run, BenchmarkExecuteSyncAllocs in bench/.)
func (r *registry) claiming() { r.claimMu.RLock() }

// claimed ends what claiming began.
func (r *registry) claimed() { r.claimMu.RUnlock() }

// add registers the handle of a pass over an execution (the caller is claiming). A pass of
// this node that lost the row (rescued, queued again, claimed here again) must not run on
// beside the new one: it is cancelled.
func (r *registry) add(id string, h *handle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.live[id]; old != nil {
		old.cancel(errLeaseLost)
	}
	r.live[id] = h
}

// remove drops h, unless another pass replaced it.
func (r *registry) remove(id string, h *handle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live[id] == h {
		delete(r.live, id)
	}
}

// get returns the handle of an execution's run here, nil when there is none.
func (r *registry) get(id string) *handle {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[id]
}

// count is the number of runs in progress here.
func (r *registry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.live)
}

// settled returns the handle of an execution's run here once every row this node owns by
// now has its handle: nil means the row is not running here.
func (r *registry) settled(id string) *handle {
	r.claimMu.Lock()
	defer r.claimMu.Unlock()
	return r.get(id)
}

// snapshot returns every run in progress here once every row this node owns by now has
// its handle.
func (r *registry) snapshot() map[string]*handle {
	r.claimMu.Lock()
	defer r.claimMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]*handle, len(r.live))
	for id, h := range r.live {
		out[id] = h
	}
	return out
}
