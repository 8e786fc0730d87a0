package simulated

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentplane/agentplane/internal/llm"
)

// This file derives the simulated model's words from the conversation: what the user
// asked, what they said before, who the system prompt says the model is, and what the
// tools returned. Phrasing varies with a hash of the conversation, never with time.

// convo is the analysis of one request's messages that every reply is built from.
type convo struct {
	msgs      []llm.Message
	h         uint64 // hash of all messages; the seed of every phrasing choice
	user      string // the content of the last user message
	sal       salient
	topic     string // the phrase the reply is about
	question  bool
	role      string // the opening words the system prompt's role gives a reply ("As a …, ")
	earlier   string // topic of the previous user turn, "" when none
	toolMsgs  [2]int // indices of the first tool messages after the last user message
	toolCount int    // how many tool messages follow the last user message
}

// analyze hashes and reads a conversation.
func analyze(msgs []llm.Message) convo {
	c := convo{msgs: msgs, h: hashMessages(msgs)}
	users := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		switch m := msgs[i]; {
		case m.Role == llm.RoleTool && users == 0:
			c.toolCount++
			c.toolMsgs[0], c.toolMsgs[1] = i, c.toolMsgs[0] // the first two, in order
		case m.Role == llm.RoleUser && users == 0:
			c.user, c.sal, c.question, users = m.Content, extractSalient(m.Content), isQuestion(m.Content), 1
		case m.Role == llm.RoleUser && users == 1:
			c.earlier, users = topicOf(m.Content, extractSalient(m.Content)), 2
		}
	}
	c.topic = topicOf(c.user, c.sal)
	if i := slices.IndexFunc(msgs, func(m llm.Message) bool { return m.Role == llm.RoleSystem }); i >= 0 {
		c.role = extractRole(msgs[i].Content)
	}
	return c
}

// hashMessages hashes every field of every message that shapes a reply.
func hashMessages(msgs []llm.Message) uint64 {
	h := uint64(14695981039346656037)
	for _, m := range msgs {
		h = hashField(hashField(hashField(hashField(h, m.Role), m.Content), m.Name), m.ToolCallID)
		for _, tc := range m.ToolCalls {
			h = hashField(hashField(h, tc.Name), tc.Arguments) // the bytes as they are, not a copy
		}
	}
	return h
}

// hashField adds one field to the hash h, eight bytes at a time (little-endian on every
// platform, so that every reply is the same everywhere).
func hashField[T ~string | ~[]byte](h uint64, s T) uint64 {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		h = (h ^ binary.LittleEndian.Uint64([]byte(s[i:i+8]))) * 0x9e3779b97f4a7c15
		h ^= h >> 32
	}
	for ; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	h = (h ^ uint64(len(s)) ^ 0xff00) * 0x9e3779b97f4a7c15 // field separator
	return h ^ h>>29
}

// hashString is FNV-1a of one string.
func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// mix is the splitmix64 finaliser: it spreads a seed so nearby salts choose unrelatedly.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// pick chooses one of n options for the decision named by salt.
func (c *convo) pick(salt uint64, n int) int { return int(mix(c.h^salt) % uint64(n)) }

// choose picks one of options for the decision named by salt, with {0}, {1} … replaced
// by args (in one pass, so text from an argument is never taken for a mark).
func (c *convo) choose(salt uint64, options []string, args ...string) string {
	s := options[c.pick(salt, len(options))]
	if len(args) == 0 {
		return s
	}
	var b strings.Builder // one allocation, not one per arg (BenchmarkComplete/plain)
	b.Grow(len(s) + len(args[0]) + len(args[len(args)-1]))
	for {
		before, after, ok := strings.Cut(s, "{")
		b.WriteString(before)
		if !ok {
			return b.String()
		}
		b.WriteString(args[after[0]-'0'])
		s = after[2:]
	}
}

// questionWords open a question.
var questionWords = strings.Fields("what how why when where who which can could should is are do does")

