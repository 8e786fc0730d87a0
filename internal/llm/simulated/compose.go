package simulated

import (
	"github.com/agentplane/agentplane/internal/llm"
	"strings"
)

// This file derives the simulated model's words from the conversation: what the user
// asked, what they said before, who the system prompt says the model is, and what the
// tools returned. Phrasing varies with a hash of the conversation, never with time.

// convo is the analysis of one request's messages that every reply is built from.
type convo struct {
	msgs      []llm.Message
	h         uint64 // hash of all messages; the seed of every phrasing choice
	lastUser  int    // index of the last user message, -1 when there is none
	user      string // its content
	sal       salient
	question  bool
	role      role
	earlier   string // topic of the previous user turn, "" when none
	toolMsgs  [2]int // indices of the first tool messages after the last user message
	toolCount int    // how many tool messages follow the last user message
}

// analyze hashes and reads a conversation.
func analyze(msgs []llm.Message) convo {
	c := convo{msgs: msgs, lastUser: -1, h: hashMessages(msgs)}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			c.lastUser = i
			break
		}
	}
	if c.lastUser >= 0 {
		c.user = msgs[c.lastUser].Content
		c.sal = extractSalient(c.user)
		c.question = isQuestion(c.user)
		for i := c.lastUser - 1; i >= 0; i-- {
			if msgs[i].Role == llm.RoleUser {
				c.earlier = topicOf(msgs[i].Content, extractSalient(msgs[i].Content))
				break
			}
		}
	}
	for i := range msgs {
		if msgs[i].Role == llm.RoleSystem {
			c.role = extractRole(msgs[i].Content)
			break
		}
	}
	for i := c.lastUser + 1; i < len(msgs); i++ {
		if msgs[i].Role == llm.RoleTool {
			if c.toolCount < len(c.toolMsgs) {
				c.toolMsgs[c.toolCount] = i
			}
			c.toolCount++
		}
	}
	return c
}

// hashMessages hashes every field of every message that shapes a reply, eight bytes
// at a time (bytes are combined little-endian explicitly, so the hash, and with it every
// reply, is the same on every platform and in every process).
func hashMessages(msgs []llm.Message) uint64 {
	h := uint64(14695981039346656037)
	add := func(s string) {
		i := 0
		for ; i+8 <= len(s); i += 8 {
			w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			h = (h ^ w) * 0x9e3779b97f4a7c15
			h ^= h >> 32
		}
		for ; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * 1099511628211
		}
		h = (h ^ uint64(len(s)) ^ 0xff00) * 0x9e3779b97f4a7c15 // field separator
		h ^= h >> 29
	}
	for i := range msgs {
		m := &msgs[i]
		add(m.Role)
		add(m.Content)
		add(m.Name)
		add(m.ToolCallID)
		for _, tc := range m.ToolCalls {
			add(tc.Name)
			add(string(tc.Arguments))
		}
	}
	return h
}

// hashString is FNV-1a of one string.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// mix is the splitmix64 finaliser: it spreads a seed so nearby salts give unrelated
// choices.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// pick chooses one of n options for the decision named by salt.
func (c *convo) pick(salt uint64, n int) int {
	return int(mix(c.h^salt) % uint64(n))
}

// isQuestion reports whether the user's message reads as a question.
func isQuestion(s string) bool {
	t := strings.TrimRight(s, " \t\r\n\"')")
	if strings.HasSuffix(t, "?") {
		return true
	}
	w, ok := nextWord(s, 0)
	if !ok {
		return false
	}
	switch strings.ToLower(w.text(s)) {
	case "what", "how", "why", "when", "where", "who", "which", "can", "could", "should", "is", "are", "do", "does":
		return true
	}
	return false
}

// topicOf returns the topic phrase of s, or its first words when it has no content word.
func topicOf(s string, sal salient) string {
	if sal.ok {
		return sal.topic.text(s)
	}
	lead, _ := leadWords(s, 8)
	return lead.text(s)
}

// topic is the phrase the reply is about.
func (c *convo) topic() string { return topicOf(c.user, c.sal) }

// toolName names the tool whose result is message i: its Name, or the name of the call
// it answers.
func (c *convo) toolName(i int) string {
	m := &c.msgs[i]
	if m.Name != "" {
		return m.Name
	}
	for j := i - 1; j >= 0 && m.ToolCallID != ""; j-- {
		for _, tc := range c.msgs[j].ToolCalls {
			if tc.ID == m.ToolCallID {
				return tc.Name
			}
		}
	}
	return "tool"
}

