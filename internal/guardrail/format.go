package guardrail

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/agentplane/agentplane/internal/schemacheck"
)

var regexOptions = []Option{
	{Name: "patterns", Type: "string_list", Required: true, MaxLen: 50,
		Description: "Regular expressions in Go (RE2) syntax: linear-time, no backreferences or lookaround."},
	{Name: "case_insensitive", Type: "boolean", Default: false, Description: "Match letters regardless of case."},
	{Name: "must_match", Type: "boolean", Default: false,
		Description: "Fail when no pattern matches, instead of when one does (an allow-list rather than a deny-list)."},
}

type regexDetector struct {
	res       []*regexp.Regexp
	mustMatch bool
}

func buildRegex(v values) (detector, error) {
	pats := v.strings("patterns")
	if len(pats) == 0 {
		return nil, configErr("patterns", "must hold at least one pattern")
	}
	d := regexDetector{mustMatch: v.boolean("must_match")}
	for i, p := range pats {
		path := fmt.Sprintf("patterns[%d]", i)
		if len(p) > 1000 {
			return nil, configErr(path, "must be at most 1000 characters")
		}
		if v.boolean("case_insensitive") {
			p = "(?i)" + p
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, configErr(path, "is not a valid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		if re.MatchString("") {
			return nil, configErr(path, "matches the empty string, so it would match every text")
		}
		d.res = append(d.res, re)
	}
	return d, nil
}

func (d regexDetector) redacts() bool { return !d.mustMatch }

func (d regexDetector) detect(text string) detection {
	var c claims
	for i, re := range d.res {
		for _, m := range re.FindAllStringIndex(text, -1) {
			c.claim(span{typ: "pattern", start: m[0], end: m[1], detail: fmt.Sprintf("patterns[%d]", i), replacement: "[REDACTED]"})
		}
	}
	if d.mustMatch {
		if len(c.spans) > 0 {
			return detection{}
		}
		return detection{failed: true, spans: []span{{typ: "no_match", start: 0, end: len(text), whole: true, detail: "no pattern matched"}}}
	}
	return detection{spans: c.spans, failed: len(c.spans) > 0}
}

var maxLengthOptions = []Option{
	{Name: "max_chars", Type: "integer", Required: true, Minimum: num(1), Maximum: num(10_000_000),
		Description: "Most characters (Unicode code points) the text may have. Redaction truncates to this length."},
}

type maxLengthDetector struct{ max int }

func buildMaxLength(v values) (detector, error) {
	return maxLengthDetector{max: v.integer("max_chars")}, nil
}

func (d maxLengthDetector) redacts() bool { return true }

func (d maxLengthDetector) detect(text string) detection {
	n := utf8.RuneCountInString(text)
	if n <= d.max {
		return detection{}
	}
	cut := 0
	for i := 0; i < d.max; i++ {
		_, size := utf8.DecodeRuneInString(text[cut:])
		cut += size
	}
	return detection{failed: true, spans: []span{{typ: "max_length", start: cut, end: len(text), drop: true,
		detail: fmt.Sprintf("%d characters, more than the maximum of %d", n, d.max)}}}
}

var jsonSchemaOptions = []Option{
	{Name: "schema", Type: "json_schema", Required: true,
		Description: "JSON Schema (draft 2020-12) the text, parsed as JSON, must satisfy; $ref may only point inside the schema."},
	{Name: "strip_code_fences", Type: "boolean", Default: true,
		Description: "Accept a value wrapped in a Markdown code fence (```json … ```), as models often write it."},
}

type jsonSchemaDetector struct {
	schema     *schemacheck.Schema
	stripFence bool
}

func buildJSONSchema(v values) (detector, error) {
	raw, err := json.Marshal(v["schema"])
	if err != nil {
		return nil, configErr("schema", "cannot be encoded: %s", err.Error())
	}
	sch, err := schemacheck.Compile(raw)
	if err != nil {
		return nil, configErr("schema", "is not a valid JSON Schema (2020-12): %s", err.Error())
	}
	return jsonSchemaDetector{schema: sch, stripFence: v.boolean("strip_code_fences")}, nil
}

func (d jsonSchemaDetector) redacts() bool { return false }

var fenceRe = regexp.MustCompile("(?s)^```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)\r?\n?```$")

func (d jsonSchemaDetector) detect(text string) detection {
	body := strings.TrimSpace(text)
	if d.stripFence {
		if m := fenceRe.FindStringSubmatch(body); m != nil {
			body = m[1]
		}
	}
	whole := []span{{start: 0, end: len(text), whole: true}}
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		whole[0].typ, whole[0].detail = "invalid_json", "not valid JSON: "+err.Error()
		return detection{failed: true, spans: whole}
	}
	if err := d.schema.Validate(v); err != nil {
		whole[0].typ, whole[0].detail = "schema_violation", err.Error()
		return detection{failed: true, spans: whole}
	}
	return detection{}
}
