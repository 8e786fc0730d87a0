package guardrail

import (
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// builtinTopics maps each built-in topic to the keywords that signal it. Keywords are singular;
// plurals ("elections") match too.
var builtinTopics = map[string][]string{
	"politics": {"election", "electoral", "senator", "congressman", "congresswoman", "parliament", "democrat", "republican",
		"political party", "politician", "presidential campaign", "vote for", "ballot", "left-wing", "right-wing",
		"impeachment", "partisan", "prime minister"},
	"religion": {"religion", "religious", "god", "allah", "jesus", "bible", "quran", "koran", "torah", "church", "mosque",
		"synagogue", "atheism", "atheist", "christianity", "islam", "judaism", "hinduism", "buddhism", "scripture"},
	"medical_advice": {"diagnosis", "diagnose", "prescription", "prescribe", "dosage", "medication", "symptom",
		"treatment for", "side effect", "medical advice", "antibiotic", "surgery", "what dose"},
	"legal_advice": {"lawsuit", "sue", "attorney", "lawyer", "legal advice", "litigation", "court case", "plea deal",
		"custody battle", "indictment", "is it legal"},
	"financial_advice": {"investment advice", "financial advice", "stock tip", "which stock", "buy stock", "cryptocurrency",
		"crypto", "bitcoin", "portfolio allocation", "retirement savings", "trading strategy", "forex", "options trading"},
	"violence": {"murder", "massacre", "torture", "bombing", "shooting", "stabbing", "terrorist", "terrorism", "behead",
		"mass killing"},
	"weapons": {"gun", "rifle", "pistol", "firearm", "ammunition", "ammo", "explosive", "grenade", "silencer", "ghost gun",
		"assault rifle", "pipe bomb"},
	"drugs": {"cocaine", "heroin", "methamphetamine", "fentanyl", "lsd", "mdma", "ecstasy pill", "marijuana", "cannabis",
		"opioid", "drug dealer", "get high"},
	"gambling": {"gambling", "casino", "sports betting", "poker", "roulette", "slot machine", "blackjack", "bookmaker",
		"wager"},
	"adult": {"porn", "pornography", "nude", "sexual", "explicit content", "nsfw", "erotic", "onlyfans", "escort service"},
}

// Topics lists the built-in topics of the banned_topics scanner.
var Topics = slices.Sorted(maps.Keys(builtinTopics))

var topicNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

var topicsOptions = []Option{
	{Name: "topics", Type: "string_list", Enum: Topics, MaxLen: len(Topics),
		Description: "Built-in topics to refuse, each with its own keyword list."},
	{Name: "keywords", Type: "object", MaxLen: 50,
		Description: "Your own topics: an object from topic name (lower-case letters, digits, _) to an array of keywords or phrases, e.g. {\"competitors\": [\"acme\", \"globex\"]}. A name that is also in topics extends its list."},
	{Name: "min_matches", Type: "integer", Default: 1, Minimum: num(1), Maximum: num(100),
		Description: "Keyword hits a topic needs before the text fails; raise it to tolerate passing mentions."},
}

type topic struct {
	name string
	re   *regexp.Regexp
}

type topicsDetector struct {
	topics     []topic
	minMatches int
}

func buildTopics(v values) (detector, error) {
	lists := map[string][]string{}
	for _, t := range v.strings("topics") {
		lists[t] = append(lists[t], builtinTopics[t]...)
	}
	custom := v.object("keywords")
	names := make([]string, 0, len(custom))
	for name := range custom {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := "keywords." + name
		if !topicNameRe.MatchString(name) {
			return nil, configErr(path, "a topic name must be lower-case letters, digits and _, starting with a letter")
		}
		kws, err := stringList(path, custom[name], 500)
		if err != nil {
			return nil, err
		}
		if len(kws) == 0 {
			return nil, configErr(path, "must list at least one keyword")
		}
		if err := checkPhrases(path, kws); err != nil {
			return nil, err
		}
		lists[name] = append(lists[name], kws...)
	}
	if len(lists) == 0 {
		return nil, configErr("topics", "name at least one of %s, or define your own in keywords", strings.Join(Topics, ", "))
	}
	d := topicsDetector{minMatches: v.integer("min_matches")}
	for _, name := range slices.Sorted(maps.Keys(lists)) {
		d.topics = append(d.topics, topic{name: name, re: phraseRegexp(withPlurals(lists[name]))})
	}
	return d, nil
}

func (d topicsDetector) redacts() bool { return true }

func (d topicsDetector) detect(text string) detection {
	var spans []span
	score := 0.0
	for _, t := range d.topics {
		hits := findWords(t.re, text)
		if len(hits) == 0 {
			continue
		}
		score = max(score, min(1, float64(len(hits))/float64(d.minMatches)))
		if len(hits) < d.minMatches {
			continue
		}
		for _, m := range hits {
			spans = append(spans, span{typ: t.name, start: m[0], end: m[1], detail: "banned topic " + t.name})
		}
	}
	return detection{spans: spans, score: score, failed: len(spans) > 0}
}

// withPlurals adds the English plural of each single-word keyword that does not already end
// in s.
func withPlurals(kws []string) []string {
	out := slices.Clone(kws)
	for _, k := range kws {
		if strings.ContainsAny(k, " \t") || strings.HasSuffix(k, "s") {
			continue
		}
		switch {
		case strings.HasSuffix(k, "y") && len(k) > 2 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
			out = append(out, k[:len(k)-1]+"ies")
		case strings.HasSuffix(k, "x"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
			out = append(out, k+"es")
		default:
			out = append(out, k+"s")
		}
	}
	return out
}
