package runtime

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/pgbus"
)

// Messages between the nodes of one PostgreSQL database travel over LISTEN/NOTIFY on one
// channel (store.NotifyChannel): every node hears every message and ignores what is not for
// it. Nothing is sent for a run nobody follows from another node; a node alone in the
// cluster sends nothing at all but its hello.
const (
	// notifyLimit bounds a message's size: PostgreSQL refuses payloads of 8000 bytes or more.
	notifyLimit = 7000
	// bigFrame is the size above which a frame is stored before it is published, so that
	// other nodes read it from the store instead of a message.
	bigFrame = 6000
	// interestTTL is how long a node's interest in a run lasts unless refreshed; it is
	// refreshed every interestRefresh while the node follows the run.
	interestTTL     = 30 * time.Second
	interestRefresh = 10 * time.Second
	// recentWindow is how long a node remembers that it changed a run's status: an interest
	// that arrives within it is answered with a status message, closing the race between a
	// follower's read and a change made before its interest was heard.
	recentWindow = 10 * time.Second
)

// Message kinds (message.K).
const (
	msgHello    = "h" // a node started or reconnected: say you are there, send your interests again
	msgAlive    = "a" // a node is there (every heartbeat, and in answer to a hello)
	msgInterest = "i" // node N follows executions XS
	msgDrop     = "u" // node N no longer follows executions XS
	msgQueued   = "q" // a run was queued: an idle worker may claim it
	msgCancel   = "c" // owner O: cancel your run of X
	msgStatus   = "s" // X's status changed: followers look again
	msgFrames   = "f" // frames F of X; with S, frames up to S are stored and F follow them
	// msgWorkspaceGone: workspace X was deleted: drop what is cached of it.
	msgWorkspaceGone = "w"
)

type message struct {
	K  string         `json:"k"`
	N  string         `json:"n,omitempty"`
	X  string         `json:"x,omitempty"`
	XS []string       `json:"xs,omitempty"`
	O  string         `json:"o,omitempty"`
	S  *int           `json:"s,omitempty"`
	F  []domain.Event `json:"f,omitempty"`
}

// cluster connects an engine to the other nodes on its PostgreSQL database.
type cluster struct {
	e       *Engine
	channel string
	log     *slog.Logger
	lis     *pgbus.Listener

	mu       sync.Mutex
	interest map[string]map[string]time.Time // execution -> following node -> until
	recent   map[string]time.Time            // executions whose status this node changed
	feeds    map[string][]*Feed              // executions this node follows, and who follows them
	peerSeen time.Time                       // when another node was last heard
	queue    [][]byte                        // messages to send, in order
	dirty    map[*topic]struct{}             // topics with frames to send
	kick     chan struct{}
}

func newCluster(e *Engine, url, channel string) *cluster {
	c := &cluster{e: e, channel: channel, log: e.log, interest: map[string]map[string]time.Time{}, recent: map[string]time.Time{},
		feeds: map[string][]*Feed{}, dirty: map[*topic]struct{}{}, kick: make(chan struct{}, 1)}
	c.lis = pgbus.NewListener(url, channel, e.log, c.receive, c.connected)
	return c
}

// start listens (waiting for the first connection) and runs the sender until ctx ends.
func (c *cluster) start(ctx, bg context.Context, wg *sync.WaitGroup) error {
	if err := c.lis.Start(ctx); err != nil {
		return err
	}
	wg.Go(func() { c.sender(bg) })
	return nil
}

func (c *cluster) stop() {
	if c != nil {
		c.lis.Stop()
	}
}

// connected runs on every (re)connection of the listener: messages sent while it had none
// are lost, so followers look again and every node is asked to repeat its interests.
func (c *cluster) connected() {
	c.mu.Lock()
	var feeds []*Feed
	for _, fs := range c.feeds {
		feeds = append(feeds, fs...)
	}
	c.mu.Unlock()
	for _, f := range feeds {
		f.reset()
	}
	// A workspace deleted meanwhile was announced to no one here.
	c.e.workspaceGone("")
	c.send(message{K: msgHello, N: c.e.node})
	c.sendInterests(msgInterest, nil)
}

