// Package prompttmpl renders prompt templates with Mustache semantics ({{ name }}, dotted
// names, sections, inverted sections, comments), without HTML escaping, and reports which
// variables a template uses and which of them the caller did not supply.
package prompttmpl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cbroglie/mustache"
)

// Template is a parsed prompt template.
type Template struct {
	t    *mustache.Template
	vars []string
}

// Parse parses a Mustache template; partials are not supported.
func Parse(text string) (*Template, error) {
	t, err := mustache.ParseString(text)
	if err != nil {
		return nil, fmt.Errorf("template does not parse: %w", err)
	}
	t.Escape(func(s string) string { return s }) // prompts are text, not HTML
	// Never nil: the list is sent as [] when the template has none.
	vars := []string{}
	if err := collect(t.Tags(), "", &vars); err != nil {
		return nil, err
	}
	return &Template{t: t, vars: vars}, nil
}

func collect(tags []mustache.Tag, prefix string, out *[]string) error {
	for _, tag := range tags {
		switch tag.Type() {
		case mustache.Variable, mustache.Section, mustache.InvertedSection:
			name := tag.Name()
			if name != "." && !slices.Contains(*out, name) && prefix == "" {
				*out = append(*out, name)
			}
			if tag.Type() != mustache.Variable {
				// Names inside a section resolve against the section's value first; they are
				// not top-level variables of the prompt.
				if err := collect(tag.Tags(), name, &[]string{}); err != nil {
					return err
				}
			}
		case mustache.Partial:
			return fmt.Errorf("partials ({{> %s}}) are not supported in prompt templates", tag.Name())
		}
	}
	return nil
}

// Variables lists the top-level variable and section names the template uses, in order of
// first use.
func (t *Template) Variables() []string { return slices.Clone(t.vars) }

// Missing lists the variables the template uses that vars does not supply. A dotted name
// counts as supplied when every step of its path exists.
func (t *Template) Missing(vars map[string]any) []string {
	missing := []string{}
	for _, name := range t.vars {
		if !has(vars, name) {
			missing = append(missing, name)
		}
	}
	return missing
}

func has(vars map[string]any, name string) bool {
	var cur any = vars
	for _, part := range strings.Split(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[part]; !ok {
			return false
		}
	}
	return true
}

// Render renders the template; missing variables render as empty text.
func (t *Template) Render(vars map[string]any) (string, error) {
	if vars == nil {
		vars = map[string]any{}
	}
	out, err := t.t.Render(vars)
	if err != nil {
		return "", fmt.Errorf("render template: %w", err)
	}
	return out, nil
}
