package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentplane/agentplane/internal/claimloop"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/egress"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// Delivery defaults.
const (
	// AttemptTimeout bounds one attempt: connecting, sending and the receiver's answer.
	AttemptTimeout = 10 * time.Second
	// RetryFor is how long after the execution ended a delivery is tried; then it fails.
	RetryFor = domain.DefaultDeliveryWindow
	// DefaultPoll is how often an idle deliverer looks for due deliveries.
	DefaultPoll = time.Second
	// DefaultConcurrency is how many attempts one deliverer makes at once.
	DefaultConcurrency = 8
	// DefaultRetention is how long delivered and failed deliveries are kept.
	DefaultRetention = 30 * 24 * time.Hour
	// pruneEvery is how often a deliverer deletes settled deliveries past the retention.
	pruneEvery = time.Hour
	// lease is how long a claimed attempt is this node's: well above AttemptTimeout, so an
	// attempt in progress is never taken by another node; a node that stops mid-attempt
	// leaves the row to be taken again when it expires.
	lease = time.Minute
)

// backoff is the pause after the n-th failed attempt (the last value repeats).
var backoff = []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}

// Backoff is the pause after the attempt-th failed attempt (1-based), with jitter in [0, 1)
// spreading it over ±20% so receivers that failed together are not retried together.
func Backoff(attempt int, jitter float64) time.Duration {
	base := backoff[min(max(attempt, 1), len(backoff))-1]
	return time.Duration(float64(base) * (0.8 + 0.4*jitter))
}

// TriggerWebhookFunc finds the completion webhook of an agent trigger: its URL and signing
// secret (plaintext), ok false when it has none (or the trigger is gone). It is called inside
// the transaction that ends an execution whose metadata.trigger_id is set, and must read
// through tx. An error rolls the execution's end back (the runtime tries again), so return
// one only when the database fails; a secret that cannot be decrypted is logged and ok false.
type TriggerWebhookFunc func(ctx context.Context, tx *store.Store, ws, triggerID string) (url, secret string, ok bool, err error)

// Config is what a Deliverer needs.
type Config struct {
	Store   Store
	Secrets *secretbox.Box
	Logger  *slog.Logger
	// Node names this process in the leases of the attempts it makes.
	Node string
	// Guard is the egress policy (serve --deny-private-egress) webhook URLs are held to.
	Guard egress.Guard
	// Client sends the attempts; nil builds one on Guard that follows no redirects.
	Client *http.Client
	// Now is the clock of schedules and signatures (time.Now when nil); tests move it.
	Now func() time.Time
	// Jitter returns a number in [0, 1) for the backoff's jitter (random when nil).
	Jitter func() float64
	// Poll is how often an idle deliverer looks for due rows (DefaultPoll when zero).
	Poll time.Duration
	// Concurrency is how many attempts run at once (DefaultConcurrency when zero).
	Concurrency int
	// TriggerWebhook finds a trigger's webhook; nil until agent triggers have webhooks.
	TriggerWebhook TriggerWebhookFunc
	// Retention is how long delivered and failed deliveries are kept (DefaultRetention when
	// zero; negative keeps them forever).
	Retention time.Duration
}

// Deliverer writes the outbox (as the store's terminal hook) and sends what is due.
type Deliverer struct {
	cfg    Config
	st     Store
	box    *secretbox.Box
	log    *slog.Logger
	client *http.Client
	ownsTr *http.Transport // the transport of the client New built, closed by Stop

	loop   *claimloop.Loop[*domain.WebhookDelivery]
	pruned time.Time // when the loop last pruned (only the loop reads and writes it)
}

// New returns a Deliverer and installs its outbox writer as the store's terminal hook.
func New(cfg Config) *Deliverer {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Jitter == nil {
		cfg.Jitter = randFloat
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.Node == "" {
		cfg.Node = "webhooks-" + store.NewID()
	}
	d := &Deliverer{cfg: cfg, st: cfg.Store, box: cfg.Secrets, log: cfg.Logger.With("component", "webhooks")}
	d.loop = claimloop.New(claimloop.Config[*domain.WebhookDelivery]{Slots: cfg.Concurrency, Poll: cfg.Poll, Claim: d.claim,
		Attempt: d.attempt, BeforeLook: d.prune, Logger: d.log, What: "webhook deliveries"})
	d.client = cfg.Client
	if d.client == nil {
		d.ownsTr = cfg.Guard.Transport(nil)
		d.client = &http.Client{Transport: d.ownsTr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect is an answer, not a delivery
		}}
	}
	cfg.Store.SetTerminalHook(d.enqueue)
	return d
}

