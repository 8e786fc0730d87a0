package guardrail

import (
	"math"
	"regexp"
)

// injectionRule is one telltale of a prompt-injection attempt and how much it weighs.
type injectionRule struct {
	name   string
	weight float64
	re     *regexp.Regexp
}

// injectionRules are phrasings seen in published prompt-injection and jailbreak corpora.
// Weights are chosen so that one unambiguous override ("ignore all previous instructions")
// crosses the default threshold alone, while softer signals ("act as", "developer mode") only
// do so together.
var injectionRules = []injectionRule{
	{"instruction_override", 0.9, regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|skip|override|bypass|neglect)\s+(?:(?:all|any|the|your|my|these|those|of)\s+)*` +
		`(?:previous|prior|above|earlier|preceding|initial|original|system|existing|foregoing)\s+` +
		`(?:instructions?|prompts?|rules|directions|directives|guidelines|commands|context|messages?|constraints)\b`)},
	{"instruction_override", 0.8, regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget)\s+(?:everything|all|anything)\s+` +
		`(?:(?:you(?:'ve|\s+have|\s+were)?\s+(?:been\s+)?(?:told|taught|given|instructed))|(?:(?:said|written|stated)\s+)?(?:above|before|so\s+far|previously|earlier))`)},
	{"prompt_leak", 0.85, regexp.MustCompile(`(?i)\b(?:reveal|show|print|display|repeat|output|leak|dump|recite|tell\s+me|give\s+me|what\s+(?:is|are|was|were))\s+` +
		`(?:me\s+)?(?:your|the)\s+(?:(?:full|entire|exact|complete|verbatim)\s+)?` +
		`(?:system\s+(?:prompt|message|instructions?)|(?:hidden|secret|initial|original|developer|internal)\s+(?:prompt|instructions?|message|rules))`)},
	{"jailbreak", 0.8, regexp.MustCompile(`(?i)\b(?:jailbreak(?:ing|ed)?|jailbroken|do\s+anything\s+now|DAN\s+(?:mode|prompt)|` +
		`(?:enable|activate|enter|switch\s+to)\s+(?:DAN|evil|unrestricted|unfiltered|uncensored)\s+mode)\b`)},
	{"restriction_removal", 0.6, regexp.MustCompile(`(?i)\b(?:without|no|ignore|ignoring|disable|remove|bypass|turn\s+off|free\s+(?:from|of))\s+` +
		`(?:(?:any|all|your|the|of|its)\s+)*(?:restrictions|limitations|filters|filtering|censorship|guardrails|` +
		`safety\s+(?:guidelines|rules|filters|measures|protocols)|content\s+polic(?:y|ies)|ethical\s+(?:guidelines|constraints)|moral\s+constraints)\b`)},
	{"mode_switch", 0.5, regexp.MustCompile(`(?i)\b(?:developer|god|admin|debug|sudo|unrestricted|unfiltered|uncensored)\s+mode\b`)},
	{"role_play", 0.45, regexp.MustCompile(`(?i)\b(?:you\s+are\s+now|from\s+now\s+on,?\s+you(?:\s+are|\s+will|'re|\s+must)?|` +
		`pretend\s+(?:to\s+be|that\s+you(?:'re|\s+are)|you(?:'re|\s+are))|roleplay\s+as|act\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+)?)`)},
	{"new_instructions", 0.5, regexp.MustCompile(`(?i)(?:\b(?:new|updated|real|actual|true|revised)\s+(?:instructions?|system\s+prompt)\s*:|` +
		`\byour\s+(?:new|real|true|actual)\s+(?:task|goal|purpose|instructions?|objective)\s+(?:is|are)\b)`)},
	{"fake_delimiter", 0.6, regexp.MustCompile(`(?i)(?:<\|im_(?:start|end)\|>|<\|(?:system|endoftext)\|>|\[/?INST\]|<</?SYS>>|` +
		`(?m:^\s*#{2,}\s*(?:system|instructions?)\b)|(?m:^\s*(?:system|assistant)\s*:))`)},
	{"obfuscation", 0.3, regexp.MustCompile(`(?i)\b(?:base64|rot13|hex)[\s-]*(?:decode|encoded|decoding)\b`)},
}

var injectionOptions = []Option{
	{Name: "threshold", Type: "number", Default: 0.7, Minimum: num(0.01), Maximum: num(1),
		Description: "Score at or above which the text fails. Each telltale has a weight; weights combine as 1 - Π(1 - w), so several weak signals add up."},
}

type injectionDetector struct{ threshold float64 }

func buildInjection(v values) (detector, error) {
	return injectionDetector{threshold: v.number("threshold")}, nil
}

func (d injectionDetector) redacts() bool { return true }

func (d injectionDetector) detect(text string) detection {
	var spans []span
	best := map[string]float64{} // strongest weight per telltale: repeating one does not add up
	for _, r := range injectionRules {
		for _, m := range r.re.FindAllStringIndex(text, -1) {
			spans = append(spans, span{typ: r.name, start: m[0], end: m[1], replacement: "[REMOVED]"})
			best[r.name] = math.Max(best[r.name], r.weight)
		}
	}
	pass := 1.0
	for _, w := range best {
		pass *= 1 - w
	}
	score := 1 - pass
	return detection{spans: spans, score: score, failed: score >= d.threshold-1e-9}
}