// isQuestion reports whether the user's message reads as a question.
func isQuestion(s string) bool {
	first := leadWords(s, 1)
	return slices.ContainsFunc(questionWords, func(q string) bool { return strings.EqualFold(q, first) }) ||
		strings.HasSuffix(strings.TrimRight(s, " \t\r\n\"')"), "?")
}

// topicOf returns the topic phrase of s, or its first words when it has no content word.
func topicOf(s string, sal salient) string {
	if len(sal.words) > 0 {
		return sal.topic.text(s)
	}
	return leadWords(s, 8)
}

// toolName names the tool whose result is message i: its Name, or the name of the call
// it answers.
func (c *convo) toolName(i int) string {
	m := c.msgs[i]
	for j := i - 1; j >= 0 && m.Name == "" && m.ToolCallID != ""; j-- {
		if k := slices.IndexFunc(c.msgs[j].ToolCalls, func(tc llm.ToolCall) bool { return tc.ID == m.ToolCallID }); k >= 0 {
			return c.msgs[j].ToolCalls[k].Name
		}
	}
	return cmp.Or(m.Name, "tool")
}

// word returns a word of the user's text, lower-casing a sentence-initial capital
// ("Plan" → "plan") but keeping names and acronyms ("Lisbon", "SQL").
func (c *convo) word(w span) string {
	word := w.text(c.user)
	if len(word) > 1 && isUpper(word[0]) && isLower(word[1]) && sentenceInitial(c.user, w.start) {
		return string(word[0]+'a'-'A') + word[1:]
	}
	return word
}

// Phrasings, chosen by hash. {0} is the topic phrase unless noted.
var (
	openQuestion = []string{`here's how I'd answer your question about "{0}".`, `let me take your question about "{0}" step by step.`,
		`the short answer on "{0}" depends on a few things.`, `I've thought about your question on "{0}".`}
	openStatement = []string{`here's my take on "{0}".`, `let me work through "{0}" with you.`,
		`I've looked at what you said about "{0}".`, `there's a fair amount to say about "{0}".`, `I can help with "{0}".`}
	openEmpty = []string{`I'm ready to help whenever you are.`, `happy to help with whatever you need.`}
	// {0} tool name, {1} result phrase; indexed by result kind.
	toolSentences = [...][]string{
		resultData: {`The {0} lookup returned {1}.`, `The {0} tool came back with {1}.`, `From {0} I got {1}.`,
			`Checking {0} turned up {1}.`},
		resultConfirm: {`The {0} call went through ({1}).`, `{0} confirmed it: {1}.`, `That's done via {0} ({1}).`},
		resultError:   {`The {0} call failed with {1}.`, `Unfortunately {0} returned {1}.`},
	}
	// {0} is a list of salient words.
	bodyMany = []string{`The points that stand out to me are {0}.`, `I'd break it down into {0}.`,
		`A few things matter here: {0}.`, `It mostly comes down to {0}.`}
	bodyOne = []string{`The key detail is {0}.`, `Most of it hinges on {0}.`, `I'd pay particular attention to {0}.`}
	// {0} is the earlier turn's topic.
	historySentences = []string{`Earlier you mentioned "{0}", so I've kept that in mind.`,
		`This builds on what you said earlier about "{0}".`, `I haven't forgotten your earlier point about "{0}".`}
	// {0} is a salient word or the topic.
	closings = []string{`Let me know if you'd like more detail on {0}.`, `Happy to go deeper on any part of this.`,
		`Tell me which part you'd like me to expand on.`, `If it helps, I can sketch out the next steps.`}
	// {0} tool name, {1} topic.
	planFirst = []string{`I should look this up with {0} before answering "{1}".`,
		`Answering "{1}" needs fresh data, so I'll call {0}.`, `Let me use {0} to check "{1}" first.`}
	planFirstNoTopic = []string{`I should look this up with {0} before answering.`, `This needs fresh data, so I'll call {0}.`}
	planSecondTool   = []string{`I'll also run {0} so the answer covers both angles.`, `Calling {0} as well should fill in the rest.`}
	planSecondWait   = []string{`Once the results are back I can give a grounded answer.`, `I'll summarise whatever it returns.`}
	// {0} tool names.
	afterTools = []string{`I have the {0} results now; time to summarise them.`, `The {0} output is in, so I can answer.`,
		`Now that {0} has responded, I can put the answer together.`}
)