func randFloat() float64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return float64(binary.BigEndian.Uint64(b[:])>>11) / (1 << 53)
}

// payload is the body of every message, the Standard Webhooks shape.
type payload struct {
	Type      string            `json:"type"`
	Timestamp domain.Time       `json:"timestamp"`
	Data      *domain.Execution `json:"data"`
}

type target struct{ kind, id, url, secret string }

// enqueue writes the outbox rows of an execution that just ended, in the transaction that
// ends it. Child executions (steps, sub-agents) are part of their root's run and send none.
func (d *Deliverer) enqueue(ctx context.Context, tx *store.Store, x *domain.Execution) error {
	if x.ParentID != nil {
		return nil
	}
	var targets []target
	url, sealed, ok, err := tx.AgentWebhook(ctx, x.WorkspaceID, x.AgentID)
	if err != nil {
		return err
	}
	if ok {
		secret, err := d.box.Open(x.WorkspaceID, x.AgentID, sealed)
		if err != nil {
			// The run must end all the same: the message is lost, and the log says why.
			d.log.Error("agent webhook secret cannot be decrypted; no webhook sent (was the secret key changed?)",
				"agent_id", x.AgentID, "execution_id", x.ID)
		} else {
			targets = append(targets, target{"agent", x.AgentID, url, secret})
		}
	}
	if tid, _ := x.Metadata["trigger_id"].(string); tid != "" && d.cfg.TriggerWebhook != nil {
		url, secret, ok, err := d.cfg.TriggerWebhook(ctx, tx, x.WorkspaceID, tid)
		if err != nil {
			return fmt.Errorf("webhook of trigger %s: %w", tid, err)
		}
		if ok {
			targets = append(targets, target{"trigger", tid, url, secret})
		}
	}
	if len(targets) == 0 {
		return nil
	}
	at := domain.Now()
	if x.CompletedAt != nil {
		at = *x.CompletedAt
	}
	body, err := json.Marshal(payload{Type: "execution." + x.Status, Timestamp: at, Data: x})
	if err != nil {
		return fmt.Errorf("encode webhook payload of %s: %w", x.ID, err)
	}
	for _, t := range targets {
		id := store.NewID()
		err := tx.WebhookDeliveryCreate(ctx, &domain.WebhookDelivery{ID: id, WorkspaceID: x.WorkspaceID, ExecutionID: x.ID,
			TargetType: t.kind, TargetID: t.id, URL: t.url, EventType: "execution." + x.Status, Payload: body,
			Secret: d.box.Seal(x.WorkspaceID, id, t.secret)})
		if err != nil {
			return err
		}
	}
	d.loop.Nudge()
	return nil
}

// Start runs the delivery loop until Stop. Calling it again does nothing.
func (d *Deliverer) Start(context.Context) { d.loop.Start() }

// Stop ends the loop, lets attempts in progress finish until ctx ends, then cancels the rest
// (recorded as failed attempts, retried later by any node). The store hook stays: runs that
// end after Stop still write their outbox rows, for the next start or another node to send.
// Safe to call twice.
func (d *Deliverer) Stop(ctx context.Context) {
	d.loop.Stop(ctx)
	if d.ownsTr != nil {
		d.ownsTr.CloseIdleConnections()
	}
}

// prune runs Prune every pruneEvery, before a look of the loop.
func (d *Deliverer) prune() {
	if time.Since(d.pruned) < pruneEvery {
		return
	}
	d.pruned = time.Now()
	if _, err := d.Prune(context.Background()); err != nil {
		d.log.Error("prune webhook deliveries", "error", err)
	}
}

// claim takes at most limit due deliveries (by the configured clock) for this node.
func (d *Deliverer) claim(ctx context.Context, limit int) ([]*domain.WebhookDelivery, error) {
	return d.st.WebhookDeliveryClaim(ctx, d.cfg.Node, d.cfg.Now(), lease, limit)
}

// Prune deletes the delivered and failed deliveries last changed more than the retention
// ago (by the configured clock), in batches; it returns how many it deleted. Every node may
// run it: a row is deleted once.
func (d *Deliverer) Prune(ctx context.Context) (int, error) {
	if d.cfg.Retention < 0 {
		return 0, nil
	}
	before := d.cfg.Now().Add(-d.cfg.Retention)
	total := 0
	for {
		n, err := d.st.WebhookDeliveryPrune(ctx, before, 1000)
		total += n
		if err != nil || n < 1000 {
			return total, err
		}
	}
}

