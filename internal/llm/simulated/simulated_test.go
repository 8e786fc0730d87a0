package simulated

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/agentplane/agentplane/internal/llm"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// result is everything one Complete call produced.
type result struct {
	events []llm.Event
	resp   *llm.Response
	err    error
}

// content is the concatenation of the content events.
func (r result) content() string {
	var b strings.Builder
	for _, e := range r.events {
		if e.Kind == llm.EventContent {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

// count returns how many events of kind there are.
func (r result) count(kind string) int {
	n := 0
	for _, e := range r.events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func complete(t testing.TB, p llm.Provider, req llm.Request) result {
	t.Helper()
	var r result
	r.resp, r.err = p.Complete(context.Background(), req, func(e llm.Event) error {
		r.events = append(r.events, e)
		return nil
	})
	return r
}

func mustComplete(t testing.TB, p llm.Provider, req llm.Request) result {
	t.Helper()
	r := complete(t, p, req)
	if r.err != nil {
		t.Fatalf("Complete: %v", r.err)
	}
	return r
}

func user(s string) llm.Message { return llm.Message{Role: llm.RoleUser, Content: s} }

func system(s string) llm.Message { return llm.Message{Role: llm.RoleSystem, Content: s} }

var (
	travelSystem = system("You are a helpful travel assistant for Acme Tours. Keep answers short.")

	searchTool = llm.ToolSpec{Name: "web_search", Description: "Search the web for current information on a topic.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"integer","minimum":1}},"required":["query"]}`)}
	weatherTool = llm.ToolSpec{Name: "get_weather", Description: "Get the weather forecast for a city.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"units":{"type":"string","enum":["metric","imperial"]},"days":{"type":"integer"}},"required":["city","units"],"additionalProperties":false}`)}
	fileTool = llm.ToolSpec{Name: "read_file", Description: "Read a file from the workspace.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}
	emailTool = llm.ToolSpec{Name: "send_email", Description: "Send an email message to a recipient.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string","format":"email"},"subject":{"type":"string"},"body":{"type":"string"}},"required":["to","subject","body"]}`)}
	allTools = []llm.ToolSpec{fileTool, searchTool, weatherTool, emailTool}
)

// sampleRequests covers every path of the simulated provider.
func sampleRequests() map[string]llm.Request {
	withResults := []llm.Message{travelSystem, user("What's the weather forecast in Lisbon this weekend?"),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Lisbon","units":"metric"}`)}}},
		{Role: llm.RoleTool, ToolCallID: "call_1", Content: `{"city":"Lisbon","forecast":[{"day":"Sat","summary":"Sunny, 24°C"},{"day":"Sun","summary":"Cloudy"}]}`}}
	return map[string]llm.Request{
		"plain":    {Messages: []llm.Message{user("How do I reset my database password?")}},
		"system":   {Messages: []llm.Message{travelSystem, user("Plan a three-day itinerary for Lisbon in October, with seafood restaurants.")}},
		"history":  {Messages: []llm.Message{user("I am moving to Berlin next spring."), {Role: llm.RoleAssistant, Content: "Exciting!"}, user("Which neighbourhoods suit families with kids?")}},
		"tools":    {Messages: []llm.Message{travelSystem, user("What's the weather forecast in Lisbon this weekend?")}, Tools: allTools},
		"results":  {Messages: withResults, Tools: allTools},
		"schema":   {Messages: []llm.Message{user("Review this restaurant: the bacalhau was superb but service slow.")}, OutputSchema: reviewSchema},
		"empty":    {Messages: []llm.Message{user("")}},
		"stopword": {Messages: []llm.Message{user("what is it?")}},
	}
}

var reviewSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"summary": {"type": "string"},
		"sentiment": {"enum": ["positive", "neutral", "negative"]},
		"score": {"type": "integer"},
		"confidence": {"type": "number"},
		"recommended": {"type": "boolean"},
		"tags": {"type": "array", "items": {"type": "string"}},
		"dish": {"type": "object", "properties": {"name": {"type": "string"}, "price": {"type": "number"}}, "required": ["name"]},
		"version": {"const": 2},
		"note": {"type": ["string", "null"]}
	},
	"required": ["summary", "sentiment", "score"],
	"additionalProperties": false
}`)

func TestDeterministic(t *testing.T) {
	t.Parallel()
	for name, req := range sampleRequests() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := mustComplete(t, New(), req)
			p := New()
			b := mustComplete(t, p, req)
			c := mustComplete(t, p, req) // warm schema cache
			if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(b, c) {
				t.Fatalf("same request, different results:\n%+v\n%+v\n%+v", a, b, c)
			}
		})
	}
}

func TestContentEventsConcatenate(t *testing.T) {
	t.Parallel()
	p := New()
	for name, req := range sampleRequests() {
		r := mustComplete(t, p, req)
		if got := r.content(); got != r.resp.Content {
			t.Errorf("%s: content events %q != Content %q", name, got, r.resp.Content)
		}
		for _, e := range r.events {
			if e.Kind == llm.EventContent && len(strings.Fields(e.Text)) != 1 {
				t.Errorf("%s: content event %q is not one word", name, e.Text)
			}
			if e.Kind != llm.EventContent && e.Kind != llm.EventThinking {
				t.Errorf("%s: unknown event kind %q", name, e.Kind)
			}
		}
	}
}

// sentences counts sentence ends: '.', '!' or '?' followed by a space or the end.
func sentences(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && (i+1 == len(s) || s[i+1] == ' ') {
			n++
		}
	}
	return n
}

func TestRepliesDeriveFromInput(t *testing.T) {
	t.Parallel()
	p := New()
	tests := []struct {
		name string
		msgs []llm.Message
		want []string // substrings the reply must contain
	}{
		{"quotes topic", []llm.Message{user("How do I reset my database password?")}, []string{`"database password"`, "reset"}},
		{"role", []llm.Message{travelSystem, user("Plan a three-day itinerary for Lisbon.")}, []string{"As a helpful travel assistant for Acme Tours,", "three-day itinerary"}},
		{"role name", []llm.Message{system("You are Ada, a careful code reviewer."), user("Review my pull request about caching.")}, []string{"As Ada,"}},
		{"article an", []llm.Message{system("You are an expert sommelier who loves Portuguese wine."), user("Pair a wine with grilled sardines.")}, []string{"As an expert sommelier,"}},
		{"brief", []llm.Message{system("Summarise support tickets for the billing team."), user("Customer was charged twice for March.")}, []string{`Following my brief ("Summarise support tickets for the billing team")`}},
		{"history", []llm.Message{user("I am moving to Berlin next spring."), {Role: llm.RoleAssistant, Content: "Exciting!"}, user("Which neighbourhoods suit families with kids?")}, []string{"earlier", "Berlin"}},
		{"tool results", sampleRequests()["results"].Messages, []string{"get_weather", "2 forecast entries", "Sunny, 24°C"}},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		r := mustComplete(t, p, llm.Request{Messages: tt.msgs})
		got := r.resp.Content
		for _, w := range tt.want {
			if !strings.Contains(strings.ToLower(got), strings.ToLower(w)) {
				t.Errorf("%s: reply %q lacks %q", tt.name, got, w)
			}
		}
		if n := sentences(got); n < 2 || n > 5 {
			t.Errorf("%s: %d sentences in %q", tt.name, n, got)
		}
		if prev, ok := seen[got]; ok {
			t.Errorf("%s and %s gave the same reply %q", tt.name, prev, got)
		}
		seen[got] = tt.name
	}

	// Any change to the question changes the answer, even without content words.
	a := mustComplete(t, p, llm.Request{Messages: []llm.Message{user("what is it?")}}).resp.Content
	b := mustComplete(t, p, llm.Request{Messages: []llm.Message{user("what is this?")}}).resp.Content
	if a == b {
		t.Errorf("different questions, same reply %q", a)
	}
	// Phrasing varies across inputs rather than following one template.
	openings := map[string]bool{}
	for _, q := range []string{"Compare Rust and Go for CLIs.", "Explain vector clocks.", "Suggest names for a bakery.",
		"Draft a refund policy.", "Summarise the French revolution.", "Fix my flaky integration test.", "Describe tidal energy."} {
		c := mustComplete(t, p, llm.Request{Messages: []llm.Message{user(q)}}).resp.Content
		openings[strings.Fields(c)[0]+" "+strings.Fields(c)[1]] = true
	}
	if len(openings) < 3 {
		t.Errorf("only %d distinct openings: %v", len(openings), openings)
	}
}

func TestExtractRole(t *testing.T) {
	t.Parallel()
	tests := []struct{ sys, want string }{
		{"You are a helpful assistant.", "As a helpful assistant, "},
		{"you're an SRE who is on call tonight. Be terse.", "As an SRE, "},
		{"Act as the lead reviewer, strict but kind.", "As the lead reviewer, "},
		{"You are my personal chef", "As your personal chef, "},
		{"You are Ada, a bot.", "As Ada, "},
		{"You are helpful. Answer in French.", `Following my brief ("You are helpful"), `},
		{"Answer questions about billing.\nBe concise.", `Following my brief ("Answer questions about billing"), `},
		{"", ""},
	}
	for _, tt := range tests {
		if got := extractRole(tt.sys); got != tt.want {
			t.Errorf("extractRole(%q) = %q, want %q", tt.sys, got, tt.want)
		}
	}
}

// compileJSONSchema compiles raw for validation with the library the engine uses.
func compileJSONSchema(t *testing.T, raw json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("mem://s.json", doc); err != nil {
		t.Fatalf("schema: %v", err)
	}
	s, err := c.Compile("mem://s.json")
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	return s
}

func validate(t *testing.T, schema json.RawMessage, doc string) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	return compileJSONSchema(t, schema).Validate(v)
}

var callID = regexp.MustCompile(`^call_[0-9a-f]{8}$`)

func TestToolCallThenAnswer(t *testing.T) {
	t.Parallel()
	p := New()
	msgs := []llm.Message{travelSystem, user("Search the web for the best seafood restaurants in Lisbon")}
	r := mustComplete(t, p, llm.Request{Messages: msgs, Tools: allTools})
	if r.resp.StopReason != llm.StopToolCalls || r.resp.Content != "" || r.count(llm.EventContent) != 0 {
		t.Fatalf("want tool calls only, got %+v", r.resp)
	}
	if n := len(r.resp.ToolCalls); n < 1 || n > 2 {
		t.Fatalf("%d tool calls", n)
	}
	if r.resp.ToolCalls[0].Name != "web_search" {
		t.Errorf("first call %q, want the relevant web_search", r.resp.ToolCalls[0].Name)
	}
	if n := r.count(llm.EventThinking); n < 1 || n > 2 || !strings.Contains(r.events[0].Text, "web_search") {
		t.Errorf("thinking events %+v", r.events)
	}
	specs := map[string]llm.ToolSpec{}
	for _, s := range allTools {
		specs[s.Name] = s
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, ToolCalls: r.resp.ToolCalls})
	completion := 0
	for _, tc := range r.resp.ToolCalls {
		if !callID.MatchString(tc.ID) {
			t.Errorf("call id %q", tc.ID)
		}
		if err := validate(t, specs[tc.Name].InputSchema, string(tc.Arguments)); err != nil {
			t.Errorf("%s arguments %s: %v", tc.Name, tc.Arguments, err)
		}
		completion += llm.CountTokens(string(tc.Arguments))
		msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Content: SimulateTool(tc, specs[tc.Name])})
	}
	if r.resp.Usage.CompletionTokens != completion || r.resp.Usage.PromptTokens < 1 {
		t.Errorf("usage %+v, want completion %d", r.resp.Usage, completion)
	}

	a := mustComplete(t, p, llm.Request{Messages: msgs, Tools: allTools})
	if a.resp.StopReason != llm.StopEnd || len(a.resp.ToolCalls) != 0 {
		t.Fatalf("want an answer, got %+v", a.resp)
	}
	if a.events[0].Kind != llm.EventThinking || !strings.Contains(a.events[0].Text, "web_search") {
		t.Errorf("first event %+v, want thinking about web_search", a.events[0])
	}
	if !strings.Contains(a.resp.Content, "web_search") || !strings.Contains(a.resp.Content, "3 results") {
		t.Errorf("answer %q does not summarise the search results", a.resp.Content)
	}
	if a.resp.Usage.PromptTokens <= r.resp.Usage.PromptTokens {
		t.Errorf("prompt tokens did not grow with tool results: %d then %d", r.resp.Usage.PromptTokens, a.resp.Usage.PromptTokens)
	}
}

func TestToolChoice(t *testing.T) {
	t.Parallel()
	p := New()
	for q, want := range map[string]string{
		"Read the file config.yaml":                 "read_file",
		"Will it rain in Porto? Check the forecast": "get_weather",
		"Email Maria the meeting notes":             "send_email",
		"Search for news about solar panel tariffs": "web_search",
	} {
		r := mustComplete(t, p, llm.Request{Messages: []llm.Message{user(q)}, Tools: allTools})
		if r.resp.ToolCalls[0].Name != want {
			t.Errorf("%q: called %s, want %s", q, r.resp.ToolCalls[0].Name, want)
		}
	}
	// With no tool relevant, the hash still picks one, and always the same one.
	req := llm.Request{Messages: []llm.Message{user("zzz qqq")}, Tools: allTools}
	first := mustComplete(t, p, req).resp.ToolCalls[0].Name
	for range 3 {
		if got := mustComplete(t, p, req).resp.ToolCalls[0].Name; got != first {
			t.Fatalf("tie broken differently: %s then %s", first, got)
		}
	}
}

func TestToolArgumentsValidate(t *testing.T) {
	t.Parallel()
	schemas := []string{
		``,
		`{}`,
		`{"type":"object"}`,
		`{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}}}`,
		`{"type":"object","properties":{"id":{"type":"string","format":"uuid"},"when":{"type":"string","format":"date-time"},"site":{"type":"string","format":"uri"},"mail":{"type":"string","format":"email"}},"required":["id","when","site","mail"]}`,
		`{"type":"object","properties":{"filters":{"type":"object","properties":{"status":{"enum":["open","closed"]},"labels":{"type":"array","items":{"type":"string"}},"since":{"type":"string","format":"date"}},"required":["status","labels","since"]},"verbose":{"type":"boolean"},"ratio":{"type":"number"}},"required":["filters","verbose","ratio"]}`,
		`{"$defs":{"point":{"type":"object","properties":{"lat":{"type":"number"},"lon":{"type":"number"}},"required":["lat","lon"]}},"type":"object","properties":{"from":{"$ref":"#/$defs/point"},"to":{"$ref":"#/$defs/point"}},"required":["from","to"]}`,
		`{"type":"object","properties":{"value":{"anyOf":[{"type":"null"},{"type":"integer"}]},"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}]},"mode":{"const":"fast"}},"required":["value","pair","mode"]}`,
		`{"type":"object","allOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer"}},"required":["b"]}]}`,
		`{"type":"object","required":["undeclared"]}`,
		`{"type":"object","properties":{"a":{"type":"integer"},"b":{"$ref":"#/properties/a"}},"required":["a","b"]}`,
		`{"type":"object","properties":{"node":{"$ref":"#"}},"required":["node"]}`, // recursive: cut off deep down
		`{"type":"object","properties":{"sql":{"type":"string"},"path":{"type":"string"},"user_id":{"type":"string"},"tags":{"type":["array","null"],"items":{"type":"string"}}},"required":["sql","path","user_id","tags"]}`,
	}
	p := New()
	for _, schema := range schemas {
		tool := llm.ToolSpec{Name: "do_thing", Description: "Does the thing.", InputSchema: json.RawMessage(schema)}
		r := mustComplete(t, p, llm.Request{Messages: []llm.Message{user("Look up the quarterly revenue report for Q3 2024")}, Tools: []llm.ToolSpec{tool}})
		if len(r.resp.ToolCalls) != 1 {
			t.Fatalf("%s: %d calls", schema, len(r.resp.ToolCalls))
		}
		args := r.resp.ToolCalls[0].Arguments
		var obj map[string]any
		if err := json.Unmarshal(args, &obj); err != nil {
			t.Fatalf("%s: arguments %s are not an object: %v", schema, args, err)
		}
		check := schema
		if check == "" {
			check = `{"type":"object","properties":{"query":{"type":"string","minLength":1}},"required":["query"]}`
		}
		if schema == `{"type":"object","properties":{"node":{"$ref":"#"}},"required":["node"]}` {
			continue // unsatisfiable by any finite value
		}
		if err := validate(t, json.RawMessage(check), string(args)); err != nil {
			t.Errorf("%s: arguments %s: %v", schema, args, err)
		}
	}
}

