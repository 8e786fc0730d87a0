package simulated

import (
	"context"
	"encoding/json"
	"github.com/agentplane/agentplane/internal/llm"
	"slices"
	"strings"
	"testing"
)

func TestSimulateTool(t *testing.T) {
	t.Parallel()
	args := json.RawMessage(`{"query":"seafood restaurants in Lisbon","path":"notes/trip.md","url":"https://example.com/menu"}`)
	tests := []struct {
		name string
		want []string // substrings of the result
	}{
		{"read_file", []string{`"path":"notes/trip.md"`, `"content":"# Seafood restaurants in Lisbon`}},
		{"get_file", []string{`"content":`}},
		{"web_search", []string{`"results":[`, `"url":"https://example.com/seafood-restaurants-in-lisbon`}},
		{"brave_web_search", []string{`"title":`, `"snippet":`}},
		{"run_sql", []string{`"columns":["id","name","value"]`, `"row_count":3`}},
		{"query_database", []string{`"rows":[[1,`}},
		{"fetch_url", []string{`"url":"https://example.com/menu"`, `"status":200`, `"summary":`}},
		{"list_issues", []string{`"items":[{"id":"issue_`, `"total":3`}},
		{"github.create_issue", []string{`"ok":true`, `"id":"issue_`}},
		{"send_email", []string{`"ok":true`, `"id":"email_`}},
		{"post_message", []string{`"id":"message_`}},
		{"get_weather", []string{`"ok":true`, `"result":{"path":"notes/trip.md","query":"seafood restaurants in Lisbon"`}},
	}
	for _, tt := range tests {
		call := llm.ToolCall{ID: "call_1", Name: tt.name, Arguments: args}
		got := SimulateTool(call, llm.ToolSpec{Name: tt.name})
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: not JSON: %s", tt.name, got)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %s lacks %s", tt.name, got, w)
			}
		}
		if again := SimulateTool(call, llm.ToolSpec{Name: tt.name}); again != got {
			t.Errorf("%s: not deterministic", tt.name)
		}
	}
	if got := SimulateTool(llm.ToolCall{Name: "web_search", Arguments: json.RawMessage(`{"query":"otters"}`)}, llm.ToolSpec{}); !strings.Contains(got, "otters") {
		t.Errorf("result does not follow the arguments: %s", got)
	}
	if got := SimulateTool(llm.ToolCall{Name: "mystery", Arguments: json.RawMessage(`not json`)}, llm.ToolSpec{}); got != `{"ok":true,"result":{}}` {
		t.Errorf("malformed arguments: %s", got)
	}
}

func TestToolSummary(t *testing.T) {
	t.Parallel()
	tests := []struct{ content, want string }{
		{`{"results":[{"title":"A \"quoted\" title","url":"u"},{"title":"B"}]}`, `2 results, starting with "A "quoted" title"`},
		{`{"columns":["id"],"rows":[[1],[2],[3]],"row_count":3}`, `3 rows`},
		{`{"forecast":[{"summary":"Sunny"}]}`, `1 forecast entry, starting with "Sunny"`},
		{`[1,2,3,4]`, `4 items`},
		{`{"items":[]}`, `no items`},
		{`{"ok":true,"id":"issue_1"}`, `id "issue_1"`},
		{`{"ok":true}`, `no details`},
		{`{"error":"not found"}`, `an error ("not found")`},
		{`{"error":{"code":404,"message":"no such file"}}`, `an error ("no such file")`},
		{`{"ok":false}`, `a failure`},
		{`{"error":{"code":500}}`, `an error`},
		{`{"success":false,"message":"quota"}`, `a failure`},
		{`{"path":"a.md","content":"# Title"}`, `"# Title"`},
		{"plain text\n\nresult with   spaces", `"plain text result with spaces"`},
		{"", `an empty result`},
		{`{"broken":`, `"{"broken":"`},
	}
	for _, tt := range tests {
		if got, _ := toolSummary(tt.content); got != tt.want {
			t.Errorf("summary of %s = %s, want %s", tt.content, got, tt.want)
		}
	}
	for content, want := range map[string]int{`{"ok":true,"id":"x"}`: resultConfirm, `{"error":"boom"}`: resultError,
		"Error: timeout": resultError, `{"results":[]}`: resultData, "hello": resultData} {
		if _, got := toolSummary(content); got != want {
			t.Errorf("kind of %s = %d, want %d", content, got, want)
		}
	}
}

func TestToolResultPhrasing(t *testing.T) {
	t.Parallel()
	p := New()
	for content, want := range map[string]string{
		`{"ok":true,"id":"email_1"}`:  `id "email_1"`,
		`{"error":"mailbox is full"}`: `an error ("mailbox is full")`,
	} {
		msgs := []llm.Message{user("Email Maria the notes"),
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "send_email", Arguments: json.RawMessage(`{}`)}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: content}}
		resp, err := p.Complete(context.Background(), llm.Request{Messages: msgs, Tools: allTools}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(resp.Content, "send_email") || !strings.Contains(resp.Content, want) {
			t.Errorf("reply %q does not report %s", resp.Content, want)
		}
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	s := "Don’t touch “config.yaml” or the e-mail—ever, it's O'Brien's."
	var got []string
	for _, w := range wordSpans(nil, s, -1) {
		got = append(got, w.text(s))
	}
	want := []string{"Don’t", "touch", "config.yaml", "or", "the", "e-mail", "ever", "it's", "O'Brien's"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("words %q, want %q", got, want)
	}
	if !slices.IsSorted(stopwords) {
		t.Error("stopwords are not sorted, so isStopword misses some")
	}
	if !isStopword("Don’t") || !isStopword("WHAT'S") || isStopword("database") {
		t.Error("isStopword")
	}
	sal := extractSalient("How do I reset my database password?")
	if topic := sal.topic.text("How do I reset my database password?"); topic != "database password" {
		t.Errorf("topic %q", topic)
	}
}

func TestCollapse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s    string
		max  int
		want string
	}{
		{" plain\n\ttext  ", 20, "plain text"},
		{"one two three four", 12, "one two…"},
		{"one two three", 13, "one two three"},
		{"abcdefghij klm", 6, "abcdef…"},
		{"ééééé", 5, "éé…"}, // never inside a character
	} {
		if got := collapse(tt.s, tt.max); got != tt.want {
			t.Errorf("collapse(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
		}
	}
}

func TestHintFor(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]nameHint{
		"query": hintQuery, "max_results": "count", "user_id": "id", "userID": "id", "fileName": "path",
		"max_tokens": "count", "image_url_list": "url", "first_name": "", "error_message": hintLong, "zzz": hintNone,
	} {
		if got := hintFor(name); got != want {
			t.Errorf("hintFor(%q) = %q, want %q", name, got, want)
		}
	}
}