// Salts name the independent phrasing decisions.
const (
	saltOpen, saltTool, saltBody, saltHistory, saltClose, saltCloseOn, saltPlan, saltPlan2 = 1, 2, 3, 4, 5, 6, 7, 8
	saltAfter, saltTwoCalls, saltFail, saltEnum, saltNumber, saltCallID, saltArrayLen      = 9, 10, 11, 12, 13, 14, 15
)

// maxSentences bounds a reply.
const maxSentences = 5

// reply returns the 2–5 sentences of the prose answer.
func (c *convo) reply() []string {
	// Opening, prefixed by the system prompt's role when there is one.
	open := c.choose(saltOpen, openStatement, c.topic)
	switch {
	case c.topic == "":
		open = c.choose(saltOpen, openEmpty)
	case c.question:
		open = c.choose(saltOpen, openQuestion, c.topic)
	}
	if c.role == "" {
		open = titleCase(open)
	}
	out := append(make([]string, 0, maxSentences), c.role+open)

	// What the tools returned.
	for k := range min(c.toolCount, len(c.toolMsgs)) {
		i := c.toolMsgs[k]
		summary, kind := toolSummary(c.msgs[i].Content)
		out = append(out, c.choose(saltTool+uint64(k)<<8, toolSentences[kind], c.toolName(i), summary))
	}

	// Earlier turns; only the closing line can meet maxSentences (the opening, two tool
	// sentences, this and the body make five at most).
	if c.earlier != "" {
		out = append(out, c.choose(saltHistory, historySentences, c.earlier))
	}

	// The salient words not already in the topic, as "a", "a and b" or "a, b and c".
	body := make([]string, 0, 3)
	for _, w := range c.sal.words {
		if len(body) < 3 && (w.start < c.sal.topic.start || w.end > c.sal.topic.end) {
			body = append(body, c.word(w))
		}
	}
	switch n := len(body); {
	case n == 1:
		out = append(out, c.choose(saltBody, bodyOne, body[0]))
	case n > 1:
		out = append(out, c.choose(saltBody, bodyMany, strings.Join(body[:n-1], ", ")+" and "+body[n-1]))
	}

	// A closing line, always when the reply would otherwise be one sentence.
	if len(out) < 2 || len(out) < maxSentences && c.pick(saltCloseOn, 3) != 0 {
		on := "this"
		if len(c.sal.words) > 0 {
			on = c.topic
		}
		if len(body) > 0 {
			on = body[len(body)-1]
		}
		out = append(out, c.choose(saltClose, closings, on))
	}
	return out
}

// summary is what a tool's JSON result holds that describes it in one phrase.
type summary struct {
	listKey       string // key of the counted list ("results"); "" at the top or in an array
	listLen       int    // -1 without a list
	head, headKey string // the most telling string value (a title …) and its key
	headRank      int
	members       bool // whether any object has a member
}

// headKeys rank object keys whose string values best describe a result; payloadKeys name
// lists that are likely its main content.
var (
	headKeys    = strings.Fields("title name summary snippet answer message text content description result status path url id")
	payloadKeys = strings.Fields("results rows items data hits records entries matches documents files")
)

// walk visits c, a container depth levels deep that is the value of key in its parent
// object, in document order. The first list at most three levels deep counts, unless a
// later one is plainly the payload ("columns" then "rows").
func (sum *summary) walk(c gjson.Result, depth int, key string) {
	isPayload := func(k string) bool { return slices.Contains(payloadKeys, strings.ToLower(k)) }
	if c.IsArray() && depth <= 3 && (sum.listLen < 0 || !isPayload(sum.listKey) && isPayload(key)) {
		sum.listKey, sum.listLen = key, int(c.Get("#").Int())
	}
	c.ForEach(func(k, v gjson.Result) bool {
		sum.members = sum.members || c.IsObject()
		if v.IsObject() || v.IsArray() {
			sum.walk(v, depth+1, k.Str)
			return true
		}

		// A headline better than the one so far.
		rank := slices.IndexFunc(headKeys, func(h string) bool { return strings.EqualFold(k.Str, h) })
		if rank < 0 {
			rank = len(headKeys)
		}
		if c.IsObject() && v.Type == gjson.String && v.Str != "" && rank < sum.headRank {
			sum.headRank, sum.head, sum.headKey = rank, v.Str, k.Str
		}
		return true
	})
}

