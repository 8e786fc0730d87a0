package studio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/cli"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

// signInKey opens Studio at base and signs in with an API key, until the agents list.
func (b *browser) signInKey(key string) {
	b.t.Helper()
	b.run(
		chromedp.Navigate(b.base+"/studio"),
		chromedp.WaitVisible(chromedp.CSS("#login-key")),
		chromedp.SendKeys(chromedp.CSS("#login-key"), key),
		chromedp.Click(chromedp.CSS("#key-submit")),
		chromedp.WaitVisible(chromedp.CSS("#new-agent")),
	)
}

// drawn is true once the page of the hash the expression gives is drawn (app.js sets
// main's data-route when a page has rendered).
func drawn(hashExpr string) string {
	return `document.querySelector('main').dataset.route === ` + hashExpr
}

// tracesFixture is a workspace with one run, one rich ingested trace (a checkout: nested
// spans, a model call with messages, markdown output and an event, a failed tool call) and
// 26 one-span traces of a batch service: 28 traces, two pages of Studio's 25.
type tracesFixture struct {
	base, key string
	c         *client.Client
	agentID   string
	run       *client.Execution
}

func newTracesFixture(t *testing.T) *tracesFixture {
	t.Helper()
	base, email, password := startServe(t)
	key := createKeyViaAPI(t, base, email, password)
	c := client.New(base, client.WithAPIKey(key))
	ctx := context.Background()
	agent, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Support", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Execute(ctx, agent.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}, EndUserID: "eu-1"})
	if err != nil {
		t.Fatal(err)
	}
	spans := checkoutSpans(time.Now().UTC().Add(-time.Minute))
	res, err := c.IngestSpans(ctx, spans)
	if err != nil || res.Rejected != 0 {
		t.Fatalf("ingest: %+v %v", res, err)
	}
	return &tracesFixture{base: base, key: key, c: c, agentID: agent.ID, run: run}
}

// checkoutSpans is an ingested trace of a checkout service from t0: a root, an agent span,
// a model call under it (messages in, markdown out, an event) and a failed tool call, then
// 26 one-span traces of a batch service.
func checkoutSpans(t0 time.Time) []client.IngestSpan {
	at := func(ms int) *time.Time { v := t0.Add(time.Duration(ms) * time.Millisecond); return &v }
	str := func(s string) *string { return &s }
	checkout := str("checkout")
	spans := []client.IngestSpan{
		{ID: "root", TraceID: "checkout-1", Name: "handle order", StartedAt: at(0), EndedAt: *at(2000), ServiceName: *checkout,
			EndUserID: "eu-2", SessionID: "s-9", Input: json.RawMessage(`{"order":42}`)},
		{ID: "plan", TraceID: "checkout-1", ParentID: "root", Name: "plan", Kind: "agent", StartedAt: at(100), EndedAt: *at(1500), ServiceName: *checkout},
		{ID: "llm", TraceID: "checkout-1", ParentID: "plan", Name: "chat gpt-4o-mini", StartedAt: at(200), EndedAt: *at(1200), ServiceName: *checkout,
			Model: "gpt-4o-mini", TokenUsage: client.TokenUsage{PromptTokens: client.Ptr(int64(1200)), CompletionTokens: client.Ptr(int64(300))},
			Input:  json.RawMessage(`{"messages":[{"role":"system","content":"You track orders."},{"role":"user","content":"Where is order 42?"}]}`),
			Output: json.RawMessage(`{"content":"**Order 42** shipped.\n\n- arrives Friday\n- signed for"}`),
			Attributes: map[string]any{"temperature": 0.2, "otel.events": []any{map[string]any{"name": "retry", "time": at(700).Format(time.RFC3339Nano),
				"attributes": map[string]any{"attempt": 2}}}}},
		{ID: "tool", TraceID: "checkout-1", ParentID: "root", Name: "lookup_order", Kind: "tool", StartedAt: at(1500), EndedAt: *at(1900),
			ServiceName: *checkout, Error: "timeout after 400 ms"},
	}
	for i := range 26 {
		spans = append(spans, client.IngestSpan{ID: "s", TraceID: fmt.Sprintf("batch-%02d", i), Name: fmt.Sprintf("batch %d", i),
			StartedAt: at(3000 + i*20), EndedAt: *at(3010 + i*20), ServiceName: "batch"})
	}
	return spans
}

