package runtime

// WorkspaceGone tells this node and, on PostgreSQL, every other node that workspace ws was
// deleted, so that what each caches of it (the API's keys) is dropped at once rather than
// when it expires.
func (e *Engine) WorkspaceGone(ws string) {
	e.workspaceGone(ws)
	e.notify.send(message{K: msgWorkspaceGone, N: e.node, X: ws})
}

// OnWorkspaceGone registers fn to be called with the id of every deleted workspace, from
// this node or another; "" means any workspace may have been (messages were lost while the
// node's connection to the others was down): drop everything cached.
func (e *Engine) OnWorkspaceGone(fn func(ws string)) {
	e.goneMu.Lock()
	defer e.goneMu.Unlock()
	e.goneFns = append(e.goneFns, fn)
}

func (e *Engine) workspaceGone(ws string) {
	e.goneMu.Lock()
	fns := e.goneFns
	e.goneMu.Unlock()
	for _, fn := range fns {
		fn(ws)
	}
}