// alone reports whether no other node has been heard lately: then nobody needs to hear
// this node's interests (a node that starts says hello, and interests are sent again).
func (c *cluster) alone() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Since(c.peerSeen) > 3*c.e.heartbeat
}

// send queues a message for the sender, which sends them in order.
func (c *cluster) send(m message) {
	raw, err := json.Marshal(m)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.queue = append(c.queue, raw)
	c.mu.Unlock()
	c.wake()
}

func (c *cluster) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// sendInterests sends kind (interest or drop) for ids, or for every execution followed here
// when ids is nil, in messages within the size limit.
func (c *cluster) sendInterests(kind string, ids []string) {
	if ids == nil {
		c.mu.Lock()
		for id := range c.feeds {
			ids = append(ids, id)
		}
		c.mu.Unlock()
	}
	for len(ids) > 0 {
		n := min(len(ids), notifyLimit/32) // ids are 27 characters
		c.send(message{K: kind, N: c.e.node, XS: ids[:n]})
		ids = ids[n:]
	}
}

// sender sends queued messages and the frames of followed topics until ctx ends, and
// refreshes this node's interests.
func (c *cluster) sender(ctx context.Context) {
	refresh := time.NewTicker(interestRefresh)
	defer refresh.Stop()
	hello := time.NewTicker(c.e.heartbeat)
	defer hello.Stop()
	for {
		select {
		case <-ctx.Done():
			c.flush(context.Background()) // what is queued (drops, a last status) still goes
			return
		case <-c.kick:
		case <-refresh.C:
			c.sendInterests(msgInterest, nil)
			c.prune()
		case <-hello.C:
			// Every node says it is there once per heartbeat, so a node knows whether it is alone.
			c.send(message{K: msgAlive, N: c.e.node})
		}
		c.flush(ctx)
	}
}

// flush sends what is queued, then the new frames of every dirty topic.
func (c *cluster) flush(ctx context.Context) {
	c.mu.Lock()
	queue := c.queue
	c.queue = nil
	topics := make([]*topic, 0, len(c.dirty))
	for t := range c.dirty {
		topics = append(topics, t)
	}
	clear(c.dirty)
	c.mu.Unlock()
	for _, raw := range queue {
		if err := c.e.st.Notify(ctx, c.channel, string(raw)); err != nil && ctx.Err() == nil {
			c.log.Warn("send a message to the other nodes", "error", err)
		}
	}
	failed := false
	for _, t := range topics {
		if !c.sendTopic(ctx, t) {
			failed = true
		}
	}
	if failed && ctx.Err() == nil {
		// Followers may have missed frames: the next send starts with a stored marker.
		go func() {
			time.Sleep(100 * time.Millisecond)
			c.wake()
		}()
	}
}

// sendTopic sends the frames of t that followers have not been sent, as few messages as the
// size limit allows. A frame too big for a message was stored before it was published: a
// stored marker tells followers to read it from the store. It reports false if a send failed.
func (c *cluster) sendTopic(ctx context.Context, t *topic) bool {
	t.mu.Lock()
	if !t.remote {
		t.mu.Unlock()
		return true
	}
	from := t.notified
	var marker *int
	if t.catchup {
		// Frames up to stored are in the store; everything after follows in messages.
		s := t.stored
		marker, from, t.catchup = &s, s, false
	}
	i := len(t.frames)
	for i > 0 && t.frames[i-1].Seq > from {
		i--
	}
	frames := slices.Clone(t.frames[i:])
	if n := len(frames); n > 0 {
		t.notified = frames[n-1].Seq
	} else {
		t.notified = max(t.notified, from)
	}
	t.mu.Unlock()
	ok := true
	post := func(m message) {
		raw, _ := json.Marshal(m)
		if err := c.e.st.Notify(ctx, c.channel, string(raw)); err != nil {
			ok = false
			if ctx.Err() == nil {
				c.log.Warn("send frames to the other nodes", "execution_id", t.id, "error", err)
			}
		}
	}
	batch := message{K: msgFrames, X: t.id, S: marker}
	size := 64
	for _, f := range frames {
		fs := len(f.Data) + len(f.Event) + 40
		if fs > notifyLimit-64 {
			if len(batch.F) > 0 || batch.S != nil {
				post(batch)
			}
			s := f.Seq
			batch, size = message{K: msgFrames, X: t.id, S: &s}, 64
			continue
		}
		if size+fs > notifyLimit {
			post(batch)
			batch, size = message{K: msgFrames, X: t.id}, 64
		}
		batch.F = append(batch.F, f)
		size += fs
	}
	if len(batch.F) > 0 || batch.S != nil {
		post(batch)
	}
	if !ok {
		t.mu.Lock()
		t.catchup = true
		t.mu.Unlock()
		c.mu.Lock()
		c.dirty[t] = struct{}{}
		c.mu.Unlock()
	}
	return ok
}