// total is the API's count of traces for a query of GET /traces: the oracle of the page.
func (f *tracesFixture) total(t *testing.T, q url.Values) int {
	t.Helper()
	q.Set("limit", "1")
	_, body := apiGet(t, f.base, "/api/v1/traces?"+q.Encode(), map[string][]string{"X-API-Key": {f.key}})
	p, _ := body["pagination"].(map[string]any)
	if p == nil {
		t.Fatalf("GET /traces?%s: %v", q.Encode(), body)
	}
	return int(p["total"].(float64))
}

// TestStudioTraces: the Traces page lists runs and ingested traces a page at a time from the
// server, each filter narrows it to what the API says, and the trace view draws every span
// on a time line, folds the tree, and shows a span's model, tokens, messages, markdown
// output, attributes and events.
func TestStudioTraces(t *testing.T) {
	t.Parallel()
	f := newTracesFixture(t)
	b := newBrowser(t, f.base)
	b.signInKey(f.key)

	// Every trace, 25 a page: the run's and the 27 ingested.
	b.run(hash("#/traces"), until(`document.querySelectorAll('#traces tbody tr').length === 25`))
	if got := b.text(`[aria-label="Pages"] span`); got != "Page 1 of 2 (28 in all)" {
		t.Errorf("pager %q", got)
	}
	b.shot("traces")
	b.run(chromedp.Click(chromedp.CSS(`[aria-label="Pages"] button:last-child`)),
		until(`document.querySelectorAll('#traces tbody tr').length === 3`))

	// Each filter, set in the form, narrows the list to the API's count for it.
	filters := []struct {
		name   string
		set    map[string]string // control id → value
		query  url.Values
		want   int
		wantID string
	}{
		{"service", map[string]string{"#t-service": "checkout"}, url.Values{"service_name": {"checkout"}}, 1, "checkout-1"},
		{"end user", map[string]string{"#t-end-user": "eu-1"}, url.Values{"end_user_id": {"eu-1"}}, 1, f.run.TraceID},
		{"session", map[string]string{"#t-session": "s-9"}, url.Values{"session_id": {"s-9"}}, 1, "checkout-1"},
		{"agent", map[string]string{"#t-agent": f.agentID}, url.Values{"agent_id": {f.agentID}}, 1, f.run.TraceID},
		{"status", map[string]string{"#t-status": "failed"}, url.Values{"status": {"failed"}}, 1, "checkout-1"},
		{"latency", map[string]string{"#t-min-ms": "1000", "#t-max-ms": "5000"}, url.Values{"min_duration_ms": {"1000"}, "max_duration_ms": {"5000"}}, 1, "checkout-1"},
		{"cost", map[string]string{"#t-min-cost": "0.0001"}, url.Values{"min_cost": {"0.0001"}}, 1, "checkout-1"},
		{"service and latency", map[string]string{"#t-service": "batch", "#t-max-ms": "10"}, url.Values{"service_name": {"batch"}, "max_duration_ms": {"10"}}, 26, ""},
	}
	for _, fl := range filters {
		b.run(hash("#/traces"), until(drawn(`'#/traces'`)))
		for sel, v := range fl.set {
			b.run(chromedp.SetValue(chromedp.CSS(sel), v))
		}
		b.run(chromedp.Click(chromedp.CSS("#t-apply")), until(drawn(`location.hash`)+` && location.hash.includes('?')`))
		api := f.total(t, fl.query)
		rows := js[int](b, `document.querySelectorAll('#traces tbody tr').length`)
		if api != fl.want || min(api, 25) != rows {
			t.Errorf("filter %s: %d rows, the API counts %d, want %d", fl.name, rows, api, fl.want)
		}
		if fl.wantID != "" && rows == 1 {
			if id := js[string](b, `document.querySelector('#traces tbody tr').dataset.trace`); id != fl.wantID {
				t.Errorf("filter %s shows %s, want %s", fl.name, id, fl.wantID)
			}
		}
	}
	// A time range before anything: nothing, said so.
	b.run(hash("#/traces"), until(drawn(`'#/traces'`)),
		chromedp.SetValue(chromedp.CSS("#t-to"), time.Now().Add(-24*time.Hour).Format("2006-01-02T15:04")),
		chromedp.Click(chromedp.CSS("#t-apply")), chromedp.WaitVisible(chromedp.CSS("#traces-empty")))
	if !strings.Contains(js[string](b, `location.hash`), "created_before=") {
		t.Errorf("the time filter is not in the page's address: %s", js[string](b, `location.hash`))
	}

	// The trace view: one waterfall row per span, each bar placed on the trace's time line.
	b.run(hash("#/traces?service_name=checkout"), chromedp.WaitVisible(chromedp.CSS(`#traces tbody tr a`)),
		chromedp.Click(chromedp.CSS(`#traces tbody tr a`)), chromedp.WaitVisible(chromedp.CSS("#waterfall")))
	if rows, count := js[int](b, `document.querySelectorAll('#waterfall tbody tr').length`), b.text("#trace-span-count"); fmt.Sprint(rows) != count || rows != 4 {
		t.Errorf("the waterfall has %d rows, span_count %s, want 4", rows, count)
	}
	// Bars: the root spans the whole time line (2 s); the tool call starts at 1.5 s of it.
	bars := js[[]float64](b, `['root', 'tool'].map(id => { const b = document.querySelector('tr[data-span="' + id + '"] .bar');
		return [parseFloat(b.style.marginLeft), parseFloat(b.style.width)]; }).flat()`)
	if len(bars) != 4 || bars[0] != 0 || bars[1] < 99.9 || bars[2] < 74.9 || bars[2] > 75.1 || bars[3] < 19.9 || bars[3] > 20.1 {
		t.Errorf("bars (left %%, width %%) of root and tool: %v", bars)
	}
	if got := js[[]string](b, `[...document.querySelectorAll('#waterfall tbody tr')].map(r => r.dataset.depth)`); strings.Join(got, ",") != "0,1,2,1" {
		t.Errorf("depths %v, want the tree 0,1,2,1", got)
	}

	// Pick the model call: its model, tokens, messages, markdown output, attributes and events.
	b.run(chromedp.Click(chromedp.CSS(`tr[data-span="llm"]`)), until(`document.querySelector('#span-title').textContent === 'chat gpt-4o-mini'`))
	panel := b.text("#span-panel")
	for _, want := range []string{"gpt-4o-mini", "1500 (1200 prompt, 300 completion)", "$0.000"} {
		if !strings.Contains(panel, want) {
			t.Errorf("the span panel lacks %q:\n%s", want, panel)
		}
	}
	if got := js[[]string](b, `[...document.querySelectorAll('#span-input .turn .role')].map(e => e.textContent)`); strings.Join(got, ",") != "system,user" {
		t.Errorf("input turns %v", got)
	}
	if got := js[string](b, `document.querySelector('#span-output .md strong')?.textContent + '|' + [...document.querySelectorAll('#span-output .md li')].length`); got != "Order 42|2" {
		t.Errorf("output markdown: %q", got)
	}
	if got := b.text("#span-events"); !strings.Contains(got, "retry") || !strings.Contains(got, "attempt") {
		t.Errorf("events %q", got)
	}
	if got := b.text("#span-attributes"); !strings.Contains(got, "temperature") || strings.Contains(got, "otel.events") {
		t.Errorf("attributes %q", got)
	}
	b.shot("trace")
	// The failed tool call shows its error.
	b.run(chromedp.Click(chromedp.CSS(`tr[data-span="tool"]`)), until(`document.querySelector('#span-error')?.textContent === 'timeout after 400 ms'`))

	// Folding the root hides its three descendants; unfolding shows them again.
	visible := `[...document.querySelectorAll('#waterfall tbody tr')].filter(r => !r.hidden).length`
	b.run(chromedp.Click(chromedp.CSS(`tr[data-span="root"] button.fold`)), until(visible+` === 1`))
	b.run(chromedp.Click(chromedp.CSS(`tr[data-span="root"] button.fold`)), until(visible+` === 4`))

	// A run's trace opens from the list to the same view, and links to its execution.
	b.run(hash("#/traces/"+f.run.TraceID), chromedp.WaitVisible(chromedp.CSS("#waterfall")))
	if rows, count := js[int](b, `document.querySelectorAll('#waterfall tbody tr').length`), b.text("#trace-span-count"); fmt.Sprint(rows) != count || rows < 2 {
		t.Errorf("the run's waterfall has %d rows, span_count %s", rows, count)
	}
	if href := js[string](b, `document.querySelector('#trace-meta a[href^="#/executions/"]').getAttribute('href')`); href != "#/executions/"+f.run.ID {
		t.Errorf("execution link %q", href)
	}
	b.noConsoleErrors()
}