func TestToolArgumentsShape(t *testing.T) {
	t.Parallel()
	r := mustComplete(t, New(), llm.Request{Messages: []llm.Message{user("Will it rain in Porto this weekend?")}, Tools: []llm.ToolSpec{weatherTool}})
	// Required properties only, enums take their first value, strings come from the text.
	if got := string(r.resp.ToolCalls[0].Arguments); got != `{"city":"Porto","units":"metric"}` {
		t.Errorf("arguments %s", got)
	}
	r = mustComplete(t, New(), llm.Request{Messages: []llm.Message{user("Will it rain in Porto?")}, Tools: []llm.ToolSpec{{Name: "lookup"}}})
	if got := string(r.resp.ToolCalls[0].Arguments); got != `{"query":"Will it rain in Porto?"}` {
		t.Errorf("schemaless arguments %s", got)
	}
}

func TestOutputSchema(t *testing.T) {
	t.Parallel()
	p := New()
	req := sampleRequests()["schema"]
	r := mustComplete(t, p, req)
	if r.resp.StopReason != llm.StopEnd {
		t.Fatalf("stop reason %q", r.resp.StopReason)
	}
	if err := validate(t, reviewSchema, r.resp.Content); err != nil {
		t.Fatalf("content %s: %v", r.resp.Content, err)
	}
	if r.content() != r.resp.Content || r.count(llm.EventContent) < 10 {
		t.Errorf("JSON not streamed in word-sized chunks: %d events", r.count(llm.EventContent))
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(r.resp.Content), &fields); err != nil || len(fields) != 9 {
		t.Errorf("want every property, optional ones too: %s (%v)", r.resp.Content, err)
	}
	if !strings.Contains(r.resp.Content, "bacalhau") {
		t.Errorf("strings not drawn from the conversation: %s", r.resp.Content)
	}

	// No schema details: an object with an answer.
	r = mustComplete(t, p, llm.Request{Messages: req.Messages, OutputSchema: json.RawMessage(`{}`)})
	var obj map[string]string
	if err := json.Unmarshal([]byte(r.resp.Content), &obj); err != nil || obj["answer"] == "" {
		t.Errorf("content %s: %v", r.resp.Content, err)
	}

	// Constraints beyond the basics are not satisfied, so validation failures can be exercised.
	strict := json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","pattern":"^[0-9]{6}$"}},"required":["code"]}`)
	r = mustComplete(t, p, llm.Request{Messages: req.Messages, OutputSchema: strict})
	if err := validate(t, strict, r.resp.Content); err == nil {
		t.Errorf("pattern unexpectedly satisfied: %s", r.resp.Content)
	}
}

