package simulated

import (
	"github.com/agentplane/agentplane/internal/llm"
	"strings"
)

// This file holds the allocation-free text analysis the simulated provider uses to
// derive its replies: word scanning, stopwords, salient words and phrases, and the role
// a system prompt gives the model.

// span is the byte range [start, end) of a word or phrase in a source string.
type span struct{ start, end int }

// text returns the part of s the span covers.
func (p span) text(s string) string { return s[p.start:p.end] }

// isWordByte reports whether b can be part of a word: ASCII letters and digits, '_',
// and the bytes of non-ASCII UTF-8 sequences (so accented and non-Latin words stay whole).
func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b >= 0x80
}

// isJoiner reports whether b joins two word runs into one word ("don't", "e-mail",
// "config.yaml").
func isJoiner(b byte) bool { return b == '\'' || b == '-' || b == '.' }

// isUnicodePunct reports whether s[i:] starts with a character of the General
// Punctuation block (curly quotes, dashes, ellipsis), which must not glue onto words.
func isUnicodePunct(s string, i int) bool {
	return s[i] == 0xE2 && i+1 < len(s) && (s[i+1] == 0x80 || s[i+1] == 0x81)
}

// nextWord returns the first word of s at or after i, or ok false when there is none.
func nextWord(s string, i int) (w span, ok bool) {
	for i < len(s) && (!isWordByte(s[i]) || isUnicodePunct(s, i)) {
		if isUnicodePunct(s, i) {
			i += 3
			continue
		}
		i++
	}
	if i >= len(s) {
		return span{}, false
	}
	start := i
	for i < len(s) {
		if isUnicodePunct(s, i) {
			// A typographic apostrophe (U+2019) inside a word joins it: "don’t".
			if i+3 < len(s) && s[i+1] == 0x80 && s[i+2] == 0x99 && isWordByte(s[i+3]) && !isUnicodePunct(s, i+3) {
				i += 3
				continue
			}
			break
		}
		if isWordByte(s[i]) {
			i++
			continue
		}
		if isJoiner(s[i]) && i+1 < len(s) && isWordByte(s[i+1]) && !isUnicodePunct(s, i+1) {
			i++
			continue
		}
		break
	}
	return span{start, i}, true
}

// prevWord returns the last word of s ending at or before i, or ok false.
func prevWord(s string, i int) (w span, ok bool) {
	end := i
	for end > 0 && !isWordByte(s[end-1]) {
		end--
	}
	if end == 0 {
		return span{}, false
	}
	start := end
	for start > 0 && (isWordByte(s[start-1]) || start >= 2 && isJoiner(s[start-1]) && isWordByte(s[start-2])) {
		start--
	}
	return span{start, end}, true
}

// stopwords are function words and chat filler that never make a reply's topic.
var stopwords = func() map[string]bool {
	words := strings.Fields(`a about above after again against all almost also although am an and
	another any anybody anyone anything are aren't around as ask asked asking at be because been before
	being below best better between both but by can can't cannot could couldn't dear did didn't do
	does doesn't doing don't done down during each either else enough etc even ever every
	everything few find for from further get gets getting give given go goes going good got great
	had hadn't has hasn't have haven't having he he'd he's hello her here here's hers herself hey
	hi him himself his how how's however i i'd i'll i'm i've if in into is isn't it it's its
	itself just kind know let let's like likely make many may maybe me might mine more most much
	must my myself need needs neither new no nor not now of off often oh ok okay on once one only
	or other others otherwise our ours ourselves out over own per perhaps please pretty quite
	rather really regarding right said same say says see seem seems shall she she'd she's should
	shouldn't show since so some somebody someone something sometimes soon sort still such sure
	tell than thank thanks that that's the their theirs them themselves then there there's these
	they they'd they'll they're they've thing things think this those though through thus to too
	toward towards try trying under unless until up upon us use used using very via want wanted
	wants was wasn't way we we'd we'll we're we've well were weren't what what's whatever when
	where where's whether which while who who's whom whose why will with within without won't
	would wouldn't yes yet you you'd you'll you're you've your yours yourself yourselves`)
	set := make(map[string]bool, len(words))
	for _, w := range words {
		set[w] = true
	}
	return set
}()

