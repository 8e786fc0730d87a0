package simulated

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentplane/agentplane/internal/llm"
)

// This file reads the text the simulated provider derives its replies from: words,
// stopwords, salient words and phrases, and the role a system prompt gives the model.

// span is the byte range [start, end) of a word or phrase in a source string.
type span struct{ start, end int }

// text returns the part of s the span covers.
func (p span) text(s string) string { return s[p.start:p.end] }

// isWordRune reports whether r can be part of a word: an ASCII letter, digit or '_', or
// any non-ASCII character outside the General Punctuation block (curly quotes, dashes,
// ellipsis), so accented and non-Latin words stay whole.
func isWordRune(r rune) bool {
	return r < 0x80 && isWordByte(byte(r)) || r >= 0x80 && (r < 0x2000 || r > 0x207F)
}

// wordSpans appends to ws the first max words of s (all with max -1): runs of word
// characters joined by ', ’, - or . ("don’t", "e-mail", "config.yaml"). Callers pass a
// buffer on their stack (BenchmarkComplete/plain).
func wordSpans(ws []span, s string, max int) []span {
	start := -1
	for i := 0; i < len(s) && len(ws) != max; {
		r, n := utf8.DecodeRuneInString(s[i:])
		next, _ := utf8.DecodeRuneInString(s[i+n:])
		switch {
		case isWordRune(r) && start < 0:
			start = i
		case isWordRune(r), start >= 0 && strings.ContainsRune("'’.-", r) && i+n < len(s) && isWordRune(next):
		case start >= 0:
			ws, start = append(ws, span{start, i}), -1
		}
		i += n
	}
	if start >= 0 && len(ws) != max {
		ws = append(ws, span{start, len(s)})
	}
	return ws
}

// stopwords are function words and chat filler that never make a reply's topic, sorted.
var stopwords = strings.Fields(`
	a about above after again against all almost also although am an and another any anybody anyone anything are
	aren't around as ask asked asking at be because been before being below best better between both but by can
	can't cannot could couldn't dear did didn't do does doesn't doing don't done down during each either else
	enough etc even ever every everything few find for from further get gets getting give given go goes going good
	got great had hadn't has hasn't have haven't having he he'd he's hello her here here's hers herself hey hi him
	himself his how how's however i i'd i'll i'm i've if in into is isn't it it's its itself just kind know let
	let's like likely make many may maybe me might mine more most much must my myself need needs neither new no
	nor not now of off often oh ok okay on once one only or other others otherwise our ours ourselves out over own
	per perhaps please pretty quite rather really regarding right said same say says see seem seems shall she
	she'd she's should shouldn't show since so some somebody someone something sometimes soon sort still such sure
	tell than thank thanks that that's the their theirs them themselves then there there's these they they'd
	they'll they're they've thing things think this those though through thus to too toward towards try trying
	under unless until up upon us use used using very via want wanted wants was wasn't way we we'd we'll we're
	we've well were weren't what what's whatever when where where's whether which while who who's whom whose why
	will with within without won't would wouldn't yes yet you you'd you'll you're you've your yours yourself
	yourselves`)

// isStopword reports whether w, compared case-insensitively (a typographic apostrophe as
// '), is a stopword. Single letters count as stopwords.
func isStopword(w string) bool {
	var buf [16]byte // longer than any stopword, lowered on the stack (BenchmarkComplete/plain)
	b := buf[:0]
	for i := 0; i < len(w) && len(b) < len(buf); i++ {
		if strings.HasPrefix(w[i:], "’") {
			b, i = append(b, '\''), i+2
		} else {
			b = append(b, w[i]|byte(bonus(isUpper(w[i]), 0x20)))
		}
	}
	_, found := slices.BinarySearch(stopwords, string(b))
	return len(w) <= 1 || found
}

// isWordByte reports whether b can be part of a word (see isWordRune).
func isWordByte(b byte) bool { return isLower(b|0x20) || b >= '0' && b <= '9' || b == '_' || b >= 0x80 }

// isUpper reports whether b is an ASCII capital letter.
func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

// isLower reports whether b is an ASCII small letter.
func isLower(b byte) bool { return b >= 'a' && b <= 'z' }

// sentenceInitial reports whether the word starting at i opens a sentence of s.
func sentenceInitial(s string, i int) bool {
	j := strings.LastIndexFunc(s[:i], func(r rune) bool { return !strings.ContainsRune(" \t\"'(*#>", r) })
	return j < 0 || strings.ContainsRune(".!?\n:", rune(s[j]))
}

// maxSalient is how many salient words are kept per message.
const maxSalient = 5

// salient holds the most telling words of a message, in text order, and its topic: the
// short phrase of adjacent content words around the single most telling word.
type salient struct {
	words []span
	topic span // meaningless without words
}

