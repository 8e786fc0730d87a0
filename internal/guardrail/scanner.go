package guardrail

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Result is what one scanner found in one text.
type Result struct {
	Scanner  string    `json:"scanner" doc:"The scanner type."`
	Passed   bool      `json:"passed"`
	Score    float64   `json:"score" doc:"How strongly the scanner fired, 0 to 1; scanners without a graded score give 1 on failure and 0 otherwise."`
	Action   string    `json:"action,omitempty" enum:"block,warn,redact" doc:"The action this scanner takes when it fails (set by a guardrail check)."`
	Findings []Finding `json:"findings"`
	Redacted string    `json:"redacted,omitempty" doc:"The text with this scanner's findings replaced, when it found something it can redact."`
}

// Finding is one thing a scanner found. Start and End are offsets in Unicode code points
// (not bytes), End exclusive.
type Finding struct {
	Type   string `json:"type" doc:"What was found, e.g. email, openai_api_key, instruction_override."`
	Start  int    `json:"start" doc:"Offset of the first character, in Unicode code points."`
	End    int    `json:"end" doc:"Offset after the last character, in Unicode code points."`
	Match  string `json:"match" doc:"The matched text; masked for sensitive scanners (pii, secrets, toxicity, regex)."`
	Detail string `json:"detail,omitempty"`
}

// span is a finding in byte offsets, with how to redact it.
type span struct {
	typ         string
	start, end  int // byte offsets into the scanned text
	detail      string
	replacement string // "" means "[" + upper(typ) + "]"
	drop        bool   // redaction removes the text without a placeholder (truncation)
	whole       bool   // the finding is about the whole text: no match to show
}

func (s span) redaction() string {
	switch {
	case s.drop:
		return ""
	case s.replacement != "":
		return s.replacement
	}
	return "[" + strings.ToUpper(s.typ) + "]"
}

// detection is a detector's raw verdict.
type detection struct {
	spans  []span
	score  float64
	failed bool
}

// detector is the seam between Scanner and each scanner type's logic.
type detector interface {
	detect(text string) detection
	redacts() bool // whether its findings can be replaced in the text
}

// Scanner is one configured check, safe for concurrent use.
type Scanner struct {
	typ    *ScannerType
	det    detector
	action string // config.action, "" when the guardrail's action applies
}

// Type returns the scanner's type, e.g. "pii".
func (s *Scanner) Type() string { return s.typ.Type }

// Scan checks one text.
func (s *Scanner) Scan(text string) Result {
	r, _ := s.scan(text)
	return r
}

// maxFindings bounds the findings a result lists; redaction still covers every span.
const maxFindings = 100

func (s *Scanner) scan(text string) (Result, []span) {
	d := s.det.detect(text)
	r := Result{Scanner: s.typ.Type, Passed: !d.failed, Score: round3(d.score), Findings: []Finding{}}
	if d.failed && d.score == 0 {
		r.Score = 1
	}
	sort.SliceStable(d.spans, func(i, j int) bool { return d.spans[i].start < d.spans[j].start })
	shown := d.spans[:min(len(d.spans), maxFindings)]
	offs := make([]int, 0, 2*len(shown))
	for _, sp := range shown {
		offs = append(offs, sp.start, sp.end)
	}
	cp := codePointOffsets(text, offs)
	for i, sp := range shown {
		m := text[sp.start:sp.end]
		switch {
		case sp.whole:
			m = ""
		case s.typ.sensitive:
			m = mask(m)
		default:
			m = clip(m)
		}
		r.Findings = append(r.Findings, Finding{Type: sp.typ, Start: cp[2*i], End: cp[2*i+1], Match: m, Detail: sp.detail})
	}
	if len(d.spans) > 0 && s.det.redacts() {
		r.Redacted = applyRedactions(text, d.spans)
	}
	return r, d.spans
}

func round3(f float64) float64 {
	return float64(int(f*1000+0.5)) / 1000
}

