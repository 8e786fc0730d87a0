package simulated

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/agentplane/agentplane/internal/llm"
)

// SimulateTool returns a plausible, deterministic mock result (JSON text) for a tool call,
// so agents can run their tool loop without real tools. The shape follows the tool's
// name: file readers return file content, search tools three example.com results, SQL
// and query tools rows, fetchers a page summary, list_* tools items, create_*, post_*,
// send_* (and similar writers) {"ok":true,"id":…}, and anything else {"ok":true,
// "result":<the arguments>}. Strings are drawn from the call's arguments.
func SimulateTool(call llm.ToolCall, spec llm.ToolSpec) (result string) {
	base := strings.ToLower(cmp.Or(call.Name, spec.Name))
	for _, sep := range []string{"__", ".", "/", ":"} {
		if i := strings.LastIndex(base, sep); i >= 0 {
			base = base[i+len(sep):]
		}
	}
	args := map[string]any{}
	_ = json.Unmarshal(call.Arguments, &args) // a malformed call still gets a result
	seed := hashString(base) ^ mix(hashString(string(call.Arguments)))
	// The most telling string argument: a preferred key, else the first by key order.
	subject := cmp.Or(stringArg(args, slices.Concat(subjectKeys, slices.Sorted(maps.Keys(args)))...), leadWords(spec.Description, 5), "example")
	var v any = object{"ok", true, "result", args}
	switch {
	case hasAnyPrefix(base, "create", "post", "send", "add", "insert", "write", "submit", "schedule", "book",
		"publish", "upload", "save", "update", "delete", "remove"):
		v = object{"ok", true, "id", nounOf(base) + "_" + hex8(mix(seed))}
	case strings.HasPrefix(base, "list"):
		v = listResult(base, subject, seed)
	case strings.Contains(base, "search") || hasAnyPrefix(base, "brave", "google", "bing", "tavily", "serp", "exa_", "duckduckgo"):
		v = searchResult(subject, seed)
	case hasAnyPart(base, "fetch", "scrape", "browse", "crawl", "http", "download", "webpage", "url"):
		v = fetchResult(args, subject)
	case strings.Contains(base, "file") || hasAnyPrefix(base, "read", "cat", "open", "view"):
		v = fileResult(args, subject)
	case hasAnyPart(base, "sql", "query", "database", "db"):
		v = rowsResult(subject, seed)
	}
	out, _ := json.Marshal(v) // cannot fail: args came from json.Unmarshal, the rest is ours
	return string(out)
}

// object is a JSON object whose members (key, value, key, value …) keep their order.
type object []any

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i := 0; i+1 < len(o); i += 2 {
		v, err := json.Marshal(o[i+1])
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(appendJSONString(b, o[i].(string)), ':'), v...)
	}
	return append(b, '}'), nil
}

// hasAnyPrefix reports whether s starts with one of the prefixes.
func hasAnyPrefix(s string, prefixes ...string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}

// hasAnyPart reports whether one of the '_'/'-'-separated parts of s is in parts.
func hasAnyPart(s string, parts ...string) bool {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' })
	return slices.ContainsFunc(fields, func(f string) bool { return slices.Contains(parts, f) })
}

// subjectKeys are the argument names, in order of preference, that say what a call is about.
var subjectKeys = []string{"query", "q", "search", "question", "prompt", "input", "text", "topic", "title",
	"name", "url", "path", "file", "filename", "file_path", "sql", "message", "content", "subject"}

// stringArg returns the first string argument among keys that is not blank, trimmed.
func stringArg(args map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := args[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// nounOf returns the object of a tool name ("create_issue" → "issue"), singular, or "item".
func nounOf(base string) string {
	i := strings.LastIndexAny(base, "_-")
	noun := base[i+1:]
	if i < 0 || noun == "" || noun == "list" {
		return "item"
	}
	if len(noun) > 3 && strings.HasSuffix(noun, "s") && !strings.HasSuffix(noun, "ss") {
		noun = noun[:len(noun)-1]
	}
	return slug(noun, "item")
}

// titleCase upper-cases the first ASCII letter of s.
func titleCase(s string) string {
	if s != "" && isLower(s[0]) {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// searchResult returns three example.com hits about subject.
func searchResult(subject string, seed uint64) any {
	url, s := "https://example.com/"+slug(subject, "topic"), collapse(subject, 60)
	titles := [...][3]string{
		{titleCase(s) + ": an overview", "", "A concise introduction to " + s + ", covering the essentials and common pitfalls."},
		{"A practical guide to " + s, "/guide", "Step-by-step advice on " + s + ", with worked examples."},
		{"Frequently asked questions about " + s, "/faq", "Answers to the questions people most often ask about " + s + "."},
		{titleCase(s) + " explained", "/explained", "Background and context on " + s + " for newcomers."},
	}
	start := int(mix(seed) % uint64(len(titles)))
	hits := make([]any, 3)
	for k := range hits {
		t := titles[(start+k)%len(titles)]
		hits[k] = object{"title", t[0], "url", url + t[1], "snippet", t[2]}
	}
	return object{"query", subject, "results", hits}
}

// fetchResult summarises an imaginary page at the requested URL.
func fetchResult(args map[string]any, subject string) any {
	url, s := stringArg(args, "url", "uri", "link", "href"), collapse(subject, 60)
	return object{"url", cmp.Or(url, "https://example.com/"+slug(subject, "page")), "status", 200,
		"title", titleCase(s) + " | Example Domain",
		"summary", "The page introduces " + s + ", lists three key points and links to further reading."}
}

// fileResult returns the content of an imaginary file.
func fileResult(args map[string]any, subject string) any {
	path := cmp.Or(stringArg(args, "path", "file", "filename", "file_path", "filepath", "name"), "docs/"+slug(subject, "notes")+".md")
	s := collapse(subject, 60)
	content := "# " + titleCase(s) + "\n\nNotes on " + s + ".\n\n- Background and goals\n- Open questions\n- Next steps\n"
	return object{"path", path, "content", content, "size_bytes", len(content)}
}

// rowsResult returns three rows of an imaginary query.
func rowsResult(subject string, seed uint64) any {
	word := slug(leadWords(subject, 1), "item")
	rows := make([][]any, 3)
	for k := range rows {
		rows[k] = []any{k + 1, word + "_" + strconv.Itoa(k+1), int(mix(seed+uint64(k))%900) + 100}
	}
	return object{"columns", []string{"id", "name", "value"}, "rows", rows, "row_count", len(rows)}
}

// listResult returns three items of the listed kind.
func listResult(base, subject string, seed uint64) any {
	noun := nounOf(base)
	items := make([]any, 3)
	for k := range items {
		name := titleCase(noun) + " " + strconv.Itoa(k+1) + ": " + collapse(subject, 60)
		items[k] = object{"id", noun + "_" + hex8(mix(seed+uint64(k))), "name", name}
	}
	return object{"items", items, "total", len(items)}
}