// extractSalient scores every non-stopword of s (longer words, the first few content
// words, mid-sentence capitals, digits and hyphens score higher) and keeps the best
// maxSalient distinct ones, best first and earlier words first on ties.
func extractSalient(s string) (out salient) {
	type scored struct {
		w     span
		score int
	}
	var wbuf [128]span
	var sbuf [128]scored
	ws, cands := wordSpans(wbuf[:0], s, -1), sbuf[:0]
	for _, w := range ws {
		if word := w.text(s); !isStopword(word) && len(word) <= 40 {
			score := min(len(word), 12) + bonus(isUpper(word[0]) && !sentenceInitial(s, w.start), 2) + bonus(len(cands) < 3, 3) +
				bonus(strings.Contains(word, "-"), 1) + bonus(strings.ContainsAny(word, "0123456789"), 2)
			cands = append(cands, scored{w, score})
		}
	}
	slices.SortStableFunc(cands, func(a, b scored) int { return b.score - a.score })
	var top [maxSalient]span
	words := top[:0]
	for _, c := range cands {
		if len(words) < maxSalient && !slices.ContainsFunc(words, func(w span) bool { return strings.EqualFold(w.text(s), c.w.text(s)) }) {
			words = append(words, c.w)
		}
	}
	if len(words) == 0 {
		return out
	}

	// Text order reads more naturally than score order.
	out.topic = phraseAround(s, ws, slices.Index(ws, words[0]))
	out.words = slices.Clone(words)
	slices.SortFunc(out.words, func(a, b span) int { return a.start - b.start })
	return out
}

// bonus is n when cond holds, else 0.
func bonus(cond bool, n int) int {
	if cond {
		return n
	}
	return 0
}

// phraseAround grows ws[k] into the run of adjacent content words (separated by single
// spaces, never across punctuation) it belongs to, up to three words.
func phraseAround(s string, ws []span, k int) span {
	first, last := k, k
	joined := func(a, b int) bool { return ws[b].start == ws[a].end+1 && s[ws[a].end] == ' ' }
	for last-first < 2 && last+1 < len(ws) && joined(last, last+1) && !isStopword(ws[last+1].text(s)) {
		last++
	}
	for last-first < 2 && first > 0 && joined(first-1, first) && !isStopword(ws[first-1].text(s)) {
		first--
	}
	return span{ws[first].start, ws[last].end}
}

// leadWords returns s from its first word's start to the end of its max-th word (or last).
func leadWords(s string, max int) string {
	var buf [10]span
	if ws := wordSpans(buf[:0], s, max); len(ws) > 0 {
		return s[ws[0].start:ws[len(ws)-1].end]
	}
	return ""
}

// firstSentence returns s up to its first sentence end ('.', '!' or '?' followed by
// whitespace, or a newline), without that punctuation.
func firstSentence(s string) string {
	s, _, _ = strings.Cut(strings.TrimLeft(s, " \t\r\n"), "\n")
	s = strings.TrimRight(s, " \t\r")
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(".!?", s[i]) >= 0 && (i+1 == len(s) || llm.IsSpace(s[i+1])) {
			return s[:i]
		}
	}
	return s
}

// roleMarkers introduce the role in a system prompt's first sentence, longest first.
var roleMarkers = []string{"you will act as ", "your role is ", "you will be ", "you're ", "you are ", "acting as ", "act as "}

// articles may open a role phrase, each with the one the model says it with: the author
// knows "an SRE" better than a vowel rule, and "my chef" is "your chef" to the user.
var articles = map[string]string{"a": "a", "an": "an", "the": "the", "my": "your", "our": "your", "your": "my"}

// roleStoppers end the role phrase ("a reviewer who checks …" → "reviewer").
var roleStoppers = strings.Fields("who that which whose whom with to helping when where while so because")

// extractRole returns the words a reply opens with to take on the role a system prompt
// assigns ("You are a helpful travel assistant." → "As a helpful travel assistant, "), or
// else to follow the lead of its first sentence (`Following my brief ("…"), `); "" when
// the prompt says nothing.
func extractRole(sys string) string {
	first := firstSentence(sys)
	for i := range len(first) {
		for _, m := range roleMarkers {
			if (i == 0 || !isWordByte(first[i-1])) && len(first)-i >= len(m) && strings.EqualFold(first[i:i+len(m)], m) {
				if r := roleAfter(first[i+len(m):]); r != "" {
					return r
				}
			}
		}
	}
	if brief := leadWords(first, 10); brief != "" {
		return `Following my brief ("` + brief + `"), `
	}
	return ""
}

// roleAfter reads the role phrase following a marker, an optional article then up to six
// words up to punctuation or a stopper, into "As …, ", or "" when it names no role.
func roleAfter(rest string) string {
	rest = strings.TrimLeft(rest, " ")
	first, after, _ := strings.Cut(rest, " ")
	article, ok := articles[strings.ToLower(first)]
	if ok {
		rest, article = strings.TrimLeft(after, " "), article+" "
	}
	var buf [6]span
	ws := wordSpans(buf[:0], rest, 6)
	if len(ws) == 0 || ws[0].start != 0 || article == "" && !isUpper(rest[0]) {
		return "" // "You are helpful." names no role.
	}
	n := 1
	for n < len(ws) && ws[n].start == ws[n-1].end+1 && rest[ws[n-1].end] == ' ' &&
		!slices.ContainsFunc(roleStoppers, func(w string) bool { return strings.EqualFold(w, ws[n].text(rest)) }) {
		n++
	}
	return "As " + article + rest[:ws[n-1].end] + ", "
}