// RunDue claims every delivery due now (by the configured clock), sends them and waits for
// the outcomes; it returns how many attempts it made. Tests drive the outbox with it.
func (d *Deliverer) RunDue(ctx context.Context) (int, error) { return d.loop.RunDue(ctx, 100) }

// attempt sends one claimed delivery and records the outcome.
func (d *Deliverer) attempt(ctx context.Context, dl *domain.WebhookDelivery) {
	now := d.cfg.Now()
	res := domain.WebhookAttempt{At: now}
	permanent := false
	secret, err := d.box.Open(dl.WorkspaceID, dl.ID, dl.Secret)
	if err != nil {
		res.Error, permanent = "the signing secret cannot be decrypted (the server's secret key changed)", true
	} else {
		res.ResponseCode, res.Error, permanent = d.send(ctx, dl, secret, now)
	}
	switch {
	case res.Error == "":
		res.Status = domain.DeliveryDelivered
	case permanent:
		res.Status = domain.DeliveryFailed
	default:
		res.Status, res.Next = domain.DeliveryPending, now.Add(Backoff(dl.Attempts, d.cfg.Jitter()))
		if res.Next.After(dl.ExpiresAt.Time) {
			res.Status = domain.DeliveryFailed
			res.Error += fmt.Sprintf("; giving up after %d attempts (retries end at %s)", dl.Attempts, dl.ExpiresAt.UTC().Format(time.RFC3339))
		}
	}
	ok, err := d.st.WebhookDeliveryRecord(context.WithoutCancel(ctx), dl.ID, d.cfg.Node, dl.Attempts, res)
	switch {
	case err != nil:
		// The lease expires and the attempt is made again: at least once, never lost.
		d.log.Error("record webhook attempt", "delivery_id", dl.ID, "error", err)
	case !ok:
		d.log.Warn("webhook attempt outlived its lease; another node took the delivery over", "delivery_id", dl.ID)
	case res.Status == domain.DeliveryFailed:
		d.log.Warn("webhook delivery failed", "delivery_id", dl.ID, "execution_id", dl.ExecutionID, "attempts", dl.Attempts, "error", res.Error)
	case res.Status == domain.DeliveryPending:
		d.log.Info("webhook attempt failed; retrying", "delivery_id", dl.ID, "attempt", dl.Attempts, "code", res.ResponseCode,
			"error", res.Error, "next_attempt_at", res.Next)
	}
}

// send makes one signed POST. It returns the response code (0 without an answer), an error
// text ("" for a 2xx) and whether retrying is pointless.
func (d *Deliverer) send(ctx context.Context, dl *domain.WebhookDelivery, secret string, now time.Time) (int, string, bool) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return 0, "the signing secret is not valid base64", true
	}
	sig, err := wh.Sign(dl.ID, now, dl.Payload)
	if err != nil {
		return 0, "sign: " + err.Error(), true
	}
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, dl.URL, bytes.NewReader(dl.Payload))
	if err != nil {
		return 0, "invalid URL: " + err.Error(), true
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "agentplane-webhooks/1")
	h.Set(standardwebhooks.HeaderWebhookID, dl.ID)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, sig)
	resp, err := d.client.Do(req)
	if err != nil {
		var denied *egress.DeniedError
		switch {
		case errors.As(err, &denied):
			return 0, denied.Error(), true
		case errors.Is(err, context.DeadlineExceeded) && d.loop.Context().Err() == nil && ctx.Err() != nil:
			return 0, fmt.Sprintf("no answer within %s", AttemptTimeout), false
		case ctx.Err() != nil:
			return 0, "interrupted: the server stopped during the attempt", false
		}
		return 0, "request failed: " + errText(err), false
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, "", false
	}
	msg := "receiver answered " + resp.Status
	if s := cleanSnippet(snippet); s != "" {
		msg += ": " + s
	}
	return resp.StatusCode, msg, false
}

// errText is a transport error without Go's "Post \"url\": " prefix.
func errText(err error) string {
	s := err.Error()
	if i := strings.Index(s, "\": "); i >= 0 && strings.HasPrefix(s, "Post \"") {
		s = s[i+3:]
	}
	return s
}

// cleanSnippet is the start of a response body, as valid single-line text.
func cleanSnippet(b []byte) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "")), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