// appendTmpl appends tmpl with {0}, {1} … replaced by args.
func appendTmpl(b []byte, tmpl string, args ...string) []byte {
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] == '{' && i+2 < len(tmpl) && tmpl[i+2] == '}' && tmpl[i+1] >= '0' && tmpl[i+1] <= '9' {
			if k := int(tmpl[i+1] - '0'); k < len(args) {
				b = append(b, args[k]...)
			}
			i += 2
			continue
		}
		b = append(b, tmpl[i])
	}
	return b
}

// appendWord appends a word of the user's text, lower-casing a sentence-initial capital
// ("Plan" → "plan") but keeping names and acronyms ("Lisbon", "SQL").
func appendWord(b []byte, src string, w span) []byte {
	word := w.text(src)
	if len(word) > 1 && isUpper(word[0]) && isLower(word[1]) && sentenceInitial(src, w.start) {
		return append(append(b, word[0]+'a'-'A'), word[1:]...)
	}
	return append(b, word...)
}

// appendList appends words as "a", "a and b" or "a, b and c".
func appendList(b []byte, src string, words []span) []byte {
	for i, w := range words {
		switch {
		case i == 0:
		case i == len(words)-1:
			b = append(b, " and "...)
		default:
			b = append(b, ", "...)
		}
		b = appendWord(b, src, w)
	}
	return b
}

// capitalizeFrom upper-cases the ASCII letter at b[i], if it is one.
func capitalizeFrom(b []byte, i int) {
	if i < len(b) && isLower(b[i]) {
		b[i] -= 'a' - 'A'
	}
}

// Phrasings, chosen by hash. {0} is the topic phrase unless noted.
var (
	openQuestion = []string{
		`here's how I'd answer your question about "{0}".`,
		`let me take your question about "{0}" step by step.`,
		`the short answer on "{0}" depends on a few things.`,
		`I've thought about your question on "{0}".`,
	}
	openStatement = []string{
		`here's my take on "{0}".`,
		`let me work through "{0}" with you.`,
		`I've looked at what you said about "{0}".`,
		`there's a fair amount to say about "{0}".`,
		`I can help with "{0}".`,
	}
	openEmpty = []string{
		`I'm ready to help whenever you are.`,
		`happy to help with whatever you need.`,
	}
	// {0} tool name, {1} result phrase; indexed by result kind.
	toolSentences = [...][]string{
		resultData: {
			`The {0} lookup returned {1}.`,
			`The {0} tool came back with {1}.`,
			`From {0} I got {1}.`,
			`Checking {0} turned up {1}.`,
		},
		resultConfirm: {
			`The {0} call went through ({1}).`,
			`{0} confirmed it: {1}.`,
			`That's done via {0} ({1}).`,
		},
		resultError: {
			`The {0} call failed with {1}.`,
			`Unfortunately {0} returned {1}.`,
		},
	}
	bodyMany = []string{
		`The points that stand out to me are {0}.`,
		`I'd break it down into {0}.`,
		`A few things matter here: {0}.`,
		`It mostly comes down to {0}.`,
	}
	bodyOne = []string{
		`The key detail is {0}.`,
		`Most of it hinges on {0}.`,
		`I'd pay particular attention to {0}.`,
	}
	// {0} is the earlier turn's topic.
	historySentences = []string{
		`Earlier you mentioned "{0}", so I've kept that in mind.`,
		`This builds on what you said earlier about "{0}".`,
		`I haven't forgotten your earlier point about "{0}".`,
	}
	// {0} is a salient word or the topic.
	closings = []string{
		`Let me know if you'd like more detail on {0}.`,
		`Happy to go deeper on any part of this.`,
		`Tell me which part you'd like me to expand on.`,
		`If it helps, I can sketch out the next steps.`,
	}
	// {0} tool name, {1} topic.
	planFirst = []string{
		`I should look this up with {0} before answering "{1}".`,
		`Answering "{1}" needs fresh data, so I'll call {0}.`,
		`Let me use {0} to check "{1}" first.`,
	}
	planFirstNoTopic = []string{
		`I should look this up with {0} before answering.`,
		`This needs fresh data, so I'll call {0}.`,
	}
	planSecondTool = []string{
		`I'll also run {0} so the answer covers both angles.`,
		`Calling {0} as well should fill in the rest.`,
	}
	planSecondWait = []string{
		`Once the results are back I can give a grounded answer.`,
		`I'll summarise whatever it returns.`,
	}
	// {0} tool names.
	afterTools = []string{
		`I have the {0} results now; time to summarise them.`,
		`The {0} output is in, so I can answer.`,
		`Now that {0} has responded, I can put the answer together.`,
	}
)

