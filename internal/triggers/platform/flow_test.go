package platform

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// hookEndpoint is the smallest hook endpoint built on this package, the way the triggers API uses
// it: verify (401), parse (400), answer Respond as is, run each DedupKey once, reply. The "agent"
// echoes the text.
type hookEndpoint struct {
	typ  string
	cfg  Config
	cred Credential
	hc   *http.Client

	mu   sync.Mutex
	seen map[string]bool
	runs []*Event
}

func (h *hookEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, ok := For(h.typ)
	if !ok {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := p.Verify(r, body, h.cfg, time.Now()); err != nil {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	ev, err := p.Parse(r, body, h.cfg)
	if err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	write := func(resp *Response) {
		w.Header().Set("Content-Type", resp.ContentType)
		w.WriteHeader(resp.Status)
		w.Write(resp.Body)
	}
	if ev.Respond != nil {
		write(ev.Respond)
		return
	}
	h.mu.Lock()
	dup := ev.DedupKey != "" && h.seen[ev.DedupKey]
	h.seen[ev.DedupKey] = true
	if !dup {
		h.runs = append(h.runs, ev)
	}
	h.mu.Unlock()
	if dup {
		write(ignored())
		return
	}
	answer := "you said: " + ev.Text
	resp, err := p.Reply(r.Context(), h.hc, h.cred, ev, answer)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if p.Sync() {
		write(resp)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func TestHookFlowSlack(t *testing.T) {
	t.Parallel()
	slackAPI := newFakeAPI(t, func(int) (int, string) { return 200, `{"ok":true,"ts":"2.0"}` })
	h := &hookEndpoint{typ: "slack", cfg: Config{"signing_secret": "sec"}, cred: Credential{Token: "xoxb-1", BaseURL: slackAPI.URL}, hc: slackAPI.Client(), seen: map[string]bool{}}
	hook := httptest.NewServer(h)
	defer hook.Close()

	send := func(body, secret string, retry int) (int, string) {
		ts := fmt.Sprint(time.Now().Unix())
		req, _ := http.NewRequest(http.MethodPost, hook.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", slackSign(secret, ts, body))
		if retry > 0 {
			req.Header.Set("X-Slack-Retry-Num", fmt.Sprint(retry))
			req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
		}
		resp, err := hook.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	if code, body := send(`{"token":"t","challenge":"abc123","type":"url_verification"}`, "sec", 0); code != 200 || body != "abc123" {
		t.Fatalf("url_verification: %d %q", code, body)
	}
	event := mustJSON(t, slackCallback(map[string]any{"type": "app_mention", "channel": "C1", "user": "U1", "text": "<@UBOT> ping", "ts": "1.0"}))
	if code, _ := send(event, "wrong", 0); code != 401 {
		t.Fatalf("bad signature: %d", code)
	}
	if code, _ := send(event, "sec", 0); code != 200 {
		t.Fatalf("event: %d", code)
	}
	if code, _ := send(event, "sec", 1); code != 200 {
		t.Fatalf("retry: %d", code)
	}
	own := mustJSON(t, slackCallback(map[string]any{"type": "message", "channel": "C1", "bot_id": "B1", "text": "you said: ping", "ts": "2.0", "thread_ts": "1.0"}))
	if code, _ := send(own, "sec", 0); code != 200 {
		t.Fatalf("own message: %d", code)
	}

	if len(h.runs) != 1 {
		t.Fatalf("%d runs, want 1 (retry and own message run nothing)", len(h.runs))
	}
	reqs := slackAPI.requests()
	if len(reqs) != 1 || reqs[0].Body["text"] != "you said: ping" || reqs[0].Body["thread_ts"] != "1.0" {
		t.Fatalf("Slack got %+v", reqs)
	}
}

func TestHookFlowTeams(t *testing.T) {
	t.Parallel()
	h := &hookEndpoint{typ: "teams", cfg: Config{"hmac_secret": teamsSecret}, seen: map[string]bool{}}
	hook := httptest.NewServer(h)
	defer hook.Close()
	req, _ := http.NewRequest(http.MethodPost, hook.URL, strings.NewReader(teamsBody))
	req.Header.Set("Authorization", teamsAuth)
	resp, err := hook.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var msg map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || msg["type"] != "message" || msg["text"] != "you said: what is the weather today?" {
		t.Fatalf("Teams got %d %v", resp.StatusCode, msg)
	}
}
