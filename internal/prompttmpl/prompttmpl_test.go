package prompttmpl

import (
	"slices"
	"testing"
)

func TestRender(t *testing.T) {
	tm, err := Parse("Hi {{ name }} <{{user.email}}>{{#items}} - {{title}}{{/items}}{{^vip}} (standard){{/vip}}{{! note }}")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tm.Variables(), []string{"name", "user.email", "items", "vip"}; !slices.Equal(got, want) {
		t.Fatalf("Variables = %v, want %v", got, want)
	}
	vars := map[string]any{"name": "Ada & co", "user": map[string]any{"email": "a@x"}, "items": []any{map[string]any{"title": "one"}}}
	if got, want := tm.Missing(vars), []string{"vip"}; !slices.Equal(got, want) {
		t.Fatalf("Missing = %v, want %v", got, want)
	}
	out, err := tm.Render(vars)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Hi Ada & co <a@x> - one (standard)"; out != want {
		t.Fatalf("Render = %q, want %q", out, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{"{{#open}} never closed", "{{> partial}}", "{{ unclosed"} {
		if _, err := Parse(text); err == nil {
			t.Errorf("Parse(%q) succeeded", text)
		}
	}
}

// TestVariablesNeverNil: a template without variables reports [] (sent as a JSON list, never
// null, by the preview routes).
func TestVariablesNeverNil(t *testing.T) {
	tmpl, err := Parse("You answer briefly.")
	if err != nil {
		t.Fatal(err)
	}
	if vars := tmpl.Variables(); vars == nil || len(vars) != 0 {
		t.Fatalf("Variables() = %#v, want an empty non-nil list", vars)
	}
}
