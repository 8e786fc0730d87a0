package eval

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

func TestDeterministicChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, typ        string
		cfg              domain.JSONObject
		output, expected string
		want             float64
		comment, err     string
	}{
		{name: "exact content", typ: "exact_match", output: `{"content":" Paris "}`, expected: `"paris"`, want: 1},
		{name: "exact case sensitive", typ: "exact_match", cfg: domain.JSONObject{"case_sensitive": true}, output: `{"content":"Paris"}`, expected: `"paris"`, want: 0, comment: `differs from the expected "paris"`},
		{name: "exact against config", typ: "exact_match", cfg: domain.JSONObject{"expected": "42"}, output: `"42"`, want: 1},
		{name: "exact object vs object", typ: "exact_match", output: `{"a": 1, "b": [2]}`, expected: `{"a":1,"b":[2]}`, want: 1},
		{name: "exact needs expected", typ: "exact_match", output: `"x"`, err: "expected_output: is required"},
		{name: "contains", typ: "contains", cfg: domain.JSONObject{"value": "TRACKING"}, output: `{"content":"Here is your tracking link"}`, want: 1},
		{name: "contains not", typ: "contains", output: `{"content":"No idea"}`, expected: `"refund"`, want: 0, comment: `does not contain "refund"`},
		{name: "regex", typ: "regex", cfg: domain.JSONObject{"pattern": `\b\d{3}-\d{4}\b`}, output: `{"content":"call 555-0134 now"}`, want: 1, comment: `"555-0134"`},
		{name: "regex no match", typ: "regex", cfg: domain.JSONObject{"pattern": `^ok$`}, output: `{"content":"not ok"}`, want: 0},
		{name: "schema on content JSON", typ: "json_schema", cfg: domain.JSONObject{"schema": map[string]any{"type": "object", "required": []any{"id"}}},
			output: `{"content":"{\"id\": 7}"}`, want: 1},
		{name: "schema fails", typ: "json_schema", cfg: domain.JSONObject{"schema": map[string]any{"type": "object", "required": []any{"id"}}},
			output: `{"name":"x"}`, want: 0, comment: "does not match the schema"},
		{name: "schema on plain text", typ: "json_schema", cfg: domain.JSONObject{"schema": map[string]any{"type": "object"}}, output: `{"content":"hello"}`, want: 0},
		{name: "json match", typ: "json_match", cfg: domain.JSONObject{"fields": []any{"intent", "customer.tier"}},
			output: `{"intent":"refund","customer":{"tier":"gold"},"extra":1}`, expected: `{"intent":"refund","customer":{"tier":"gold"}}`, want: 1},
		{name: "json match differs", typ: "json_match", cfg: domain.JSONObject{"fields": []any{"intent", "customer.tier", "missing"}},
			output: `{"intent":"refund","customer":{"tier":"silver"}}`, expected: `{"intent":"refund","customer":{"tier":"gold"}}`, want: 0, comment: "fields that differ: customer.tier"},
		{name: "json match needs expected", typ: "json_match", cfg: domain.JSONObject{"fields": []any{"a"}}, output: `{}`, err: "expected_output"},
		{name: "similarity same", typ: "similarity", output: `{"content":"Hello"}`, expected: `"hello"`, want: 1},
		{name: "similarity one edit", typ: "similarity", output: `"kitten"`, expected: `"sitten"`, want: 1 - 1.0/6},
		{name: "similarity apart", typ: "similarity", output: `"abc"`, expected: `"xyz"`, want: 0},
		{name: "similarity empty", typ: "similarity", output: `""`, expected: `""`, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := kinds[tc.typ]
			cfg := tc.cfg
			if cfg == nil {
				cfg = domain.JSONObject{}
			}
			if err := k.checkConfig(cfg); err != nil {
				t.Fatalf("config refused: %v", err)
			}
			c := Case{Output: json.RawMessage(tc.output)}
			if tc.expected != "" {
				c.ExpectedOutput = json.RawMessage(tc.expected)
			}
			v, comment, err := k.score(cfg, c)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || v != tc.want || !strings.Contains(comment, tc.comment) {
				t.Fatalf("got %v %q %v, want %v %q", v, comment, err, tc.want, tc.comment)
			}
		})
	}
}

func TestConfigChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ  string
		cfg  domain.JSONObject
		want string
	}{
		{"regex", domain.JSONObject{}, "config.pattern: is required"},
		{"regex", domain.JSONObject{"pattern": "(x"}, "config.pattern: is not a valid regular expression"},
		{"regex", domain.JSONObject{"pattern": 3}, "config.pattern: must be a string"},
		{"json_schema", domain.JSONObject{"schema": map[string]any{"type": "nope"}}, "config.schema: is not a valid JSON Schema"},
		{"json_match", domain.JSONObject{"fields": []any{}}, "config.fields: must be a string list"},
		{"json_match", domain.JSONObject{"fields": []any{"a", ""}}, "config.fields: must be a string list"},
		{"contains", domain.JSONObject{"valu": "x"}, "config.valu: is not an option of this type; options: value, case_sensitive"},
		{"exact_match", domain.JSONObject{"case_sensitive": "yes"}, "config.case_sensitive: must be a boolean"},
	} {
		if err := kinds[tc.typ].checkConfig(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want %q", tc.typ, tc.cfg, err, tc.want)
		}
	}
}