// TestStudioExecutionsAndUsage: the executions list narrows by agent, status, source, end
// user and time to the API's counts, and the usage page sums runs, tokens and cost by model
// and by end user to what the executions say.
func TestStudioExecutionsAndUsage(t *testing.T) {
	t.Parallel()
	f := newTracesFixture(t)
	ctx := context.Background()
	writer, err := f.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Writer", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, eu := range []string{"eu-2", "eu-2", ""} {
		if _, err := f.c.Execute(ctx, writer.ID, client.ExecuteRequest{Input: map[string]any{"message": "write " + eu}, EndUserID: eu}); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t, f.base)
	b.signInKey(f.key)
	hdr := map[string][]string{"X-API-Key": {f.key}}
	apiTotal := func(q url.Values) int {
		_, body := apiGet(t, f.base, "/api/v1/executions?"+q.Encode(), hdr)
		return int(body["pagination"].(map[string]any)["total"].(float64))
	}
	yesterday := time.Now().Add(-24 * time.Hour)
	for _, fl := range []struct {
		name  string
		set   map[string]string
		query url.Values
		want  int
	}{
		{"agent", map[string]string{"#f-agent": writer.ID}, url.Values{"agent_id": {writer.ID}}, 3},
		{"end user", map[string]string{"#f-end-user": "eu-2"}, url.Values{"end_user_id": {"eu-2"}}, 2},
		{"status and source", map[string]string{"#f-status": "completed", "#f-source": "api"}, url.Values{"status": {"completed"}, "source": {"api"}}, 4},
		{"agent and end user", map[string]string{"#f-agent": f.agentID, "#f-end-user": "eu-1"}, url.Values{"agent_id": {f.agentID}, "end_user_id": {"eu-1"}}, 1},
		{"time", map[string]string{"#f-to": yesterday.Format("2006-01-02T15:04")}, url.Values{"created_before": {yesterday.UTC().Format(time.RFC3339)}}, 0},
	} {
		b.run(hash("#/executions"), until(drawn(`'#/executions'`)))
		for sel, v := range fl.set {
			b.run(chromedp.SetValue(chromedp.CSS(sel), v))
		}
		b.run(chromedp.Click(chromedp.CSS("#f-apply")), until(drawn(`location.hash`)+` && location.hash.includes('?')`))
		rows := js[int](b, `document.querySelectorAll('#executions tbody tr').length`)
		if api := apiTotal(fl.query); api != fl.want || rows != api {
			t.Errorf("filter %s: %d rows, the API counts %d, want %d", fl.name, rows, api, fl.want)
		}
	}
	b.run(hash("#/executions?end_user_id=eu-2"), until(drawn(`location.hash`)))
	b.shot("executions-filtered")

	// Usage: by model and by end user (runs without one are not listed), summed from the
	// executions themselves: the model that answered each run.
	_, body := apiGet(t, f.base, "/api/v1/executions?limit=100", hdr)
	type sums struct {
		runs int
		cost float64
	}
	byModel, byUser := map[string]sums{}, map[string]sums{}
	for _, x := range body["data"].([]any) {
		x := x.(map[string]any)
		model, _ := x["model"].(string)
		if model == "" {
			model = "(no model call)"
		}
		c := x["cost"].(float64)
		byModel[model] = sums{byModel[model].runs + 1, byModel[model].cost + c}
		if user, _ := x["end_user_id"].(string); user != "" {
			byUser[user] = sums{byUser[user].runs + 1, byUser[user].cost + c}
		}
	}
	b.run(hash("#/usage"), until(`document.querySelectorAll('#usage-by-model tbody tr').length > 0`))
	check := func(table string, want map[string]sums) {
		got := js[[][]string](b, `[...document.querySelectorAll('#`+table+` tbody tr')].map(r => [r.dataset.key, r.cells[1].textContent, r.cells[5].dataset.cost])`)
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", table, got, want)
		}
		for _, row := range got {
			w, ok := want[row[0]]
			c, _ := strconv.ParseFloat(row[2], 64)
			if !ok || row[1] != strconv.Itoa(w.runs) || math.Abs(c-w.cost) > 1e-9 {
				t.Errorf("%s row %v, want %+v", table, row, w)
			}
		}
	}
	check("usage-by-model", byModel)
	check("usage-by-end-user", byUser)
	if len(byModel) != 2 || byUser["eu-2"].runs != 2 {
		t.Errorf("fixture: %v %v", byModel, byUser)
	}
	b.shot("usage-breakdown")
	b.noConsoleErrors()
}