func TestMaxTokens(t *testing.T) {
	t.Parallel()
	p := New()
	for name, req := range sampleRequests() {
		full := mustComplete(t, p, req)
		limit := full.resp.Usage.CompletionTokens / 2
		if limit < 2 {
			continue
		}
		req.MaxTokens = limit
		r := mustComplete(t, p, req)
		if full.resp.StopReason == llm.StopToolCalls {
			if r.resp.Usage.CompletionTokens > limit {
				t.Errorf("%s: %d completion tokens over %d", name, r.resp.Usage.CompletionTokens, limit)
			}
			continue
		}
		if r.resp.StopReason != llm.StopLength {
			t.Errorf("%s: stop reason %q, want length", name, r.resp.StopReason)
		}
		if r.resp.Usage.CompletionTokens > limit || r.resp.Usage.CompletionTokens < limit-2 {
			t.Errorf("%s: %d completion tokens for limit %d", name, r.resp.Usage.CompletionTokens, limit)
		}
		if r.resp.Usage.CompletionTokens != llm.CountTokens(r.resp.Content) {
			t.Errorf("%s: usage %d != llm.CountTokens %d", name, r.resp.Usage.CompletionTokens, llm.CountTokens(r.resp.Content))
		}
		if !strings.HasPrefix(full.resp.Content, r.resp.Content) || r.content() != r.resp.Content {
			t.Errorf("%s: truncated content %q is not a prefix of %q", name, r.resp.Content, full.resp.Content)
		}
	}
	// A limit too small for any tool call ends with "length" and no calls.
	r := mustComplete(t, p, llm.Request{Messages: []llm.Message{user("search for cats")}, Tools: allTools, MaxTokens: 1})
	if r.resp.StopReason != llm.StopLength || len(r.resp.ToolCalls) != 0 {
		t.Errorf("got %+v", r.resp)
	}
}

