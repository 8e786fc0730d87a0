package guardrail

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

// secretRule recognises one kind of credential; group names the submatch holding the secret
// (0 for the whole match).
type secretRule struct {
	name  string
	re    *regexp.Regexp
	group int
}

// secretRules are the published formats of common API keys and tokens. Order matters: the
// first rule to claim a stretch of text names it (sk-ant- before the generic sk-).
var secretRules = []secretRule{
	{"private_key", regexp.MustCompile(`-----BEGIN[A-Z ]{0,30} PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[A-Z ]{0,30} PRIVATE KEY(?: BLOCK)?-----)?`), 0},
	{"anthropic_api_key", regexp.MustCompile(`\bsk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_-]{20,}`), 0},
	{"openai_api_key", regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), 0},
	{"aws_access_key_id", regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b`), 0},
	{"aws_secret_access_key", regexp.MustCompile(`(?i)\baws_?secret_?(?:access_?)?key\b["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)`), 1},
	{"github_token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`), 0},
	{"slack_token", regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9-]{10,}`), 0},
	{"slack_webhook", regexp.MustCompile(`https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,}`), 0},
	{"stripe_key", regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b`), 0},
	{"google_api_key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), 0},
	{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), 0},
	{"password_assignment", regexp.MustCompile(`(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)\b["']?\s*[:=]\s*["']?([^\s"'` + "`" + `]{8,})`), 1},
}

// SecretTypes lists what the secrets scanner can look for; high_entropy is any long random-
// looking token.
var SecretTypes = func() []string {
	out := make([]string, 0, len(secretRules)+1)
	for _, r := range secretRules {
		if len(out) == 0 || out[len(out)-1] != r.name {
			out = append(out, r.name)
		}
	}
	return append(out, "high_entropy")
}()

var secretsOptions = []Option{
	{Name: "types", Type: "string_list", Enum: SecretTypes, Default: SecretTypes, MaxLen: len(SecretTypes),
		Description: "Kinds of secrets to look for."},
	{Name: "min_entropy", Type: "number", Default: 4.5, Minimum: num(2), Maximum: num(8),
		Description: "Shannon entropy (bits per character) from which a long token counts as high_entropy."},
	{Name: "min_length", Type: "integer", Default: 32, Minimum: num(16), Maximum: num(256),
		Description: "Shortest token checked for high_entropy (tokens over 512 characters are data, not secrets)."},
}

type secretsDetector struct {
	rules      []secretRule
	entropy    bool
	minEntropy float64
	token      *regexp.Regexp
}

func buildSecrets(v values) (detector, error) {
	want := map[string]bool{}
	for _, t := range v.strings("types") {
		want[t] = true
	}
	if len(want) == 0 {
		return nil, configErr("types", "must name at least one of %s", strings.Join(SecretTypes, ", "))
	}
	d := secretsDetector{entropy: want["high_entropy"], minEntropy: v.number("min_entropy")}
	for _, r := range secretRules {
		if want[r.name] {
			d.rules = append(d.rules, r)
		}
	}
	// '/' is left out so URL paths split into segments instead of reading as one token.
	d.token = regexp.MustCompile(fmt.Sprintf(`[A-Za-z0-9+=_-]{%d,}`, v.integer("min_length")))
	return d, nil
}

func (d secretsDetector) redacts() bool { return true }

func (d secretsDetector) detect(text string) detection {
	var c claims
	for _, r := range d.rules {
		for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
			start, end := m[2*r.group], m[2*r.group+1]
			if r.name == "password_assignment" && !plausibleSecretValue(text[start:end]) {
				continue
			}
			c.claim(span{typ: r.name, start: start, end: end})
		}
	}
	if d.entropy {
		for _, m := range d.token.FindAllStringIndex(text, -1) {
			tok := text[m[0]:m[1]]
			if len(tok) <= 512 && mixedAlnum(tok) && shannon(tok) >= d.minEntropy {
				c.claim(span{typ: "high_entropy", start: m[0], end: m[1], replacement: "[SECRET]"})
			}
		}
	}
	return detection{spans: c.spans, failed: len(c.spans) > 0}
}

// plausibleSecretValue drops assignments whose value is a reference or a placeholder
// (password=$DB_PASSWORD, password: ********, api_key=os.environ[...]).
func plausibleSecretValue(v string) bool {
	if strings.ContainsAny(v[:1], "$%{<*") || strings.ContainsAny(v, "()[]") {
		return false
	}
	if strings.Trim(v, v[:1]) == "" {
		return false
	}
	lower := strings.ToLower(v)
	for _, p := range []string{"xxxx", "redacted", "changeme", "placeholder", "your_", "your-", "<"} {
		if strings.Contains(lower, p) {
			return false
		}
	}
	return true
}

// mixedAlnum reports whether a token has both letters and digits, as generated keys do and
// long words or identifiers do not.
func mixedAlnum(s string) bool {
	var letter, digit bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letter = true
		}
	}
	return letter && digit
}

// shannon returns the Shannon entropy of s in bits per byte.
func shannon(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