// TestStudioTraceImageAsset: on `serve` with real models (a fake Gemini speaking its wire
// format), a model reply's image is stored as an asset of the run, and the trace view shows
// it in the model call's panel, fetched with the key.
func TestStudioTraceImageAsset(t *testing.T) {
	t.Parallel()
	base, _, key, c := startServeKey(t, cli.ModelsReal)
	ctx := context.Background()
	fake := llmtest.NewGemini()
	t.Cleanup(fake.Close)
	if _, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "gemini", Type: "api_key", Provider: "google",
		Value: "AIzaTESTgeminiKey000000000000000000wxyz", Metadata: map[string]any{"base_url": fake.URL}}); err != nil {
		t.Fatal(err)
	}
	a, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Painter", Type: "simple", Config: client.AgentConfig{Model: "gemini-2.5-flash"}})
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 12, 8))
	for i := range img.Pix {
		img.Pix[i] = 0xC0
	}
	var pngData bytes.Buffer
	if err := png.Encode(&pngData, img); err != nil {
		t.Fatal(err)
	}
	fake.Push(llmtest.Reply{Text: []string{"Here is a grey square."}, Images: []llmtest.Image{{MimeType: "image/png", Data: pngData.Bytes()}}})
	x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Draw a square"}})
	if err != nil || x.Status != "completed" {
		t.Fatalf("execute: %+v %v", x, err)
	}
	b := newBrowser(t, base)
	b.signInKey(key)
	b.run(hash("#/traces/"+x.TraceID), until(drawn(`location.hash`)),
		chromedp.Click(chromedp.CSS(`#waterfall tbody tr:has(.k-llm)`)),
		until(`document.querySelector('#span-assets img')?.naturalWidth === 12`))
	if got := b.text("#span-assets figcaption"); !strings.Contains(got, "image/png") {
		t.Errorf("asset caption %q", got)
	}
	b.shot("image-asset")
	b.noConsoleErrors()
}