func TestFail(t *testing.T) {
	t.Parallel()
	p := New()
	for name, req := range sampleRequests() {
		full := mustComplete(t, p, req)
		r := complete(t, p.With(Options{Fail: true}), req)
		var le *llm.Error
		if r.resp != nil || r.err == nil || errors.As(r.err, &le) || r.err.Error() != "simulated model failure" {
			t.Fatalf("%s: got %+v, %v", name, r.resp, r.err)
		}
		if full.resp.StopReason == llm.StopToolCalls {
			if r.count(llm.EventThinking) != 1 {
				t.Errorf("%s: events before failure %+v", name, r.events)
			}
			continue
		}
		n := r.count(llm.EventContent)
		if n < 1 || n > 5 || n >= full.count(llm.EventContent) {
			t.Errorf("%s: %d content events before failure (of %d)", name, n, full.count(llm.EventContent))
		}
		if !strings.HasPrefix(full.resp.Content, r.content()) {
			t.Errorf("%s: partial %q is not a prefix of %q", name, r.content(), full.resp.Content)
		}
	}
	r := complete(t, p.With(Options{Fail: true, FailMessage: "rate limited by upstream"}), llm.Request{Messages: []llm.Message{user("hello there")}})
	if r.err == nil || r.err.Error() != "rate limited by upstream" {
		t.Errorf("got %v", r.err)
	}
}