// isStopword reports whether w, compared case-insensitively (a typographic apostrophe as
// '), is a stopword. Single letters count as stopwords.
func isStopword(w string) bool {
	if len(w) <= 1 {
		return true
	}
	return stopwords[strings.ReplaceAll(strings.ToLower(w), "’", "'")]
}

// isUpper reports whether b is an ASCII capital letter.
func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

// isLower reports whether b is an ASCII small letter.
func isLower(b byte) bool { return b >= 'a' && b <= 'z' }

// sentenceInitial reports whether the word starting at i opens a sentence of s.
func sentenceInitial(s string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch c := s[j]; {
		case c == ' ' || c == '\t' || c == '"' || c == '\'' || c == '(' || c == '*' || c == '#' || c == '>':
			continue
		case c == '.' || c == '!' || c == '?' || c == '\n' || c == ':':
			return true
		default:
			return false
		}
	}
	return true
}

// maxSalient is how many salient words are kept per message.
const maxSalient = 5

// salient holds the most telling words of a message, in text order, and its topic: the
// short phrase of adjacent content words around the single most telling word.
type salient struct {
	words [maxSalient]span
	n     int
	topic span
	ok    bool // false when the message has no content words at all
}

// extractSalient scores every non-stopword of s (longer words, the first few content
// words, mid-sentence capitals, digits and hyphens score higher) and keeps the best
// maxSalient distinct ones.
func extractSalient(s string) salient {
	var out salient
	type scored struct {
		w     span
		score int
	}
	var top [maxSalient]scored
	n, content := 0, 0
	for i := 0; ; {
		w, ok := nextWord(s, i)
		if !ok {
			break
		}
		i = w.end
		word := w.text(s)
		if isStopword(word) || len(word) > 40 {
			continue
		}
		score := min(len(word), 12)
		if isUpper(word[0]) && !sentenceInitial(s, w.start) {
			score += 2
		}
		if content < 3 { // the request itself usually comes first
			score += 3
		}
		content++
		if strings.IndexByte(word, '-') >= 0 {
			score++
		}
		for k := 0; k < len(word); k++ {
			if word[k] >= '0' && word[k] <= '9' {
				score += 2
				break
			}
		}
		// Insert keeping top sorted by score, earlier words first on ties.
		pos := n
		for pos > 0 && top[pos-1].score < score {
			pos--
		}
		if pos >= maxSalient {
			continue
		}
		dup := false
		for k := 0; k < n; k++ {
			if kw := top[k].w.text(s); len(kw) == len(word) && strings.EqualFold(kw, word) {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		if n < maxSalient {
			n++
		}
		copy(top[pos+1:n], top[pos:n-1])
		top[pos] = scored{w, score}
	}
	if n == 0 {
		return out
	}
	out.ok = true
	out.topic = phraseAround(s, top[0].w)
	// Text order reads more naturally than score order.
	for k := 0; k < n; k++ {
		out.words[k] = top[k].w
	}
	out.n = n
	for a := 1; a < n; a++ {
		for b := a; b > 0 && out.words[b].start < out.words[b-1].start; b-- {
			out.words[b], out.words[b-1] = out.words[b-1], out.words[b]
		}
	}
	return out
}

// maxPhraseWords bounds the topic phrase.
const maxPhraseWords = 3

// phraseAround grows w into the run of adjacent content words (separated by single
// spaces, never across punctuation) it belongs to, up to maxPhraseWords words.
func phraseAround(s string, w span) span {
	p := w
	count := 1
	for count < maxPhraseWords {
		nw, ok := nextWord(s, p.end)
		if !ok || nw.start != p.end+1 || s[p.end] != ' ' || isStopword(nw.text(s)) {
			break
		}
		p.end = nw.end
		count++
	}
	for count < maxPhraseWords {
		pw, ok := prevWord(s, p.start)
		if !ok || pw.end != p.start-1 || s[pw.end] != ' ' || isStopword(pw.text(s)) {
			break
		}
		p.start = pw.start
		count++
	}
	return p
}

// leadWords returns the span of the first max words of s (from the first word's start to
// the last one's end), and whether s was longer.
func leadWords(s string, max int) (span, bool) {
	first, ok := nextWord(s, 0)
	if !ok {
		return span{}, false
	}
	p := first
	for count := 1; ; count++ {
		w, ok := nextWord(s, p.end)
		if !ok {
			return p, false
		}
		if count == max {
			return p, true
		}
		p.end = w.end
	}
}

// firstSentence returns s up to its first sentence end ('.', '!' or '?' followed by
// whitespace, or a newline), without that punctuation.
func firstSentence(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			return strings.TrimRight(s[:i], " \t\r")
		case '.', '!', '?':
			if i+1 == len(s) || llm.IsSpace(s[i+1]) {
				return s[:i]
			}
		}
	}
	return s
}

