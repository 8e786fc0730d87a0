package guardrail

import (
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// PIIEntities lists the kinds of personal data the pii scanner recognises, in the order they
// claim text: a credit card number is not also reported as a phone number.
var PIIEntities = []string{"iban", "credit_card", "ssn", "email", "ip_address", "phone"}

var piiOptions = []Option{
	{Name: "entities", Type: "string_list", Enum: PIIEntities, Default: PIIEntities, MaxLen: len(PIIEntities),
		Description: "Kinds of personal data to look for."},
}

var (
	// Addresses may be internationalised (RFC 6531): letters of any script on both sides.
	emailRe = regexp.MustCompile(`[\pL\pN][\pL\pN._%+-]{0,63}@(?:[\pL\pN](?:[\pL\pN-]{0,61}[\pL\pN])?\.)+\pL{2,24}`)
	// Phone candidates: optional country code, optional area code in parentheses, then two to
	// five groups of digits; isPhone keeps those with 10 to 15 digits.
	phoneRe = regexp.MustCompile(`(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]?\d{2,4}){1,4}`)
	cardRe  = regexp.MustCompile(`\b\d(?:[ -]?\d){12,18}\b`)
	ssnRe   = regexp.MustCompile(`\b(\d{3})([- ])(\d{2})([- ])(\d{4})\b`)
	ibanRe  = regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b`)
	ipv4Re  = regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}\b`)
	ipv6Re  = regexp.MustCompile(`(?i)[0-9a-f:]*:[0-9a-f]*:[0-9a-f:.]*[0-9a-f]`)
)

type piiDetector struct{ entities map[string]bool }

func buildPII(v values) (detector, error) {
	d := piiDetector{entities: map[string]bool{}}
	for _, e := range v.strings("entities") {
		d.entities[e] = true
	}
	if len(d.entities) == 0 {
		return nil, configErr("entities", "must name at least one of %s", strings.Join(PIIEntities, ", "))
	}
	return d, nil
}

func (d piiDetector) redacts() bool { return true }

func (d piiDetector) detect(text string) detection {
	var c claims
	for _, e := range PIIEntities {
		if !d.entities[e] {
			continue
		}
		switch e {
		case "credit_card":
			c.find(text, e, cardRe, func(m string, _, _ int) bool { return isCardNumber(m) })
		case "iban":
			for _, loc := range ibanRe.FindAllStringIndex(text, -1) {
				if end := ibanEnd(text[loc[0]:loc[1]]); end > 0 {
					c.claim(span{typ: e, start: loc[0], end: loc[0] + end})
				}
			}
		case "ssn":
			c.find(text, e, ssnRe, func(m string, _, _ int) bool { return isSSN(m) })
		case "email":
			for _, loc := range findWords(emailRe, text) {
				c.claim(span{typ: e, start: loc[0], end: loc[1]})
			}
		case "ip_address":
			c.find(text, e, ipv4Re, func(m string, s, end int) bool {
				_, err := netip.ParseAddr(m)
				return err == nil && !dottedNeighbour(text, s, end)
			})
			c.find(text, e, ipv6Re, func(m string, s, end int) bool {
				a, err := netip.ParseAddr(m)
				return err == nil && a.Is6() && !wordNeighbour(text, s, end)
			})
		case "phone":
			c.find(text, e, phoneRe, func(m string, s, end int) bool { return isPhone(text, m, s, end) })
		}
	}
	return detection{spans: c.spans, failed: len(c.spans) > 0}
}

// claims collects non-overlapping spans: the first claim on a stretch of text wins.
type claims struct{ spans []span }

func (c *claims) claim(s span) bool {
	for _, o := range c.spans {
		if s.start < o.end && o.start < s.end {
			return false
		}
	}
	c.spans = append(c.spans, s)
	return true
}

// find claims every match of re that ok accepts.
func (c *claims) find(text, typ string, re *regexp.Regexp, ok func(m string, start, end int) bool) {
	for _, loc := range re.FindAllStringIndex(text, -1) {
		if ok(text[loc[0]:loc[1]], loc[0], loc[1]) {
			c.claim(span{typ: typ, start: loc[0], end: loc[1]})
		}
	}
}

func digitsOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// luhn reports whether a digit string passes the Luhn (mod 10) check of payment card numbers.
func luhn(digits string) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// cardGroupings are the ways card numbers are printed with separators: 4-4-4-4 (most),
// 4-4-4-4-3 (19 digits), 4-6-5 (Amex) and 4-6-4 (Diners).
var cardGroupings = []string{"4444", "44443", "465", "464"}