func TestFailModels(t *testing.T) {
	t.Parallel()
	p := New().With(Options{FailModels: map[string]int{"gpt-4o": 503}})
	r := complete(t, p, llm.Request{Model: "gpt-4o", Messages: []llm.Message{user("hello there")}})
	var le *llm.Error
	if !errors.As(r.err, &le) || le.Status != 503 || r.resp != nil || len(r.events) != 0 {
		t.Errorf("named model: got %+v, %v after %d events", r.resp, r.err, len(r.events))
	}
	if r := complete(t, p, llm.Request{Model: "gpt-4o-mini", Messages: []llm.Message{user("hello there")}}); r.err != nil {
		t.Errorf("other model: %v", r.err)
	}
}

func TestLatencyAndCancel(t *testing.T) {
	t.Parallel()
	p := New()
	req := llm.Request{Messages: []llm.Message{user("Tell me about the history of Lisbon trams.")}}
	start := time.Now()
	r := mustComplete(t, p.With(Options{LatencyMS: 2}), req)
	if min := time.Duration(len(r.events)) * 2 * time.Millisecond; time.Since(start) < min {
		t.Errorf("%d events took %v, want at least %v", len(r.events), time.Since(start), min)
	}

	slow := p.With(Options{LatencyMS: 10_000})
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancelled = time.Now()
		cancel()
	}()
	resp, err := slow.Complete(ctx, req, func(llm.Event) error { return nil })
	if !errors.Is(err, context.Canceled) || resp != nil {
		t.Fatalf("got %v, %v; want context.Canceled", resp, err)
	}
	if d := time.Since(cancelled); d > 50*time.Millisecond {
		t.Errorf("returned %v after cancellation", d)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := slow.Complete(ctx, req, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want deadline exceeded", err)
	}
	if _, err := p.Complete(ctx, llm.Request{Messages: req.Messages}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("done context without latency: got %v", err)
	}
}

