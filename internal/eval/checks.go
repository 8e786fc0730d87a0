package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/schemacheck"
	"github.com/agentplane/agentplane/internal/store"
)

// The deterministic evaluator types: no model call, the same case always gets the same score.
func init() {
	caseOpt := option{name: "case_sensitive", typ: "boolean"}
	kinds["exact_match"] = kind{dataType: domain.ScoreBoolean,
		options: []option{{name: "expected", typ: "string"}, caseOpt}, score: exactMatch}
	kinds["contains"] = kind{dataType: domain.ScoreBoolean,
		options: []option{{name: "value", typ: "string"}, caseOpt}, score: contains}
	kinds["regex"] = kind{dataType: domain.ScoreBoolean,
		options: []option{{name: "pattern", typ: "string", required: true}}, check: checkRegex, score: regexMatch}
	kinds["json_schema"] = kind{dataType: domain.ScoreBoolean,
		options: []option{{name: "schema", typ: "object", required: true}}, check: checkSchemaOption, score: jsonSchema}
	kinds["json_match"] = kind{dataType: domain.ScoreBoolean,
		options: []option{{name: "fields", typ: "string_list", required: true}}, score: jsonMatch}
	kinds["similarity"] = kind{dataType: domain.ScoreNumeric,
		options: []option{{name: "expected", typ: "string"}, caseOpt}, score: similarity}
}

// Text is the text of an output for text checks: a JSON string as it is, the content of an
// agent's {"content": text} answer, anything else as compact JSON.
func Text(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if c, ok := x["content"].(string); ok && len(x) == 1 {
			return c
		}
	case nil:
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// Value is an output as a JSON value for JSON checks. An agent's {"content": text} answer is
// its text: the JSON the text holds (a model asked for JSON in plain text), else the text as
// a string. Any other output is itself.
func Value(raw json.RawMessage) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		if c, ok := m["content"].(string); ok {
			var inner any
			if json.Unmarshal([]byte(strings.TrimSpace(c)), &inner) == nil {
				return inner, nil
			}
			return c, nil
		}
	}
	return v, nil
}

func boolScore(ok bool, comment string) (float64, string, error) {
	if ok {
		return 1, comment, nil
	}
	return 0, comment, nil
}

// expectedText is what a text check compares with: config[option] when set, else the case's
// expected output; neither is a *store.ValidationError.
func expectedText(cfg domain.JSONObject, option string, c Case) (string, error) {
	if s, ok := cfg[option].(string); ok {
		return s, nil
	}
	if len(c.ExpectedOutput) == 0 || string(c.ExpectedOutput) == "null" {
		return "", &store.ValidationError{Field: "expected_output", Message: fmt.Sprintf("is required to compare with (or set config.%s on the evaluator)", option)}
	}
	return Text(c.ExpectedOutput), nil
}

// fold lowers both texts unless config.case_sensitive is true (the default is false: case
// rarely matters to whether an answer is right).
func fold(cfg domain.JSONObject, a, b string) (string, string) {
	if cs, _ := cfg["case_sensitive"].(bool); cs {
		return a, b
	}
	return strings.ToLower(a), strings.ToLower(b)
}

func exactMatch(cfg domain.JSONObject, c Case) (float64, string, error) {
	want, err := expectedText(cfg, "expected", c)
	if err != nil {
		return 0, "", err
	}
	got, want := fold(cfg, strings.TrimSpace(Text(c.Output)), strings.TrimSpace(want))
	if got == want {
		return boolScore(true, "the output equals the expected text")
	}
	return boolScore(false, fmt.Sprintf("the output %s differs from the expected %s", quoteShort(got), quoteShort(want)))
}

func contains(cfg domain.JSONObject, c Case) (float64, string, error) {
	want, err := expectedText(cfg, "value", c)
	if err != nil {
		return 0, "", err
	}
	got, want := fold(cfg, Text(c.Output), want)
	if strings.Contains(got, want) {
		return boolScore(true, fmt.Sprintf("the output contains %s", quoteShort(want)))
	}
	return boolScore(false, fmt.Sprintf("the output does not contain %s", quoteShort(want)))
}