// Kinds of tool result, which choose how a reply introduces them: something was found or
// read, an action went through, or the tool failed.
const resultData, resultConfirm, resultError = 0, 1, 2

// toolSummary returns a noun phrase describing a tool result (`3 results, starting with
// "Lisbon travel guide"`, `an error ("not found")`, `"README.md"`, or the opening words of
// a plain-text result) and its kind. A top-level "error", "is_error", "isError", "ok" or
// "success" says whether the tool failed.
func toolSummary(content string) (phrase string, kind int) {
	quote := func(s string, max int) string { return `"` + collapse(s, max) + `"` }
	t := strings.TrimSpace(content)
	if t != "" && (t[0] != '{' && t[0] != '[' || !gjson.Valid(t)) {
		if len(t) >= 5 && strings.EqualFold(t[:5], "error") {
			kind = resultError
		}
		return quote(t, 80), kind
	}
	doc, sum := gjson.Parse(t), summary{listLen: -1, headRank: len(headKeys) + 1}
	sum.walk(doc, 1, "")
	errv, ok := doc.Get("error"), doc.Get("ok")
	if !ok.Exists() {
		ok = doc.Get("success")
	}
	failed := errv.Exists() && errv.Type != gjson.Null && errv.Type != gjson.False ||
		doc.Get("is_error").Type == gjson.True || doc.Get("isError").Type == gjson.True
	switch msg := cmp.Or(errv.Get("message").Str, errv.Str); {
	case failed && msg != "":
		return "an error (" + quote(msg, 60) + ")", resultError
	case failed:
		return "an error", resultError
	case ok.Type == gjson.False:
		return "a failure", resultError
	case sum.listLen >= 0 && sum.head != "":
		return countOf(sum.listKey, sum.listLen) + ", starting with " + quote(sum.head, 60), resultData
	case sum.listLen >= 0:
		return countOf(sum.listKey, sum.listLen), resultData
	case sum.head != "" && ok.Type == gjson.True:
		return collapse(sum.headKey, 30) + " " + quote(sum.head, 60), resultConfirm
	case sum.head != "":
		return quote(sum.head, 60), resultData
	case ok.Type == gjson.True:
		return "no details", resultConfirm
	case sum.members:
		return "a structured result", resultData
	}
	return "an empty result", resultData
}

// countOf says how many entries a list holds, named after its key: "3 results", "1
// forecast entry", "no items".
func countOf(key string, n int) string {
	noun := "items"
	if len(key) > 2 && len(key) < 24 && !isStopword(key) && strings.Trim(key, "abcdefghijklmnopqrstuvwxyz_") == "" {
		noun = key
		if !strings.HasSuffix(key, "s") {
			noun += " entries"
		}
	}
	switch {
	case n == 0:
		return "no " + noun
	case n == 1 && strings.HasSuffix(noun, "ies"):
		return "1 " + noun[:len(noun)-3] + "y"
	case n == 1:
		return "1 " + noun[:len(noun)-1]
	}
	return strconv.Itoa(n) + " " + noun
}

// collapse returns s with every whitespace run turned into one space, cut at the last
// word boundary before maxBytes (inside a word longer than that) with an ellipsis.
func collapse(s string, maxBytes int) string {
	if s = strings.Join(strings.Fields(s), " "); len(s) <= maxBytes {
		return s
	}
	cut := strings.LastIndexByte(s[:maxBytes], ' ')
	if cut <= 0 { // one long word: cut inside it, but not inside a character
		return strings.ToValidUTF8(s[:maxBytes], "") + "…"
	}
	return s[:cut] + "…"
}
