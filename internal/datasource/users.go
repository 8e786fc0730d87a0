package datasource

import "sync"

// Users counts the queries using a pool that may be retired (replaced by a newer one, or
// evicted) while they run: a retired pool is closed once no query uses it. The executors
// (Live's pools, the emulator's sample databases) share it; it is safe for concurrent use.
type Users struct {
	mu      sync.Mutex
	n       int
	retired bool
}

// Add counts one more query using the pool.
func (u *Users) Add() {
	u.mu.Lock()
	u.n++
	u.mu.Unlock()
}

// Done counts one query fewer. It reports whether the pool is retired and no longer used:
// the caller closes it then.
func (u *Users) Done() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.n--
	return u.retired && u.n == 0
}

// Retire marks the pool retired. It reports whether no query uses it: the caller closes it
// now; otherwise the last Done says when.
func (u *Users) Retire() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.retired = true
	return u.n == 0
}

// Idle reports whether no query uses the pool.
func (u *Users) Idle() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n == 0
}