func checkRegex(cfg domain.JSONObject) error {
	if _, err := regexp.Compile(cfg["pattern"].(string)); err != nil {
		return &store.ValidationError{Field: "config.pattern", Message: "is not a valid regular expression (RE2 syntax): " + err.Error()}
	}
	return nil
}

func regexMatch(cfg domain.JSONObject, c Case) (float64, string, error) {
	re := regexp.MustCompile(cfg["pattern"].(string)) // checked when the evaluator was saved
	text := Text(c.Output)
	if loc := re.FindStringIndex(text); loc != nil {
		return boolScore(true, fmt.Sprintf("the output matches %s at %s", quoteShort(re.String()), quoteShort(text[loc[0]:loc[1]])))
	}
	return boolScore(false, fmt.Sprintf("the output does not match %s", quoteShort(re.String())))
}

func schemaOf(cfg domain.JSONObject) (*schemacheck.Schema, error) {
	raw, err := json.Marshal(cfg["schema"])
	if err != nil {
		return nil, err
	}
	return schemacheck.Compile(raw)
}

func checkSchemaOption(cfg domain.JSONObject) error {
	if _, err := schemaOf(cfg); err != nil {
		return &store.ValidationError{Field: "config.schema", Message: "is not a valid JSON Schema: " + err.Error()}
	}
	return nil
}

func jsonSchema(cfg domain.JSONObject, c Case) (float64, string, error) {
	s, err := schemaOf(cfg)
	if err != nil {
		return 0, "", err
	}
	v, err := Value(c.Output)
	if err != nil {
		return boolScore(false, "the output is not JSON")
	}
	if err := s.Validate(v); err != nil {
		return boolScore(false, "the output does not match the schema: "+err.Error())
	}
	return boolScore(true, "the output matches the schema")
}

func jsonMatch(cfg domain.JSONObject, c Case) (float64, string, error) {
	if len(c.ExpectedOutput) == 0 || string(c.ExpectedOutput) == "null" {
		return 0, "", &store.ValidationError{Field: "expected_output", Message: "is required: json_match compares fields of the output with those of the expected output"}
	}
	got, err := Value(c.Output)
	if err != nil {
		return boolScore(false, "the output is not JSON")
	}
	want, err := Value(c.ExpectedOutput)
	if err != nil {
		return 0, "", &store.ValidationError{Field: "expected_output", Message: "is not JSON"}
	}
	var differ []string
	for _, f := range cfg["fields"].([]any) {
		path := f.(string)
		g, gok := field(got, path)
		w, wok := field(want, path)
		if gok != wok || !reflect.DeepEqual(g, w) {
			differ = append(differ, path)
		}
	}
	if len(differ) == 0 {
		return boolScore(true, "every field matches")
	}
	return boolScore(false, "fields that differ: "+strings.Join(differ, ", "))
}

// field follows a dotted path ("customer.email") into a JSON value.
func field(v any, path string) (any, bool) {
	for _, part := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

// maxSimilarityRunes bounds the text similarity compares (the first this many characters of
// each), so a long output costs a bounded time.
const maxSimilarityRunes = 5000

func similarity(cfg domain.JSONObject, c Case) (float64, string, error) {
	want, err := expectedText(cfg, "expected", c)
	if err != nil {
		return 0, "", err
	}
	a, b := fold(cfg, strings.TrimSpace(Text(c.Output)), strings.TrimSpace(want))
	ra, rb := []rune(a), []rune(b)
	ra, rb = ra[:min(len(ra), maxSimilarityRunes)], rb[:min(len(rb), maxSimilarityRunes)]
	longest := max(len(ra), len(rb))
	if longest == 0 {
		return 1, "both texts are empty", nil
	}
	d := levenshtein(ra, rb)
	return 1 - float64(d)/float64(longest), fmt.Sprintf("%d edits over %d characters", d, longest), nil
}

// levenshtein is the edit distance of two texts (insertions, deletions, substitutions).
func levenshtein(a, b []rune) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// quoteShort quotes a text for a comment, cut to 80 characters.
func quoteShort(s string) string {
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
