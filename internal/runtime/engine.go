package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentplane/agentplane/internal/assets"
	"github.com/agentplane/agentplane/internal/datasource"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/modelhealth"
	"github.com/agentplane/agentplane/internal/store"
)

// maxDepth bounds sub-agent nesting (a multi_agent whose sub-agent is a multi_agent …).
const maxDepth = 5

// errCancelled is the cause of a run's context when a user cancels it.
var errCancelled = errors.New("execution cancelled")

// errShutdown is the cause when the server stops before a run ends.
var errShutdown = errors.New("the server shut down before the execution finished")

// errLeaseLost is the cause when this node no longer holds a run's lease: another node
// rescued it, or this node could not renew it in time.
var errLeaseLost = errors.New("this server lost the execution's lease (it could not renew it in time, or another server took the execution over)")

// Codes of a terminal error frame ({message, code}): why the execution ended without output.
// Frames stored by older versions have no code.
const (
	CodeFailed      = "failed"      // the run failed
	CodeCancelled   = "cancelled"   // a user cancelled it
	CodeRejected    = "rejected"    // denied at an approval checkpoint
	CodeTimeout     = "timeout"     // a model call exceeded config.request_timeout_ms
	CodeInterrupted = "interrupted" // the server running it stopped, crashed or shut down after its first model call
)

// errorFrame is the data of a terminal error frame.
func errorFrame(msg, code string) json.RawMessage {
	raw, _ := json.Marshal(map[string]string{"message": msg, "code": code})
	return raw
}

// Config is what an Engine needs.
type Config struct {
	// Store is where runs are recorded: SQLStore{st} for a *store.Store.
	Store Store
	// Router decides which provider answers each version's model calls.
	Router ModelRouter
	// Tools opens the MCP sessions of runs' tool calls; nil is SimulatedTools.
	Tools  ToolServers
	Logger *slog.Logger
	// Workers is the size of the pool that runs async executions (default 16).
	Workers int
	// LeaseTimeout is how long a run stays owned by this node without a heartbeat (default
	// 30 s); HeartbeatInterval how often the node renews the leases of its runs (default
	// 10 s). The elected node rescues expired leases every min(5 s, LeaseTimeout/3).
	LeaseTimeout, HeartbeatInterval time.Duration
	// PostgresURL, on PostgreSQL, is the database the store runs on: the node opens its
	// LISTEN connection and its leader lock there. Empty on SQLite (one node).
	PostgresURL string
	// Metrics is told of every run end and model call (nil: nothing is reported).
	Metrics Metrics
	// DataSources runs the queries of config.data_sources tools (serve: datasource.Live,
	// the emulator: seed.Sample); nil answers them with an error result.
	DataSources datasource.Executor
	// Assets stores the media runs produce (model replies, MCP tool results); nil keeps
	// them in memory, unlimited (tests; see memoryAssets). The API serves the same service (Engine.Assets).
	Assets *assets.Service
	// Circuits holds the circuits of providers' models for every node (see
	// modelhealth.Circuits); nil keeps them in Store with the default threshold and
	// cool-down.
	Circuits *modelhealth.Circuits
}

// Defaults of Config's lease settings.
const (
	DefaultLeaseTimeout      = 30 * time.Second
	DefaultHeartbeatInterval = 10 * time.Second
)

// seqBlock is how many frame ids a pass reserves at a time (see store.Claim).
const seqBlock = 512