// ScannerType describes one kind of scanner for the catalog and builds configured scanners.
type ScannerType struct {
	Type        string   `json:"type"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Redacts     bool     `json:"redacts" doc:"Whether the scanner can redact what it finds (action redact)."`
	Options     []Option `json:"options"`

	sensitive bool // findings show masked matches
	build     func(v values) (detector, error)
}

// Catalog returns every scanner type with its options, in a stable order.
func Catalog() []ScannerType {
	out := make([]ScannerType, len(scannerTypes))
	for i, t := range scannerTypes {
		out[i] = *t
		out[i].Options = slices.Clone(t.Options)
	}
	return out
}

// LookupType returns the scanner type named typ.
func LookupType(typ string) (*ScannerType, bool) {
	for _, t := range scannerTypes {
		if t.Type == typ {
			return t, true
		}
	}
	return nil, false
}

// TypeNames lists the scanner types.
func TypeNames() []string {
	out := make([]string, len(scannerTypes))
	for i, t := range scannerTypes {
		out[i] = t.Type
	}
	return out
}

// NewScanner validates config for scanner type typ and builds the scanner. Errors are
// *ConfigError; an unknown type has an empty Option.
func NewScanner(typ string, config map[string]any) (*Scanner, error) {
	t, ok := LookupType(typ)
	if !ok {
		return nil, &ConfigError{Message: fmt.Sprintf("unknown scanner type %q; one of %s", typ, strings.Join(TypeNames(), ", "))}
	}
	opts := append(slices.Clone(t.Options), actionOption(t.Redacts))
	v, err := parseOptions(opts, config)
	if err != nil {
		return nil, err
	}
	det, err := t.build(v)
	if err != nil {
		return nil, err
	}
	return &Scanner{typ: t, det: det, action: v.str("action")}, nil
}

// ValidateConfig checks a scanner's type and config without keeping the scanner.
func ValidateConfig(typ string, config map[string]any) error {
	_, err := NewScanner(typ, config)
	return err
}

// actionOption is the option every scanner has: its own action on failure.
func actionOption(redacts bool) Option {
	enum := []string{ActionBlock, ActionWarn}
	if redacts {
		enum = append(enum, ActionRedact)
	}
	return Option{Name: "action", Type: "string", Enum: enum,
		Description: "What happens when this scanner fails; defaults to the guardrail's action."}
}

// applyRedactions replaces spans (byte offsets, any order, possibly overlapping) in text.
// Overlapping spans merge into one, redacted as the earliest-starting of them.
func applyRedactions(text string, spans []span) string {
	sorted := slices.Clone(spans)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].start != sorted[j].start {
			return sorted[i].start < sorted[j].start
		}
		return sorted[i].end > sorted[j].end
	})
	var b strings.Builder
	b.Grow(len(text))
	pos := 0
	for i := 0; i < len(sorted); {
		cur := sorted[i]
		end := cur.end
		j := i + 1
		for ; j < len(sorted) && sorted[j].start < end; j++ {
			end = max(end, sorted[j].end)
		}
		b.WriteString(text[pos:cur.start])
		b.WriteString(cur.redaction())
		pos = end
		i = j
	}
	b.WriteString(text[pos:])
	return b.String()
}

// codePointOffsets converts byte offsets of text (in any order) to code point offsets in
// one pass over the text.
func codePointOffsets(text string, offs []int) []int {
	idx := make([]int, len(offs))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return offs[idx[a]] < offs[idx[b]] })
	out := make([]int, len(offs))
	pos, n := 0, 0
	for _, i := range idx {
		n += utf8.RuneCountInString(text[pos:offs[i]])
		pos = offs[i]
		out[i] = n
	}
	return out
}

// mask hides the middle of a sensitive match, keeping at most four characters at each end
// (fewer for short values) so a person can still recognise it.
func mask(s string) string {
	r := []rune(s)
	n := len(r)
	if n <= 4 {
		return strings.Repeat("*", n)
	}
	k := min(4, n/4)
	return string(r[:k]) + "****" + string(r[n-k:])
}

// clip shortens a long match for display.
func clip(s string) string {
	const limit = 80
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit]) + "…"
}