// kickTopic asks the sender to send t's new frames.
func (c *cluster) kickTopic(t *topic) {
	c.mu.Lock()
	c.dirty[t] = struct{}{}
	c.mu.Unlock()
	c.wake()
}

// interested reports whether another node follows execution id.
func (c *cluster) interested(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for _, until := range c.interest[id] {
		if until.After(now) {
			return true
		}
	}
	return false
}

// statusChanged tells the nodes following id that its status changed (this node changed it).
func (c *cluster) statusChanged(id string) {
	c.mu.Lock()
	c.recent[id] = time.Now()
	c.mu.Unlock()
	if c.interested(id) {
		c.send(message{K: msgStatus, N: c.e.node, X: id})
	}
}

// prune forgets expired interests and old status changes.
func (c *cluster) prune() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for id, nodes := range c.interest {
		for n, until := range nodes {
			if !until.After(now) {
				delete(nodes, n)
			}
		}
		if len(nodes) == 0 {
			delete(c.interest, id)
		}
	}
	for id, at := range c.recent {
		if now.Sub(at) > recentWindow {
			delete(c.recent, id)
		}
	}
}

// heard records that another node spoke; it reports whether this node thought itself alone.
func (c *cluster) heard() (wasAlone bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	wasAlone = time.Since(c.peerSeen) > 3*c.e.heartbeat
	c.peerSeen = time.Now()
	return wasAlone
}

// receive handles one message from the listener, in delivery order.
func (c *cluster) receive(payload string) {
	var m message
	if err := json.Unmarshal([]byte(payload), &m); err != nil {
		c.log.Warn("undecodable message from another node", "error", err)
		return
	}
	if m.N == c.e.node {
		return // this node's own message, back from the server
	}
	if m.N != "" && c.heard() && m.K != msgHello {
		// A node this one did not know of: it needs to hear what this one follows.
		c.sendInterests(msgInterest, nil)
	}
	switch m.K {
	case msgHello:
		c.send(message{K: msgAlive, N: c.e.node})
		c.sendInterests(msgInterest, nil)
	case msgInterest:
		c.mu.Lock()
		until := time.Now().Add(interestTTL)
		var changed []string
		for _, id := range m.XS {
			if c.interest[id] == nil {
				c.interest[id] = map[string]time.Time{}
			}
			c.interest[id][m.N] = until
			if at, ok := c.recent[id]; ok && time.Since(at) < recentWindow {
				changed = append(changed, id)
			}
		}
		c.mu.Unlock()
		for _, id := range m.XS {
			if t := c.e.hub.lookup(id); t != nil {
				t.mu.Lock()
				t.remote, t.catchup = true, true
				t.mu.Unlock()
				c.kickTopic(t)
			}
		}
		for _, id := range changed {
			c.send(message{K: msgStatus, N: c.e.node, X: id})
		}
	case msgDrop:
		c.mu.Lock()
		for _, id := range m.XS {
			delete(c.interest[id], m.N)
			if len(c.interest[id]) == 0 {
				delete(c.interest, id)
			}
		}
		c.mu.Unlock()
	case msgQueued:
		if c.e.prod.idleWorkers() > 0 {
			c.e.prod.poke()
		}
	case msgCancel:
		if m.O == c.e.node {
			c.e.cancelOwned(m.X)
		}
	case msgStatus:
		c.e.hub.notify(m.X)
		for _, f := range c.feedsOf(m.X) {
			f.status()
		}
	case msgFrames:
		for _, f := range c.feedsOf(m.X) {
			f.add(m.S, m.F)
		}
	case msgWorkspaceGone:
		c.e.workspaceGone(m.X)
	}
}