// isCardNumber accepts 13 to 19 digits from a major network's range (2–6: Mastercard, Amex,
// Diners, JCB, Visa, Discover, UnionPay, Maestro) that pass the Luhn check and, when written
// with separators, are grouped as cards are.
func isCardNumber(m string) bool {
	d := digitsOf(m)
	if len(d) < 13 || len(d) > 19 || d[0] < '2' || d[0] > '6' {
		return false
	}
	if len(d) != len(m) {
		var g strings.Builder
		for _, part := range strings.FieldsFunc(m, func(r rune) bool { return r == ' ' || r == '-' }) {
			g.WriteString(strconv.Itoa(len(part)))
		}
		if !slices.Contains(cardGroupings, g.String()) {
			return false
		}
	}
	if strings.Trim(d, d[:1]) == "" { // one digit repeated: test patterns, not cards
		return false
	}
	return luhn(d)
}

// isSSN accepts the dashed or spaced US Social Security Number forms the SSA can issue: the
// same separator twice, area not 000, 666 or 9xx, group not 00, serial not 0000.
func isSSN(m string) bool {
	p := ssnRe.FindStringSubmatch(m)
	if p == nil || p[2] != p[4] {
		return false
	}
	area, group, serial := p[1], p[3], p[5]
	return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
}

// ibanLengths are the IBAN lengths of the countries most often seen; other country codes
// accept 15 to 34 characters.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AT": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "CH": 21, "CY": 28, "CZ": 24,
	"DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GI": 23, "GR": 27, "HR": 21,
	"HU": 28, "IE": 22, "IL": 23, "IS": 26, "IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27,
	"MT": 31, "NL": 18, "NO": 15, "PL": 28, "PT": 25, "RO": 24, "SA": 24, "SE": 24, "SI": 19, "SK": 24,
	"SM": 27, "TR": 26, "UA": 29,
}

// ibanEnd returns the length of the longest prefix of m (cut at a space) that is a valid IBAN,
// or 0. The pattern may swallow a following upper-case word; cutting groups off finds the IBAN.
func ibanEnd(m string) int {
	for cand := m; ; {
		if validIBAN(strings.ReplaceAll(cand, " ", "")) {
			return len(cand)
		}
		i := strings.LastIndexByte(cand, ' ')
		if i < 0 {
			return 0
		}
		cand = cand[:i]
	}
}

// validIBAN checks length and the ISO 13616 mod-97 checksum.
func validIBAN(s string) bool {
	want, known := ibanLengths[s[:2]]
	if known && len(s) != want || !known && (len(s) < 15 || len(s) > 34) {
		return false
	}
	rearranged := s[4:] + s[:4]
	rem := 0
	for i := 0; i < len(rearranged); i++ {
		ch := rearranged[i]
		switch {
		case ch >= '0' && ch <= '9':
			rem = (rem*10 + int(ch-'0')) % 97
		case ch >= 'A' && ch <= 'Z':
			rem = (rem*100 + int(ch-'A'+10)) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// isPhone keeps phone candidates with 10 to 15 digits (E.164 allows at most 15) that stand
// alone: not part of a longer number, a decimal, a version or an IP address. An unformatted
// run of digits counts only in the North American form (10 digits, or 11 starting with 1),
// so order numbers and timestamps are not taken for phone numbers.
func isPhone(text, m string, start, end int) bool {
	d := digitsOf(m)
	n := len(d)
	if n < 10 || n > 15 {
		return false
	}
	if n == len(m) && n != 10 && (n != 11 || d[0] != '1') {
		return false
	}
	if _, err := netip.ParseAddr(m); err == nil {
		return false
	}
	if start > 0 {
		if p := text[start-1]; isAlnum(p) || strings.IndexByte("._/,", p) >= 0 {
			return false
		}
		// A separator right after a digit means the match starts inside a longer number.
		if p := text[start-1]; (p == '-' || p == ' ') && start > 1 && isDigit(text[start-2]) {
			return false
		}
	}
	if end < len(text) {
		nx := text[end]
		if isAlnum(nx) || (nx == '.' || nx == ',' || nx == '-') && end+1 < len(text) && isDigit(text[end+1]) {
			return false
		}
	}
	return true
}

// dottedNeighbour reports whether a dotted quad is part of a longer dotted run (1.2.3.4.5).
func dottedNeighbour(text string, start, end int) bool {
	return start > 0 && text[start-1] == '.' || end+1 < len(text) && text[end] == '.' && isDigit(text[end+1])
}

// wordNeighbour reports whether a match touches a letter, digit or colon on either side, as
// "d::" inside "std::vector" does.
func wordNeighbour(text string, start, end int) bool {
	return start > 0 && (isAlnum(text[start-1]) || text[start-1] == ':') || end < len(text) && (isAlnum(text[end]) || text[end] == ':')
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isAlnum(b byte) bool {
	return isDigit(b) || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
}