func TestEmitError(t *testing.T) {
	t.Parallel()
	stop := errors.New("client went away")
	calls := 0
	resp, err := New().Complete(context.Background(), sampleRequests()["system"], func(llm.Event) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || resp != nil || calls != 2 {
		t.Errorf("got %v, %v after %d calls", resp, err, calls)
	}
	// A nil emit is allowed.
	if _, err := New().Complete(context.Background(), sampleRequests()["system"], nil); err != nil {
		t.Error(err)
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	p := New()
	for name, req := range sampleRequests() {
		r := mustComplete(t, p, req)
		u := r.resp.Usage
		if u.PromptTokens < 1 || u.CompletionTokens < 1 {
			t.Errorf("%s: usage %+v", name, u)
		}
		if r.resp.StopReason == llm.StopEnd && u.CompletionTokens != llm.CountTokens(r.resp.Content) {
			t.Errorf("%s: completion %d != llm.CountTokens(Content) %d", name, u.CompletionTokens, llm.CountTokens(r.resp.Content))
		}
	}
	short := mustComplete(t, p, llm.Request{Messages: []llm.Message{user("hi")}}).resp.Usage.PromptTokens
	long := mustComplete(t, p, llm.Request{Messages: []llm.Message{system("You are a tutor."), user("hi there, explain photosynthesis")}}).resp.Usage.PromptTokens
	if short >= long {
		t.Errorf("prompt tokens %d for a short prompt, %d for a longer one", short, long)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	p := New()
	reqs := sampleRequests()
	want := map[string]result{}
	for name, req := range reqs {
		want[name] = mustComplete(t, New(), req)
	}
	var wg sync.WaitGroup
	for range 8 {
		for name, req := range reqs {
			wg.Go(func() {
				if got := mustComplete(t, p, req); !reflect.DeepEqual(got, want[name]) {
					t.Errorf("%s: concurrent result differs", name)
				}
			})
		}
	}
	wg.Wait()
}

// benchRequest is a typical engine call: a system prompt, a short history and a user
// message of a few hundred tokens, no tools.
func benchRequest() llm.Request {
	return llm.Request{
		Model: "simulated",
		Messages: []llm.Message{
			system("You are a senior support engineer for Acme Cloud. Answer precisely, cite the relevant product area, and keep replies under 200 words. Never reveal internal ticket numbers."),
			user("Our staging cluster in eu-west-1 started failing health checks last night."),
			{Role: llm.RoleAssistant, Content: "Thanks for flagging it. Which service is failing, and did anything change in the deployment pipeline?"},
			user("It is the payments-api service. We rolled out version 4.12 of the ingress controller at 22:00 UTC, " +
				"and since then roughly a third of the pods report readiness probe timeouts. CPU and memory look normal, " +
				"the database connection pool is healthy, and rolling back the application image did not help. " +
				"We noticed that the probe path /healthz now returns a 301 redirect to /healthz/ with a trailing slash, " +
				"which may be related to the new ingress rewrite rules. Our on-call team wants to know whether we should " +
				"roll back the ingress controller, change the probe configuration, or patch the rewrite annotation, and " +
				"what the risk is for the production rollout scheduled for Thursday morning."),
		},
	}
}

func BenchmarkComplete(b *testing.B) {
	p := New()
	ctx := context.Background()
	emit := func(llm.Event) error { return nil }
	run := func(b *testing.B, req llm.Request) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Complete(ctx, req, emit); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("plain", func(b *testing.B) { run(b, benchRequest()) })
	b.Run("tool_call", func(b *testing.B) {
		req := benchRequest()
		req.Tools = allTools
		run(b, req)
	})
	b.Run("tool_result", func(b *testing.B) { run(b, sampleRequests()["results"]) })
	b.Run("output_schema", func(b *testing.B) {
		req := benchRequest()
		req.OutputSchema = reviewSchema
		run(b, req)
	})
}

// TestNumberRange answers numbers with both minimum and maximum stated within them, the same
// for the same text (what an evaluator acting as judge relies on), and not one for every text.
func TestNumberRange(t *testing.T) {
	t.Parallel()
	p := New()
	schema := json.RawMessage(`{"type":"object","properties":{"score":{"type":"number","minimum":1,"maximum":5},"stars":{"type":"integer","minimum":0,"maximum":3}},"required":["score","stars"]}`)
	seen := map[float64]bool{}
	for _, text := range []string{"Great answer", "Wrong answer", "Partly right", "Off topic", "Spot on", "Too long", "Great answer"} {
		var got [2]struct{ Score, Stars float64 }
		for i := range got {
			r := mustComplete(t, p, llm.Request{Messages: []llm.Message{user(text)}, OutputSchema: schema})
			if err := validate(t, schema, r.resp.Content); err != nil || json.Unmarshal([]byte(r.resp.Content), &got[i]) != nil {
				t.Fatalf("%q: %s (%v)", text, r.resp.Content, err)
			}
		}
		if got[0] != got[1] || got[0].Stars != float64(int(got[0].Stars)) {
			t.Fatalf("%q: %+v then %+v", text, got[0], got[1])
		}
		seen[got[0].Score] = true
	}
	if len(seen) < 2 {
		t.Errorf("every text got the same score: %v", seen)
	}
}
