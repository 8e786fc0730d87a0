package guardrail

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Severities lists the severities of the toxicity lexicon, mildest first.
var Severities = []string{"low", "medium", "high"}

// ToxicityCategories lists the categories of the toxicity lexicon.
var ToxicityCategories = []string{"profanity", "insult", "threat", "self_harm", "hate"}

var (
	severityScore = map[string]float64{"low": 0.35, "medium": 0.7, "high": 1}
	severityRank  = map[string]int{"low": 1, "medium": 2, "high": 3}
)

// toxicTerm is one entry of the lexicon: a pattern (matched case-insensitively as whole
// words, with common letter substitutions spelled out) and its category and severity.
type toxicTerm struct {
	category, severity, pattern string
}

// toxicLexicon is deliberately small and conservative: clear profanity, insults aimed at a
// person, threats and encouragement of self-harm. Slurs are not listed here; add the terms
// that matter to you with extra_terms.
var toxicLexicon = []toxicTerm{
	{"profanity", "low", `damn(?:ed|it|n)?|crap(?:py)?|bloody\s+hell|screw\s+(?:this|that)`},
	{"profanity", "medium", `sh[i1!*]t(?:s|ty|head)?|bullsh[i1!*]t|ass(?:hole|holes|hat)|b[i1!*]tch(?:es|y)?|bastards?|piss(?:ed)?\s+off|dickheads?|wank(?:er|ers)?|arsehole`},
	{"profanity", "high", `f[u*@]ck(?:s|ed|er|ers|ing|in|off|face|wit)?|motherf[u*@]ck(?:er|ers|ing)?|c[u*]nts?`},
	{"insult", "low", `stupid|dumb|idiot(?:s|ic)?|moron(?:s|ic)?|loser|pathetic|shut\s+up|jerk|clown`},
	{"insult", "medium", `dumbass|imbecile|scumbag|piece\s+of\s+(?:garbage|trash|crap)|go\s+to\s+hell|nobody\s+(?:likes|wants)\s+you|you(?:\s+are|'re|\s+re)\s+(?:worthless|useless|a\s+waste\s+of\s+space)`},
	{"threat", "high", `i(?:'m|\s+am)?\s*(?:going\s+to|gonna|will|'ll)\s+(?:kill|murder|hurt|stab|shoot|beat\s+up|strangle)\s+(?:you|u|him|her|them)|` +
		`you(?:'re|\s+are)\s+(?:dead|going\s+to\s+die)|i\s+know\s+where\s+you\s+live|watch\s+your\s+back`},
	{"self_harm", "high", `kill\s+yoursel(?:f|ves)|kys|go\s+die|(?:you\s+should|go)\s+hang\s+yoursel(?:f|ves)|nobody\s+would\s+miss\s+you`},
	{"hate", "high", `subhumans?|(?:all|those|these)\s+\w+\s+(?:should|must|deserve\s+to)\s+(?:die|be\s+(?:killed|exterminated|wiped\s+out))`},
}

// toxicGroup is the compiled alternation of one category and severity.
type toxicGroup struct {
	category, severity string
	re                 *regexp.Regexp
	phrases            bool // re has no word boundaries of its own: filter with findWords
}

var toxicGroups = func() []toxicGroup {
	out := make([]toxicGroup, len(toxicLexicon))
	for i, t := range toxicLexicon {
		out[i] = toxicGroup{t.category, t.severity, regexp.MustCompile(`(?i)\b(?:` + t.pattern + `)\b`), false}
	}
	return out
}()

var toxicityOptions = []Option{
	{Name: "min_severity", Type: "string", Enum: Severities, Default: "medium",
		Description: "Mildest severity that fails the text: low catches insults like \"stupid\", high only the worst."},
	{Name: "categories", Type: "string_list", Enum: ToxicityCategories, Default: ToxicityCategories, MaxLen: len(ToxicityCategories),
		Description: "Categories to look for."},
	{Name: "extra_terms", Type: "string_list", MaxLen: 500,
		Description: "More words or phrases to treat as high-severity toxicity (category custom), matched case-insensitively as whole words."},
}

type toxicityDetector struct {
	groups []toxicGroup
}

func buildToxicity(v values) (detector, error) {
	minRank := severityRank[v.str("min_severity")]
	want := map[string]bool{}
	for _, c := range v.strings("categories") {
		want[c] = true
	}
	var d toxicityDetector
	for _, g := range toxicGroups {
		if want[g.category] && severityRank[g.severity] >= minRank {
			d.groups = append(d.groups, g)
		}
	}
	if extra := v.strings("extra_terms"); len(extra) > 0 {
		if err := checkPhrases("extra_terms", extra); err != nil {
			return nil, err
		}
		d.groups = append(d.groups, toxicGroup{"custom", "high", phraseRegexp(extra), true})
	}
	if len(d.groups) == 0 {
		return nil, configErr("categories", "must name at least one of %s, or give extra_terms", strings.Join(ToxicityCategories, ", "))
	}
	return d, nil
}

func (d toxicityDetector) redacts() bool { return true }

func (d toxicityDetector) detect(text string) detection {
	var c claims
	score := 0.0
	for _, g := range d.groups {
		matches := g.re.FindAllStringIndex(text, -1)
		if g.phrases {
			matches = findWords(g.re, text)
		}
		for _, m := range matches {
			if c.claim(span{typ: g.category, start: m[0], end: m[1], detail: "severity " + g.severity, replacement: "[REMOVED]"}) {
				score = max(score, severityScore[g.severity])
			}
		}
	}
	return detection{spans: c.spans, score: score, failed: len(c.spans) > 0}
}

// checkPhrases rejects blank or overlong words and phrases of option.
func checkPhrases(option string, phrases []string) error {
	for i, p := range phrases {
		switch {
		case strings.TrimSpace(p) == "":
			return configErr(fmt.Sprintf("%s[%d]", option, i), "must not be blank")
		case len(p) > 200:
			return configErr(fmt.Sprintf("%s[%d]", option, i), "must be at most 200 characters")
		}
	}
	return nil
}

// phraseRegexp compiles words or phrases into one case-insensitive alternation preferring
// the longest phrase; any run of spaces in a phrase matches any run of white space. Use it
// with findWords, which keeps whole-word matches only.
func phraseRegexp(phrases []string) *regexp.Regexp {
	alts := make([]string, 0, len(phrases))
	for _, p := range phrases {
		words := strings.Fields(p)
		for j, w := range words {
			words[j] = regexp.QuoteMeta(w)
		}
		alts = append(alts, strings.Join(words, `\s+`))
	}
	re := regexp.MustCompile(`(?i)(?:` + strings.Join(alts, "|") + `)`)
	re.Longest()
	return re
}

// findWords returns the matches of re that stand as whole words: no letter or digit touches
// either end. Unlike \b, this works for every script, not only ASCII.
func findWords(re *regexp.Regexp, text string) [][]int {
	var out [][]int
	for _, m := range re.FindAllStringIndex(text, -1) {
		if m[0] == m[1] {
			continue
		}
		before, _ := utf8.DecodeLastRuneInString(text[:m[0]])
		after, _ := utf8.DecodeRuneInString(text[m[1]:])
		if isWordRune(before) || isWordRune(after) {
			continue
		}
		out = append(out, m)
	}
	return out
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
}
