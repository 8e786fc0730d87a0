package runtime

// notifierConfig is what a notifier needs.
type notifierConfig struct {
	// Hub fans frames and status changes out to this node's streams and watchers.
	Hub *hub
	// Node is this node's id, named in the messages it sends.
	Node string
	// Idle is how many of this node's workers wait for a queued run; Wake wakes one.
	Idle func() int
	Wake func()
}

// notifier tells whoever waits that something changed: this node's streams and workers,
// and, once the node joined a cluster (PostgreSQL), the other nodes through its messages.
type notifier struct {
	cfg notifierConfig
	// cl is the cluster the node joined; nil on a single node. Set by join before the
	// node's workers and runs start, never changed after.
	cl *cluster
}

func newNotifier(cfg notifierConfig) *notifier { return &notifier{cfg: cfg} }

// join makes the notifier, and the hub's frame fan-out, reach the other nodes of cl (nil:
// this node only).
func (n *notifier) join(cl *cluster) {
	n.cl = cl
	n.cfg.Hub.cl = cl
}

// changed tells whoever waits on an execution, here and on other nodes, that its status
// changed (this node changed it).
func (n *notifier) changed(id string) {
	n.cfg.Hub.notify(id)
	if n.cl != nil {
		n.cl.statusChanged(id)
	}
}

// queued wakes a worker for a run just queued: one of this node when one is idle, else the
// other nodes' (on PostgreSQL), so that claims do not multiply with the number of nodes.
func (n *notifier) queued() {
	if n.cfg.Idle() > 0 || n.cl == nil || n.cl.alone() {
		n.cfg.Wake()
		return
	}
	n.cl.send(message{K: msgQueued, N: n.cfg.Node})
}

// send sends m to the other nodes; nothing on a single node.
func (n *notifier) send(m message) {
	if n.cl != nil {
		n.cl.send(m)
	}
}