// Salts name the independent phrasing decisions.
const (
	saltOpen = iota + 1
	saltTool
	saltBody
	saltHistory
	saltClose
	saltCloseOn
	saltPlan
	saltPlan2
	saltAfter
	saltTwoCalls
	saltFail
	saltEnum
	saltNumber
	saltCallID
	saltArrayLen
)

// maxSentences bounds a reply.
const maxSentences = 5

// appendReply appends the 2–5 sentence prose answer and records where each sentence
// ends (in ends, which must have room for maxSentences).
func (c *convo) appendReply(b []byte, ends []int) ([]byte, int) {
	base := len(b)
	n := 0
	end := func() { // every sentence is followed by one space, trimmed at the very end
		b = append(b, ' ')
		ends[n] = len(b) - base
		n++
	}
	topic := c.topic()

	// Opening, prefixed by the system prompt's role when there is one.
	start := len(b)
	switch {
	case c.role.name != "":
		b = append(b, "As "...)
		if c.role.article != "" {
			b = append(append(b, c.role.article...), ' ')
		}
		b = append(append(b, c.role.name...), ", "...)
	case c.role.brief != "":
		b = append(b, "Following my brief (\""...)
		b = append(b, c.role.brief...)
		b = append(b, "\"), "...)
	}
	clauseAt := len(b)
	switch {
	case topic == "":
		b = append(b, openEmpty[c.pick(saltOpen, len(openEmpty))]...)
	case c.question:
		b = appendTmpl(b, openQuestion[c.pick(saltOpen, len(openQuestion))], topic)
	default:
		b = appendTmpl(b, openStatement[c.pick(saltOpen, len(openStatement))], topic)
	}
	if clauseAt == start {
		capitalizeFrom(b, start)
	}
	end()

	// What the tools returned.
	for k := 0; k < c.toolCount && k < len(c.toolMsgs); k++ {
		i := c.toolMsgs[k]
		set := toolSentences[toolResultKind(c.msgs[i].Content)]
		tmpl := set[c.pick(saltTool+uint64(k)<<8, len(set))]
		before, after, _ := splitAt(tmpl, "{1}")
		b = appendTmpl(b, before, c.toolName(i))
		b = appendToolSummary(b, c.msgs[i].Content)
		b = append(b, after...)
		end()
	}

	// Earlier turns.
	if c.earlier != "" && n < maxSentences {
		b = appendTmpl(b, historySentences[c.pick(saltHistory, len(historySentences))], c.earlier)
		end()
	}

	// The salient words not already in the topic.
	var body [maxSalient]span
	nb := 0
	for k := 0; k < c.sal.n && nb < 3; k++ {
		w := c.sal.words[k]
		if w.start >= c.sal.topic.start && w.end <= c.sal.topic.end {
			continue
		}
		body[nb] = w
		nb++
	}
	if nb > 0 && n < maxSentences {
		tmpl := bodyOne[c.pick(saltBody, len(bodyOne))]
		if nb > 1 {
			tmpl = bodyMany[c.pick(saltBody, len(bodyMany))]
		}
		before, after, _ := splitAt(tmpl, "{0}")
		b = append(b, before...)
		b = appendList(b, c.user, body[:nb])
		b = append(b, after...)
		end()
	}

	// A closing line, always when the reply would otherwise be one sentence.
	if n < 2 || n < maxSentences && c.pick(saltCloseOn, 3) != 0 {
		before, after, found := splitAt(closings[c.pick(saltClose, len(closings))], "{0}")
		b = append(b, before...)
		switch {
		case !found:
		case nb > 0:
			b = appendWord(b, c.user, body[nb-1])
		case c.sal.ok:
			b = append(b, topic...)
		default:
			b = append(b, "this"...)
		}
		b = append(b, after...)
		end()
	}
	b = b[:len(b)-1]
	ends[n-1]--
	return b, n
}

// splitAt splits tmpl around its placeholder; found is false when there is none.
func splitAt(tmpl, placeholder string) (before, after string, found bool) {
	return strings.Cut(tmpl, placeholder)
}