func (c *cluster) feedsOf(id string) []*Feed {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.feeds[id])
}

// follow returns a new feed of id, registering this node's interest on its first follower.
func (c *cluster) follow(id string) *Feed {
	f := &Feed{c: c, id: id, stored: -1, changed: make(chan struct{})}
	c.mu.Lock()
	first := len(c.feeds[id]) == 0
	c.feeds[id] = append(c.feeds[id], f)
	alone := time.Since(c.peerSeen) > 3*c.e.heartbeat
	c.mu.Unlock()
	if first && !alone {
		c.send(message{K: msgInterest, N: c.e.node, XS: []string{id}})
	}
	return f
}

func (c *cluster) unfollow(f *Feed) {
	c.mu.Lock()
	fs := c.feeds[f.id]
	if i := slices.Index(fs, f); i >= 0 {
		fs = slices.Delete(fs, i, i+1)
	}
	last := len(fs) == 0
	if last {
		delete(c.feeds, f.id)
	} else {
		c.feeds[f.id] = fs
	}
	alone := time.Since(c.peerSeen) > 3*c.e.heartbeat
	c.mu.Unlock()
	if last && !alone {
		c.send(message{K: msgDrop, N: c.e.node, XS: []string{f.id}})
	}
}

// Feed follows an execution running on another node: its frames arrive in messages, and
// any message about it (frames, a status change) closes the channel Changed returned. On a
// single node it never changes: everything there is local (see watch).
type Feed struct {
	c    *cluster
	id   string
	once sync.Once

	mu      sync.Mutex
	frames  []domain.Event // in seq order, each once
	stored  int            // frames up to it are stored (-1: no marker yet, rely on the store)
	gen     uint64         // status messages received
	changed chan struct{}
}

// Changed returns a channel closed at the next message about the execution.
func (f *Feed) Changed() <-chan struct{} {
	if f == nil || f.c == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

// Status counts the status changes heard: a change means the caller should look again.
func (f *Feed) Status() uint64 {
	if f == nil || f.c == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen
}

// Frames returns the frames heard with seq greater than after, in order, and stored, the seq
// up to which frames are in the store (read those first when stored > after). ready is false
// until a stored marker arrived: until then only the store is complete.
func (f *Feed) Frames(after int) (frames []domain.Event, stored int, ready bool) {
	if f == nil || f.c == nil {
		return nil, 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stored < 0 {
		return nil, 0, false
	}
	i := len(f.frames)
	for i > 0 && f.frames[i-1].Seq > after {
		i--
	}
	return slices.Clone(f.frames[i:]), f.stored, true
}

// Close stops following; calling it again does nothing.
func (f *Feed) Close() {
	if f == nil || f.c == nil {
		return
	}
	f.once.Do(func() { f.c.unfollow(f) })
}

func (f *Feed) signalLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *Feed) status() {
	f.mu.Lock()
	f.gen++
	f.signalLocked()
	f.mu.Unlock()
}

// reset forgets the frames after a lost connection (messages may be missing): until the next
// stored marker, only the store is complete.
func (f *Feed) reset() {
	f.mu.Lock()
	f.frames, f.stored = nil, -1
	f.gen++
	f.signalLocked()
	f.mu.Unlock()
}

func (f *Feed) add(stored *int, frames []domain.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if stored != nil {
		f.stored = max(f.stored, *stored)
	}
	for _, ev := range frames {
		n := len(f.frames)
		switch {
		case n == 0 || ev.Seq > f.frames[n-1].Seq:
			f.frames = append(f.frames, ev)
		default:
			i, found := slices.BinarySearchFunc(f.frames, ev.Seq, func(a domain.Event, seq int) int { return a.Seq - seq })
			if !found {
				f.frames = slices.Insert(f.frames, i, ev)
			}
		}
	}
	f.signalLocked()
}