// role is what a system prompt says the model is.
type role struct {
	article string // "a", "an", "the", "your" or "" for a name ("As Ada")
	name    string // "travel assistant"; empty when the prompt names no role
	brief   string // the first sentence's lead, used when name is empty
}

// roleMarkers introduce the role in a system prompt's first sentence, longest first.
var roleMarkers = []string{"you will act as ", "your role is ", "you will be ", "you're ", "you are ", "acting as ", "act as "}

// roleStoppers end the role phrase ("a reviewer who checks …" → "reviewer").
var roleStoppers = map[string]bool{"who": true, "that": true, "which": true, "whose": true, "whom": true,
	"with": true, "to": true, "helping": true, "when": true, "where": true, "while": true, "so": true,
	"because": true}

// extractRole finds the role a system prompt assigns ("You are a helpful travel
// assistant." → a, "helpful travel assistant"), or else the lead of its first sentence.
func extractRole(sys string) role {
	first := firstSentence(sys)
	if first == "" {
		return role{}
	}
	for i := 0; i < len(first); i++ {
		if i > 0 && isWordByte(first[i-1]) {
			continue
		}
		if c := first[i] | 0x20; c != 'y' && c != 'a' {
			continue // every marker starts with "you" or "act"
		}
		for _, m := range roleMarkers {
			if len(first)-i < len(m) || !strings.EqualFold(first[i:i+len(m)], m) {
				continue
			}
			if r, ok := roleAfter(first[i+len(m):]); ok {
				return r
			}
		}
	}
	lead, _ := leadWords(first, 10)
	return role{brief: lead.text(first)}
}

// roleAfter reads the role phrase following a marker.
func roleAfter(rest string) (role, bool) {
	rest = strings.TrimLeft(rest, " ")
	var r role
	article := ""
	for _, a := range [...]string{"a ", "an ", "the ", "my ", "your ", "our "} {
		if len(rest) >= len(a) && strings.EqualFold(rest[:len(a)], a) {
			article = strings.ToLower(a[:len(a)-1])
			rest = strings.TrimLeft(rest[len(a):], " ")
			break
		}
	}
	first, ok := nextWord(rest, 0)
	if !ok || first.start != 0 {
		return r, false
	}
	if article == "" && !isUpper(rest[0]) {
		return r, false // "You are helpful." names no role.
	}
	p := first
	for count := 1; count < 6; count++ {
		if p.end < len(rest) && rest[p.end] != ' ' {
			break // punctuation ends the phrase
		}
		w, ok := nextWord(rest, p.end)
		if !ok || w.start != p.end+1 || roleStoppers[strings.ToLower(w.text(rest))] {
			break
		}
		p.end = w.end
	}
	r.name = p.text(rest)
	switch article {
	case "", "the":
		r.article = article
	case "a", "an":
		r.article = article // the author knows "an SRE" better than a vowel rule
	case "my", "our":
		r.article = "your"
	case "your":
		r.article = "my"
	}
	return r, true
}