// Engine runs executions: async ones from a durable queue with a bounded worker pool,
// sync ones and chat turns at once, all through the same pipeline.
//
// Every running execution is owned by one node (one process; see lease.go) with a lease the
// node renews by heartbeat; the elected leader rescues the runs of nodes that stopped. On
// PostgreSQL the nodes of one database talk over LISTEN/NOTIFY (cluster.go).
type Engine struct {
	st      Store
	router  ModelRouter
	tools   ToolServers
	log     *slog.Logger
	hub     *hub
	metrics Metrics
	sources datasource.Executor
	assets  *assets.Service
	// circuits are the circuits of providers' models (see modelhealth.Circuits).
	circuits *modelhealth.Circuits

	// node is this process's id among the nodes sharing the database.
	node             string
	lease, heartbeat time.Duration
	pgURL            string

	// ctx is the parent of every pass's context, cancelled with the cause when the node
	// stops; exec runs the passes, and notify tells streams, workers and the other nodes
	// (its cluster: nil on SQLite) what changed.
	ctx    context.Context
	cancel context.CancelCauseFunc
	exec   *executor
	notify *notifier
	// prod claims queued runs for a pool of workers (tracked with exec's passes).
	prod *producer

	// bg runs the heartbeat, the leader's rescues and the cluster's sender.
	bg       context.Context
	bgCancel context.CancelFunc
	bgwg     sync.WaitGroup
	// elect keeps this node in the leader election (see Leading); the leader rescues the
	// runs of stopped nodes.
	elect   *elector
	rescuer *rescuer
	// goneFns are called with each deleted workspace (see OnWorkspaceGone).
	goneMu  sync.Mutex
	goneFns []func(ws string)
	// beat renews the leases of this node's runs.
	beat *heartbeat

	// runs are the runs in progress in this process.
	runs *registry

	// testFault, set by tests, fails the writes that end a run, and the heartbeat, while it
	// returns an error.
	testFault atomic.Pointer[func() error]

	startOnce, stopOnce sync.Once
	catalog             sync.Map // model id -> *store.LLMModel, catalog entries only (read-only)
	versions            sync.Map // agent version id -> *store.AgentConfig
}

// handle is a run in progress in this process; its context exists from registration, so
// a cancel that arrives before the run starts still reaches it.
type handle struct {
	ctx     context.Context
	cancel  context.CancelCauseFunc
	done    chan struct{}
	attempt int               // the pass of the row this handle runs (see store.Owner)
	result  *domain.Execution // the execution as its run left it; set before done is closed
	// finishing is set when the pass starts writing its outcome: its row leaves running
	// then, which the heartbeat must not take for a lost lease.
	finishing atomic.Bool
}

// Waiter follows a started run.
type Waiter struct{ h *handle }

// Done is closed when the run stops (terminal, or waiting for approval).
func (w *Waiter) Done() <-chan struct{} { return w.h.done }

// Result is the execution as the run left it, once Done is closed; nil if it could not be
// recorded (read it from the store then).
func (w *Waiter) Result() *domain.Execution { return w.h.result }

