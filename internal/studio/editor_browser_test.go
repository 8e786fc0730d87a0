package studio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/cli"
	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
)

// setInput sets a form control's value as a person would: the value, then its input and
// change events (chromedp.SetValue fires neither).
func (b *browser) setInput(sel, value string) {
	b.t.Helper()
	js[bool](b, fmt.Sprintf(`(() => { const el = document.querySelector(%q); el.value = %q;
		el.dispatchEvent(new Event('input', { bubbles: true })); return el.dispatchEvent(new Event('change', { bubbles: true })); })()`, sel, value))
}

// draft is the agent page's draft configuration (the JSON the forms write).
func (b *browser) draft() map[string]any {
	b.t.Helper()
	var cfg map[string]any
	if err := json.Unmarshal([]byte(js[string](b, `document.querySelector('#config').value`)), &cfg); err != nil {
		b.t.Fatalf("the draft is not JSON: %v", err)
	}
	return cfg
}

// TestStudioAgentEditor: on `serve` with real models, the agent's configuration is edited as
// forms: the model picker says which models a credential serves, parameters, the prompt's
// {{ variables }} are marked and the prompt is rendered live by the server, an MCP server's
// tools and memory are picked; the raw JSON is one click away both ways; saving makes a
// version that becomes active only when promoted after its diff with the active one.
func TestStudioAgentEditor(t *testing.T) {
	t.Parallel()
	base, _, key, c := startServeKey(t, cli.ModelsReal)
	ctx := context.Background()
	if _, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "openai-main", Type: "api_key", Provider: "openai", Value: "sk-test-0123456789abcdef"}); err != nil {
		t.Fatal(err)
	}
	orders := mcptest.New(mcptest.StreamableHTTP)
	defer orders.Close()
	m, err := c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "Orders", Transport: "streamable_http", URL: orders.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.MCPToolRefresh(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LLMModelCreate(ctx, client.LlmModelCreateRequest{ID: "local-llama", Provider: "openai_compatible", ContextWindow: 8192}); err != nil {
		t.Fatal(err)
	}
	shop, err := c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "shop", Type: "sqlite", Config: map[string]any{"path": filepath.Join(t.TempDir(), "shop.db")}})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Helper", Type: "agent", Config: client.AgentConfig{Model: "gpt-4o-mini", SystemPrompt: "You help."}})
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, base)
	b.signInKey(key)
	b.run(hash("#/agents/"+agent.ID), until(drawn(`location.hash`)), chromedp.WaitVisible(chromedp.CSS("#cfg-model")))

	// The model picker: openai models are served by the credential, anthropic ones are not.
	served := js[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('#cfg-model option')].map(o => [o.value, o.dataset.served]))`)
	if served["gpt-4o-mini"] != "true" || served["claude-3-5-haiku-20241022"] != "false" || served["local-llama"] != "false" {
		t.Errorf("served: gpt-4o-mini %q, claude %q, local-llama %q", served["gpt-4o-mini"], served["claude-3-5-haiku-20241022"], served["local-llama"])
	}
	if got := js[string](b, `document.querySelector('#cfg-model optgroup[label="Workspace models"]').textContent`); !strings.Contains(got, "local-llama · openai_compatible · ✗ no openai_compatible credential") {
		t.Errorf("workspace models: %q", got)
	}
	if got := b.text("#model-serve"); !strings.HasPrefix(got, "Served by the credential openai-main. $0.15/M input") {
		t.Errorf("model status %q", got)
	}
	b.setInput("#cfg-model", "claude-3-5-haiku-20241022")
	if got := b.text("#model-serve"); !strings.Contains(got, "Cannot run: no anthropic credential") {
		t.Errorf("model status for claude %q", got)
	}
	b.setInput("#cfg-model", "gpt-4o")
	b.setInput("#cfg-temperature", "0.3")
	b.setInput("#cfg-max-tokens", "256")

	// The prompt: its variables marked, rendered live by the server from the sample input.
	b.setInput("#prompt-sample", `{"name":"Ada","message":"where is my order?"}`)
	b.setInput("#cfg-system-prompt", "Help {{name}} kindly. {{ tone }}")
	b.run(until(`document.querySelectorAll('#prompt-highlight mark.var').length === 2`),
		until(`document.querySelector('#prompt-preview')?.textContent.includes('Help Ada kindly.')`))
	// The marks lie under the text being typed: the highlight layer has the textarea's box,
	// font and wrapping, and the textarea's own text is transparent over it.
	overlay := js[map[string]any](b, `(() => {
		const t = document.querySelector('#cfg-system-prompt'), p = document.querySelector('#prompt-highlight');
		const a = t.getBoundingClientRect(), c = p.getBoundingClientRect(), st = getComputedStyle(t), sp = getComputedStyle(p);
		const m = p.querySelector('mark.var').getBoundingClientRect();
		return {sameBox: a.left === c.left && a.top === c.top && a.width === c.width && a.height === c.height,
			sameText: ['font','padding','lineHeight','whiteSpace','overflowWrap','borderWidth'].every(k => st[k] === sp[k]),
			transparent: st.color === 'rgba(0, 0, 0, 0)', markInside: m.top >= a.top && m.bottom <= a.bottom && m.left >= a.left,
			above: +st.zIndex > 0 && sp.pointerEvents === 'none'};
	})()`)
	for _, k := range []string{"sameBox", "sameText", "transparent", "markInside", "above"} {
		if overlay[k] != true {
			t.Errorf("prompt overlay: %s is %v", k, overlay[k])
		}
	}
	if got := b.text("#prompt-vars"); !strings.Contains(got, "name, tone") {
		t.Errorf("variables %q", got)
	}
	if got := b.text("#prompt-preview"); !strings.Contains(got, "Missing from the input: tone") {
		t.Errorf("preview %q", got)
	}

	// Tools: the server with all its tools, then without chart; memory for the end user.
	b.run(chromedp.Click(chromedp.CSS(`input[data-mcp="Orders"]`)))
	if tools := b.draft()["tools"].([]any); len(tools) != 1 || tools[0] != m.ID {
		t.Errorf("tools after picking the server: %v", tools)
	}
	b.run(chromedp.Click(chromedp.CSS(`input[id="tool-` + m.ID + `-chart"]`)))
	b.run(chromedp.Click(chromedp.CSS("#cfg-memory")))
	b.setInput("#cfg-memory-scope", "end_user")
	b.run(chromedp.Click(chromedp.CSS(`input[data-source="shop"]`)))
	cfg := b.draft()
	if fmt.Sprint(cfg["data_sources"]) != "["+shop.ID+"]" {
		t.Errorf("data sources: %v", cfg["data_sources"])
	}
	ref, _ := cfg["tools"].([]any)[0].(map[string]any)
	names := fmt.Sprint(ref["names"])
	if ref["mcp_tool_id"] != m.ID || strings.Contains(names, "chart") || !strings.Contains(names, "lookup_order") {
		t.Errorf("tools without chart: %v", cfg["tools"])
	}
	if cfg["model"] != "gpt-4o" || cfg["temperature"] != 0.3 || cfg["max_tokens"] != float64(256) || cfg["system_prompt"] != "Help {{name}} kindly. {{ tone }}" ||
		fmt.Sprint(cfg["memory"]) != "map[enabled:true scope:end_user]" {
		t.Errorf("the draft: %v", cfg)
	}
	b.shot("forms")

	// The raw JSON, one click away: an edit there shows in the forms.
	b.run(chromedp.Click(chromedp.CSS("#raw-toggle")), chromedp.WaitVisible(chromedp.CSS("#config")))
	raw := js[string](b, `document.querySelector('#config').value`)
	b.run(chromedp.SetValue(chromedp.CSS("#config"), strings.Replace(raw, `"temperature": 0.3`, `"temperature": 0.5`, 1)),
		chromedp.Click(chromedp.CSS("#raw-toggle")), chromedp.WaitVisible(chromedp.CSS("#cfg-temperature")))
	if got := js[string](b, `document.querySelector('#cfg-temperature').value`); got != "0.5" {
		t.Errorf("temperature after the JSON edit: %q", got)
	}
	if !js[bool](b, `document.querySelector('input[data-tool="lookup_order"]').checked && !document.querySelector('input[data-tool="chart"]').checked`) {
		t.Error("the tools picked are not shown again from the JSON")
	}

	// Save: version 2, not active, its diff with the active version shown; promote it.
	b.run(chromedp.Click(chromedp.CSS("#save-version")), until(`!!document.querySelector('#promote-confirm')`))
	diff := b.text("#diff")
	for _, want := range []string{`-   "model": "gpt-4o-mini"`, `+   "model": "gpt-4o"`, `+   "temperature": 0.5`} {
		if !strings.Contains(diff, want) {
			t.Errorf("the diff lacks %q:\n%s", want, diff)
		}
	}
	hdr := http.Header{"X-API-Key": {key}}
	if _, body := apiGet(t, base, "/api/v1/agents/"+agent.ID, hdr); body["data"].(map[string]any)["active_version"] != float64(1) {
		t.Errorf("saving made the version active: %v", body["data"])
	}
	b.shot("promote-diff")
	b.run(chromedp.Click(chromedp.CSS("#promote-confirm")), until(`document.querySelector('tr[data-version="2"]')?.textContent.includes('active')`))
	_, body := apiGet(t, base, "/api/v1/agents/"+agent.ID, hdr)
	active := body["data"].(map[string]any)
	if active["active_version"] != float64(2) || active["config"].(map[string]any)["temperature"] != 0.5 {
		t.Errorf("after promoting: %v", active)
	}
	b.noConsoleErrors()
}

// TestStudioPlaygroundSideBySide: the playground runs two versions on the same input at
// once, each streamed into its own column with its own status, tokens and cost, each run
// recorded against its version.
func TestStudioPlaygroundSideBySide(t *testing.T) {
	t.Parallel()
	base, email, password := startServe(t)
	key := createKeyViaAPI(t, base, email, password)
	c := client.New(base, client.WithAPIKey(key))
	ctx := context.Background()
	agent, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Twin", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini", SystemPrompt: "Be brief."}})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := c.AgentVersionCreate(ctx, agent.ID, client.AgentConfig{Model: "gpt-4o", SystemPrompt: "Be thorough."}, "bigger model")
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, base)
	b.signInKey(key)
	b.run(hash("#/agents/"+agent.ID), until(drawn(`location.hash`)), chromedp.WaitVisible(chromedp.CSS("#run")))
	if !js[bool](b, `document.querySelector('#run-version-b').closest('div').hidden`) {
		t.Error("the second version's picker shows before side by side is asked for")
	}
	b.run(chromedp.Click(chromedp.CSS("#run-compare")))
	b.setInput("#run-version-b", v2.ID)
	b.run(chromedp.SetValue(chromedp.CSS("#run-input"), `{"message":"compare us"}`), chromedp.Click(chromedp.CSS("#run")),
		until(`document.querySelector('#run-status')?.textContent === 'completed' && document.querySelector('#run-status-b')?.textContent === 'completed'`))
	for _, sel := range []string{"#run-output .content", "#run-output-b .content"} {
		if got := b.text(sel); strings.TrimSpace(got) == "" {
			t.Errorf("%s is empty", sel)
		}
	}
	if heads := js[string](b, `[...document.querySelectorAll('#h-play ~ div .cols h3')].map(e => e.textContent).join(' | ')`); heads != "A: Active version (v1) | B: v2" {
		t.Errorf("column heads %q", heads)
	}
	b.shot("side-by-side")
	runs, err := c.ExecutionList(ctx, client.ListExecutionsParams{AgentID: agent.ID})
	if err != nil || len(runs.Data) != 2 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	versions := map[string]bool{}
	for _, x := range runs.Data {
		if x.Input["message"] != "compare us" || x.AgentVersionID == nil {
			t.Errorf("run %s: input %v, version %v", x.ID, x.Input, x.AgentVersionID)
			continue
		}
		versions[*x.AgentVersionID] = true
	}
	if !versions[v2.ID] || len(versions) != 2 {
		t.Errorf("the runs' versions %v, want v1 and v2 (%s)", versions, v2.ID)
	}
	b.noConsoleErrors()
}