// New returns an engine; call Start before submitting.
func New(cfg Config) *Engine {
	if cfg.Workers <= 0 {
		cfg.Workers = 16
	}
	if cfg.Tools == nil {
		cfg.Tools = SimulatedTools{}
	}
	if cfg.LeaseTimeout <= 0 {
		cfg.LeaseTimeout = DefaultLeaseTimeout
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = min(DefaultHeartbeatInterval, cfg.LeaseTimeout/3)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	if cfg.Assets == nil {
		cfg.Assets = memoryAssets(cfg.Store)
	}
	if cfg.Circuits == nil {
		cfg.Circuits = &modelhealth.Circuits{Shared: modelhealth.NewDatabase(cfg.Store)}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	bg, bgCancel := context.WithCancel(context.Background())
	e := &Engine{st: cfg.Store, router: cfg.Router, tools: cfg.Tools, log: cfg.Logger, hub: newHub(), metrics: cfg.Metrics, sources: cfg.DataSources,
		node: newNodeID(), lease: cfg.LeaseTimeout, heartbeat: cfg.HeartbeatInterval,
		pgURL: cfg.PostgresURL, ctx: ctx, cancel: cancel,
		bg: bg, bgCancel: bgCancel, runs: newRegistry(), assets: cfg.Assets, circuits: cfg.Circuits}
	e.log = e.log.With("node", e.node)
	e.exec = newExecutor(executorConfig{Context: ctx, Runs: e.runs, Pipeline: e.runPipeline})
	e.prod = newProducer(producerConfig{Workers: cfg.Workers, Poll: pollInterval, Claim: e.claimNext,
		Run: func(c *claimed) { e.exec.run(c.x, nil, c.h, nil) }, Logger: e.log})
	e.notify = newNotifier(notifierConfig{Hub: e.hub, Node: e.node, Idle: e.prod.idleWorkers, Wake: e.prod.poke})
	e.rescuer = newRescuer(rescuerConfig{Store: e.st, Node: e.node, Logger: e.log, Rescued: e.rescued})
	e.elect = newElector(electorConfig{Interval: min(5*time.Second, cfg.LeaseTimeout/3), Lead: e.lead, Logger: e.log})
	return e
}

// Assets is the service that stores the assets of runs; the API serves it.
func (e *Engine) Assets() *assets.Service { return e.assets }

// fault returns the error a test injects into the writes that end a run (nil normally).
func (e *Engine) fault() error {
	if f := e.testFault.Load(); f != nil {
		return (*f)()
	}
	return nil
}

// Node is this process's id among the nodes sharing the database (random per process).
func (e *Engine) Node() string { return e.node }

// Start joins the cluster (on PostgreSQL: LISTEN, and the leader election), rescues the
// runs whose lease expired if this node leads (runs other nodes own are left alone), and
// starts the workers and the heartbeat. Calling it again does nothing.
func (e *Engine) Start(ctx context.Context) error {
	var err error
	e.startOnce.Do(func() {
		err = e.startCluster(ctx)
		if err != nil {
			return
		}
		if e.elect.elect(ctx, e.newLeaderLock()) {
			if _, err = e.rescuer.rescue(ctx); err != nil {
				e.stopBackground()
				return
			}
		}
		host, _ := os.Hostname()
		e.log.Info("engine started", "host", host, "cluster", e.notify.cl != nil, "lease_timeout", e.lease, "heartbeat_interval", e.heartbeat)
		e.beat = newHeartbeat(heartbeatConfig{Store: e.st, Node: e.node, Lease: e.lease, Interval: e.heartbeat, Runs: e.runs,
			Fault: e.fault, Logger: e.log})
		e.bgwg.Go(func() { e.beat.run(e.bg) })
		e.bgwg.Go(func() { e.elect.run(e.bg) })
		e.prod.start(&e.exec.wg)
	})
	return err
}

// Stop drains the node: it claims nothing more, lets runs in progress finish until ctx ends,
// then stops the rest, which go back to the queue when they never reached a model call
// and are failed as interrupted otherwise, and releases its leases and connections.
// Calling it again does nothing.
func (e *Engine) Stop(ctx context.Context) {
	e.stopOnce.Do(func() {
		e.StopClaiming()
		idle := make(chan struct{})
		go func() {
			for {
				if e.runs.count() == 0 {
					close(idle)
					return
				}
				select {
				case <-ctx.Done():
					close(idle)
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		<-idle
		e.cancel(errShutdown)
		e.exec.wait()
		e.stopBackground()
	})
}

// StopClaiming makes the workers take no more runs from the queue (the first step of a
// drain: other nodes take them); runs in progress go on. Calling it again does nothing.
func (e *Engine) StopClaiming() {
	e.prod.drain()
}

// stopBackground stops the heartbeat, the leader and the cluster connections.
func (e *Engine) stopBackground() {
	e.bgCancel()
	e.bgwg.Wait()
	e.elect.resign()
	e.notify.cl.stop()
}

// claim is this node's claim on a new pass.
func (e *Engine) claim() domain.Claim {
	return domain.Claim{Node: e.node, Lease: e.lease, SeqBlock: seqBlock}
}

// pollInterval is how often an idle node looks at the queue when nothing woke it: a run
// queued here or announced by another node wakes a worker at once; this is the net under a
// lost message.
const pollInterval = time.Second

// claimNext takes the oldest queued run for a worker and registers its pass; nil when the
// queue is empty.
func (e *Engine) claimNext() (*claimed, error) {
	e.runs.claiming()
	x, err := e.st.ExecutionClaim(e.ctx, e.claim())
	var h *handle
	if x != nil {
		h = e.exec.register(e.ctx, x)
	}
	e.runs.claimed()
	if x == nil || err != nil {
		return nil, err
	}
	e.changed(x.ID) // it started: streams waiting for it, here or elsewhere, look again
	return &claimed{x: x, h: h}, nil
}

// SubmitRequest describes a new execution.
type SubmitRequest struct {
	WorkspaceID string
	Agent       *domain.Agent
	VersionID   *string             // the version run; nil with Config for a playground run
	Config      *domain.AgentConfig // the configuration run
	Input       map[string]any
	Metadata    map[string]any
	Source      string
	TimeoutMS   int
	Async       bool
	// Requeue, for a run that starts now, says that its caller does not wait for it on this
	// node only (an experiment's driver follows its items from any node): were the node to
	// stop before the run's first model call, the run is queued again and runs elsewhere, as
	// an async run does. The pass then records reaching its model call (one statement, see
	// run.reachModel); without it the row has the mark from its insert.
	Requeue bool
	// UserID is the signed-in user who started the run; EndUserID the caller's id for its
	// end user. Either may be nil.
	UserID, EndUserID *string
	// Chat makes the run a chat turn: the session is locked for it (409 when busy) and the
	// user message and reply are stored when it completes.
	Chat *ChatTurn
	// Conversation, when set, is the conversation the run answers (the OpenAI-compatible
	// API's messages): its system text goes after the agent's system prompt and its messages
	// before the input's user message. It is kept with the execution, so a run resumed after
	// an approval or on another node sends the same messages.
	Conversation *Conversation
	// BeforeCreate, when set, runs inside the transaction that records the execution, before
	// anything else is written (x has its id): the API checks the plan limits there, under a
	// per-workspace lock, and links an Idempotency-Key to x. Its error rolls everything back
	// and is Submit's error.
	BeforeCreate func(ctx context.Context, tx Store, x *domain.Execution) error
}

// ChatTurn is a user message sent to a session.
type ChatTurn struct {
	SessionID     string
	UserMessageID string
	Content       string
	// IdempotencyKey, when set, is recorded with RequestHash in the transaction that creates
	// the turn (see store.ChatTurnClaim); a key already used makes Submit start nothing and
	// return the *store.IdempotencyUsedError naming the earlier turn.
	IdempotencyKey string
	RequestHash    string
}

// Conversation is what a caller sends beside the user message: extra system text and the
// earlier turns of a conversation the platform does not keep.
type Conversation struct {
	System   string        `json:"system,omitempty"`
	Messages []llm.Message `json:"messages,omitempty"`
	// OutputSchema is the caller's JSON Schema for the output (OpenAI's response_format),
	// used when the version has none of its own.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// Submit records a new execution and starts it: async ones are queued (status pending),
// others start at once in the background. done is closed when the run stops (terminal or
// awaiting approval); it is nil for async executions.
func (e *Engine) Submit(ctx context.Context, req SubmitRequest) (*domain.Execution, *Waiter, error) {
	var pre *prepared
	if req.Config != nil {
		// A run that cannot reach its model is refused before anything is recorded. A run
		// that starts now keeps the route (one credential read instead of two); a queued one
		// resolves it when it starts.
		m, err := e.model(ctx, req.WorkspaceID, req.Config.Model)
		if err != nil {
			return nil, nil, err
		}
		if req.Async {
			err = e.router.Check(ctx, req.WorkspaceID, req.Config, m)
		} else {
			pre = &prepared{model: m}
			pre.route, err = e.router.Route(ctx, req.WorkspaceID, req.Config, m)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	x := &domain.Execution{ID: store.NewID(), WorkspaceID: req.WorkspaceID, AgentID: req.Agent.ID, AgentVersionID: req.VersionID,
		Source: req.Source, Input: req.Input, Metadata: req.Metadata, Config: req.Config, TimeoutMS: req.TimeoutMS, Status: domain.StatusRunning,
		UserID: req.UserID, EndUserID: req.EndUserID}
	if req.Async {
		x.Status = domain.StatusPending
	} else {
		// A sync run's caller waits on this node: were the node to stop, the run fails
		// rather than running again elsewhere, so its row is marked as having reached its
		// model call from its insert, and the pass sends no statement for it (unless
		// Requeue: its caller follows it from anywhere).
		c := e.claim()
		c.ModelCalled = !req.Requeue
		x.Claim = &c
	}
	if x.Input == nil {
		x.Input = domain.JSONObject{}
	}
	if x.Metadata == nil {
		x.Metadata = domain.JSONObject{}
	}
	state := &runState{}
	if c := req.Chat; c != nil {
		x.SessionID = &c.SessionID
		state.Chat = &chatState{SessionID: c.SessionID, UserMessageID: c.UserMessageID, Content: c.Content}
	}
	state.Conversation = req.Conversation
	x.State, _ = json.Marshal(state)
	tr := &domain.Trace{WorkspaceID: req.WorkspaceID, ExecutionID: &x.ID, AgentID: &req.Agent.ID, SessionID: x.SessionID,
		Name: req.Agent.Name, Metadata: domain.JSONObject{"source": req.Source}}
	if !req.Async {
		// The row is this node's from its insert: its handle is registered before anyone
		// needing to find it (a cancel, the heartbeat) can look.
		e.runs.claiming()
		defer e.runs.claimed()
	}
	var err error
	if req.BeforeCreate == nil && req.Chat == nil {
		err = e.st.ExecutionCreate(ctx, x, tr) // one statement on PostgreSQL: no transaction around it
	} else {
		// The closure is made only here: passed to InTx (an interface's method) it escapes,
		// and a plain run would pay its allocation for nothing (BenchmarkExecuteSyncAllocs in bench/).
		err = e.st.InTx(ctx, func(tx Store) error { return create(ctx, tx, req, x, tr) })
	}
	if err != nil {
		return nil, nil, err
	}
	if req.Async {
		e.queued()
		return x, nil, nil
	}
	return x, e.start(x, req.Agent, pre), nil
}

// create records x and its trace in tx, after req's BeforeCreate and, for a chat turn, the
// turn's idempotency key and the session's lock.
func create(ctx context.Context, tx Store, req SubmitRequest, x *domain.Execution, tr *domain.Trace) error {
	if req.BeforeCreate != nil {
		if err := req.BeforeCreate(ctx, tx, x); err != nil {
			return err
		}
	}
	if c := req.Chat; c != nil {
		if c.IdempotencyKey != "" {
			ref := domain.ChatTurnRef{ExecutionID: x.ID, UserMessageID: c.UserMessageID}
			if err := tx.ChatTurnClaim(ctx, req.WorkspaceID, c.IdempotencyKey, c.RequestHash, ref); err != nil {
				return err
			}
		}
		if err := tx.ChatSessionLock(ctx, req.WorkspaceID, c.SessionID, x.ID); err != nil {
			return err
		}
	}
	return tx.ExecutionCreate(ctx, x, tr)
}

// prepared is what Submit resolved for a run that starts at once: its model entry and
// where its model calls go.
type prepared struct {
	model *domain.LLMModel
	route *Route
}

// start runs an execution this node owns in the background, tracked for Stop. agent and
// pre may be nil. The caller is claiming (see registry).
func (e *Engine) start(x *domain.Execution, agent *domain.Agent, pre *prepared) *Waiter {
	return e.exec.start(x, agent, pre)
}

// changed tells whoever waits on an execution, here and on other nodes, that its status
// changed (this node changed it).
func (e *Engine) changed(id string) { e.notify.changed(id) }

// queued wakes a worker, here or on another node, for a run just queued.
func (e *Engine) queued() { e.notify.queued() }

// runPipeline runs a pass and records its outcome, returning the execution as recorded.
func (e *Engine) runPipeline(ctx context.Context, h *handle, x *domain.Execution, agent *domain.Agent, pre *prepared) *domain.Execution {
	r := &run{e: e, x: x, cfg: x.Config, state: &runState{}, started: time.Now(), flushed: time.Now(),
		owner: domain.Owner{Node: e.node, Attempt: x.Attempt}, stop: h.cancel}
	// The pass took a block of frame ids above every id an earlier pass may have sent.
	r.seq, r.reserved = max(x.SeqReserved-seqBlock, 0), x.SeqReserved
	r.modelCalled = x.ModelCalled // written with the row (see store.Claim.ModelCalled)
	if pre != nil {
		r.model, r.modelSet, r.route = pre.model, true, pre.route
	}
	if len(x.State) > 0 {
		if err := json.Unmarshal(x.State, r.state); err != nil {
			e.log.Error("decode execution state", "execution_id", x.ID, "error", err)
		}
	}
	if r.state.Checkpoint != "" && r.state.Phase != "" {
		r.state.Passed = append(r.state.Passed, r.state.Checkpoint)
	}
	r.usage, r.cost = r.state.Usage, r.state.Cost
	var err error
	r.topic = e.hub.open(x.WorkspaceID, x.ID, r.seq)
	defer e.hub.close(x.ID, r.topic)
	if r.cfg == nil && x.AgentVersionID != nil {
		r.cfg = e.versionConfig(ctx, x.WorkspaceID, x.AgentID, *x.AgentVersionID)
	}
	if c := r.state.Conversation; c != nil && len(c.OutputSchema) > 0 && r.cfg != nil && len(r.cfg.OutputSchema) == 0 {
		cfg := *r.cfg // a copy: version configs are cached and shared
		cfg.OutputSchema = c.OutputSchema
		r.cfg = &cfg
	}
	var o outcome
	r.agent = agent
	if r.agent == nil {
		r.agent, err = e.st.AgentGet(ctx, x.WorkspaceID, x.AgentID)
	}
	if ctx.Err() != nil {
		// Cancelled (or shut down) before it started: whatever failed above failed for that.
		o = r.stopped(ctx)
	} else if err != nil {
		switch {
		case ctx.Err() != nil:
			o = r.stopped(ctx)
		case store.IsNotFound(err):
			o = failed(fmt.Sprintf("agent %s is no longer available", x.AgentID))
		default:
			o = failed("could not load the agent: " + err.Error())
		}
	} else if r.cfg == nil {
		o = failed("the execution has no configuration to run")
	} else {
		r.root = r.span("agent", r.agent.Name, x.Input)
		r.root.ParentID = nil
		r.root.Attributes["agent_type"] = r.agent.Type
		o = r.execute(ctx)
	}
	h.finishing.Store(true)
	final, err := r.finish(o)
	if err != nil {
		if !isTransition(err) {
			e.log.Error("record execution outcome", "execution_id", x.ID, "error", err)
		} else {
			// Someone else ended it first (a rescue after this node lost the lease); theirs stands.
			e.log.Warn("execution ended elsewhere first", "execution_id", x.ID, "error", err)
		}
		return nil
	}
	e.changed(x.ID)
	if final.DurationMS != nil {
		e.reportEnd(context.WithoutCancel(ctx), x, r.cfg, final.Status, *final.DurationMS, r.agent, r.route)
	}
	if final.Status == domain.StatusPending {
		e.queued() // drained: another node may take it
	}
	if domain.IsTerminal(final.Status) && x.ParentID != nil {
		e.resumeParent(x.WorkspaceID, *x.ParentID)
	}
	return final
}

// versionConfig returns a version's configuration; versions are immutable, so it is cached.
func (e *Engine) versionConfig(ctx context.Context, ws, agentID, versionID string) *domain.AgentConfig {
	if v, ok := e.versions.Load(versionID); ok {
		return v.(*domain.AgentConfig)
	}
	v, err := e.st.AgentVersionGet(ctx, ws, agentID, versionID)
	if err != nil {
		return nil
	}
	e.versions.Store(versionID, &v.Config)
	return &v.Config
}

// resumeParent restarts a parent run that was waiting for this child's approval.
func (e *Engine) resumeParent(ws, parentID string) {
	ctx := context.WithoutCancel(e.ctx)
	p, err := e.st.ExecutionGet(ctx, ws, parentID)
	if err != nil || p.Status != domain.StatusAwaitingApproval || waitingChild(p) == "" {
		return
	}
	c := e.claim()
	e.runs.claiming()
	defer e.runs.claimed()
	x, err := e.st.ExecutionTransition(ctx, ws, parentID, domain.MoveResume.Status(),
		domain.ExecutionPatch{Move: domain.MoveResume, From: domain.StatusAwaitingApproval, Claim: &c})
	if err != nil {
		return // another path moved it first
	}
	e.start(x, nil, nil)
	e.changed(x.ID)
}

// waitingChild returns the child execution a run waits for, if it waits for one.
func waitingChild(x *domain.Execution) string {
	var st runState
	if len(x.State) == 0 || json.Unmarshal(x.State, &st) != nil || st.Phase != "await_child" {
		return ""
	}
	for _, id := range st.Children {
		return id
	}
	return ""
}

// runChild creates and runs a child execution of parent inline, returning it finished.
func (e *Engine) runChild(ctx context.Context, parent *domain.Execution, agentID string, input map[string]any) (*domain.Execution, error) {
	a, err := e.st.AgentGet(ctx, parent.WorkspaceID, agentID)
	if err != nil {
		return nil, err
	}
	if a.Config == nil || a.ActiveVersionID == nil {
		return nil, fmt.Errorf("sub-agent %s has no active version", agentID)
	}
	c := e.claim()
	x := &domain.Execution{ID: store.NewID(), WorkspaceID: parent.WorkspaceID, AgentID: a.ID, AgentVersionID: a.ActiveVersionID,
		ParentID: &parent.ID, RootID: parent.RootID, SessionID: parent.SessionID, Source: "agent", Status: domain.StatusRunning,
		UserID: parent.UserID, EndUserID: parent.EndUserID, Claim: &c,
		Input: input, Metadata: domain.JSONObject{"parent_id": parent.ID}, Config: a.Config, TimeoutMS: parent.TimeoutMS}
	tr := &domain.Trace{WorkspaceID: parent.WorkspaceID, ExecutionID: &x.ID, AgentID: &a.ID, SessionID: parent.SessionID, Name: a.Name,
		Metadata: domain.JSONObject{"source": "agent", "parent_execution_id": parent.ID}}
	e.runs.claiming()
	if err := e.st.ExecutionCreate(ctx, x, tr); err != nil {
		e.runs.claimed()
		return nil, err
	}
	h := e.exec.register(withDepth(ctx, depthFrom(ctx)+1), x)
	e.runs.claimed()
	e.exec.run(x, a, h, nil)
	return e.st.ExecutionGet(context.WithoutCancel(ctx), x.WorkspaceID, x.ID)
}

type depthKey struct{}

func withDepth(ctx context.Context, d int) context.Context {
	return context.WithValue(ctx, depthKey{}, d)
}

func depthFrom(ctx context.Context) int { d, _ := ctx.Value(depthKey{}).(int); return d }

// Approve resumes an execution waiting at a checkpoint, approving every pending call.
func (e *Engine) Approve(ctx context.Context, ws, id, comment string) (*domain.Execution, error) {
	return e.Decide(ctx, ws, id, Review{Comment: comment})
}

// Decide resumes an execution waiting for approval as the review says, on this node with a
// lease of its own: pending tool calls approved, rejected or edited, a question answered. A
// review that does not fit the pending approval is a *store.ValidationError; one that loses
// to a cancel or deny decided first is a *store.TransitionError.
func (e *Engine) Decide(ctx context.Context, ws, id string, rv Review) (*domain.Execution, error) {
	cur, err := e.st.ExecutionGet(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	if child := waitingChild(cur); child != "" && cur.Status == domain.StatusAwaitingApproval {
		return nil, &store.ConflictError{Message: fmt.Sprintf("execution %s is waiting for its sub-agent execution %s; approve or deny that one", id, child)}
	}
	patch := domain.ExecutionPatch{Move: domain.MoveResume, From: domain.StatusAwaitingApproval}
	decision := domain.ApprovalDecision{Status: "approved", Comment: rv.Comment, DecidedBy: rv.DecidedBy, Answer: rv.Answer}
	if cur.Status == domain.StatusAwaitingApproval {
		pending, err := e.st.ApprovalPending(ctx, ws, id)
		if err != nil {
			return nil, err
		}
		if pending != nil {
			if decision.Calls, err = rv.decide(pending); err != nil {
				return nil, err
			}
			// The decisions go to the pass that resumes the run, fenced to the wait they decide.
			if patch.State, err = resumeState(cur, decision.Calls, rv); err != nil {
				return nil, err
			}
			attempt := cur.Attempt
			patch.Attempt = &attempt
		}
	}
	c := e.claim()
	patch.Claim = &c
	e.runs.claiming()
	defer e.runs.claimed()
	var x *domain.Execution
	err = e.st.InTx(ctx, func(tx Store) error {
		var err error
		if x, err = tx.ExecutionTransition(ctx, ws, id, domain.MoveResume.Status(), patch); err != nil {
			return err
		}
		if rv.BeforeDecide != nil {
			if err := rv.BeforeDecide(ctx, tx, x); err != nil {
				return err
			}
		}
		_, err = tx.ApprovalDecide(ctx, ws, id, decision)
		return err
	})
	if err != nil {
		return nil, err
	}
	e.start(x, nil, nil)
	e.changed(x.ID)
	return x, nil
}

// Deny ends an execution waiting for approval as rejected; decidedBy says who decided.
func (e *Engine) Deny(ctx context.Context, ws, id, reason, decidedBy string) (*domain.Execution, error) {
	x, err := e.st.ExecutionGet(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	if _, err := store.MoveTo(x, domain.MoveReject); err != nil {
		return nil, err
	}
	msg := "rejected at approval"
	if reason != "" {
		msg += ": " + reason
	}
	if err := e.closeDirect(ctx, x, domain.MoveReject, CodeRejected, msg, "denied", reason, decidedBy, false); err != nil {
		return nil, err
	}
	return e.st.ExecutionGet(ctx, ws, id)
}

// closeDirect ends an execution that no run of this process owns (pending, awaiting
// approval, or running on a node whose lease expired: expired must then be set): the status
// change, its terminal error frame, the trace, the approval decision and the chat session's
// release, in one transaction. code is the terminal frame's code. The frame's id is above
// every id a pass may have sent.
func (e *Engine) closeDirect(ctx context.Context, x *domain.Execution, m domain.ExecutionMove, code, msg, approval, reason, decidedBy string, expired bool) error {
	to, err := store.MoveTo(x, m)
	if err != nil {
		return err
	}
	now := domain.Now()
	dur := now.Sub(x.CreatedAt.Time).Milliseconds()
	err = e.st.InTx(ctx, func(tx Store) error {
		last, err := tx.EventLastSeq(ctx, x.ID)
		if err != nil {
			return err
		}
		seq := max(last, x.SeqReserved) + 1
		// Only from the status (and pass) x was read in: a run claimed meanwhile is not closed
		// under its feet.
		attempt := x.Attempt
		patch := domain.ExecutionPatch{Move: m, Error: &msg, CompletedAt: &now, DurationMS: &dur, ClearState: true, From: x.Status,
			SeqUsed: &seq, Attempt: &attempt, LeaseExpired: expired}
		if _, err := tx.ExecutionTransition(ctx, x.WorkspaceID, x.ID, to, patch); err != nil {
			return err
		}
		if err := tx.EventAppend(ctx, x.ID, []domain.Event{{Seq: seq, Event: "error", Data: errorFrame(msg, code)}}); err != nil {
			return err
		}
		if err := tx.TraceFinish(ctx, x.WorkspaceID, x.TraceID, to, x.TokenUsage, x.Cost, now, dur); err != nil {
			return err
		}
		if approval != "" {
			if _, err := tx.ApprovalDecide(ctx, x.WorkspaceID, x.ID, domain.ApprovalDecision{Status: approval, Reason: reason, DecidedBy: decidedBy}); err != nil {
				return err
			}
		}
		if x.SessionID != nil && x.ParentID == nil {
			return tx.ChatSessionUnlock(ctx, x.WorkspaceID, *x.SessionID, x.ID)
		}
		return nil
	})
	if err == nil {
		e.changed(x.ID)
		e.reportEnd(context.WithoutCancel(ctx), x, nil, to, dur, nil, nil)
		if x.ParentID != nil {
			e.resumeParent(x.WorkspaceID, *x.ParentID)
		}
	}
	return err
}

func isTransition(err error) bool {
	var te *store.TransitionError
	return errors.As(err, &te)
}

// Running returns a Waiter for an execution whose run is in progress in this process, so a
// second caller can wait for a run another request started.
func (e *Engine) Running(id string) (*Waiter, bool) {
	h := e.runs.get(id)
	if h == nil {
		return nil, false
	}
	return &Waiter{h: h}, true
}

// Subscribe follows the frames of an execution running in this process.
func (e *Engine) Subscribe(id string) (*Subscription, bool) { return e.hub.Subscribe(id) }

// Follow follows an execution that may run on another node: the feed hears its frames and
// status changes from there. Close it when done. On a single node it never changes, and
// costs nothing.
func (e *Engine) Follow(id string) *Feed {
	if e.notify.cl == nil {
		return &Feed{}
	}
	return e.notify.cl.follow(id)
}

// Models is how model calls are answered: "real" or "simulated".
func (e *Engine) Models() string { return e.router.Mode() }

// ValidateCredential checks a credential against its service.
func (e *Engine) ValidateCredential(ctx context.Context, ws string, c *domain.Credential) (*Validation, error) {
	return e.router.Validate(ctx, ws, c)
}

// model returns the catalog or workspace entry of a model id, nil when there is none.
// Catalog entries are cached for the engine's life: they are read-only, and a workspace
// cannot register a catalog id, so a cached entry is always the one a lookup would find.
func (e *Engine) model(ctx context.Context, ws, id string) (*domain.LLMModel, error) {
	if v, ok := e.catalog.Load(id); ok {
		return v.(*domain.LLMModel), nil
	}
	m, err := e.st.LLMModelGet(ctx, ws, id)
	if store.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if m.Source == domain.ModelSourceCatalog {
		e.catalog.Store(id, m)
	}
	return m, nil
}

// price is the USD cost of a model call at the model's per-million-token prices (0 for a
// model outside the catalog and the workspace's models).
func price(m *domain.LLMModel, u llm.Usage) float64 {
	if m == nil {
		return 0
	}
	return (float64(u.PromptTokens)*m.InputPricePerMillion + float64(u.CompletionTokens)*m.OutputPricePerMillion) / 1e6
}
