package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// schema is the part of a JSON Schema (2020-12, as OpenAPI 3.1 has it) the Python generator
// reads.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 typeList           `json:"type"`
	Description          string             `json:"description"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	Items                *schema            `json:"items"`
	Enum                 []any              `json:"enum"`
	Const                any                `json:"const"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	OneOf                []*schema          `json:"oneOf"`
	AnyOf                []*schema          `json:"anyOf"`
}

// typeList is "type", a string or a list of them.
type typeList []string

func (t *typeList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*t = typeList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*t = many
	return nil
}

var pyIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// pyKeywords are the words a class-syntax TypedDict cannot use as a field name.
var pyKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`False None True and as assert async await break class continue def del elif
		else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield`) {
		pyKeywords[k] = true
	}
}

// pythonModels writes one TypedDict per object schema of the document (an alias for every
// other schema), for Python 3.9 and later: required keys in a total base, the rest optional.
func pythonModels(spec openAPI) []byte {
	names := make([]string, 0, len(spec.Components.Schemas))
	for n := range spec.Components.Schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(`"""Typed models of the agentplane API: one TypedDict per schema of its OpenAPI document.

` + generatedBanner + `
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Literal, Optional, TypedDict, Union

`)
	fmt.Fprintf(&b, "# Path templates whose POST honours Idempotency-Key: the SDK sends one and retries them.\n")
	b.WriteString("IDEMPOTENT_POSTS: FrozenSet[str] = frozenset({\n")
	for _, p := range idempotentPosts(spec) {
		fmt.Fprintf(&b, "    %q,\n", p)
	}
	b.WriteString("})\n")
	// TypedDicts first, then the aliases: an alias is evaluated at once, so what it names
	// must be defined before it.
	var all []string
	var aliases strings.Builder
	for _, n := range names {
		s := spec.Components.Schemas[n]
		cls := pyName(n)
		all = append(all, cls)
		if len(s.Properties) == 0 || s.Ref != "" {
			aliases.WriteString("\n\n")
			if s.Description != "" {
				fmt.Fprintf(&aliases, "# %s\n", strings.Join(strings.Fields(s.Description), " "))
			}
			fmt.Fprintf(&aliases, "%s = %s\n", cls, pyType(s, false))
			continue
		}
		b.WriteString("\n\n")
		writeTypedDict(&b, cls, s)
	}
	b.WriteString(aliases.String())
	b.WriteString("\n\n__all__ = [\n    \"IDEMPOTENT_POSTS\",\n")
	for _, n := range all {
		fmt.Fprintf(&b, "    %q,\n", n)
	}
	b.WriteString("]\n")
	return []byte(b.String())
}

// writeTypedDict writes cls as a TypedDict: a total base with the required keys when there
// are both kinds, and the class syntax unless a key is not a Python identifier.
func writeTypedDict(b *strings.Builder, cls string, s *schema) {
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var req, opt []string
	for _, k := range keys {
		if required[k] {
			req = append(req, k)
		} else {
			opt = append(opt, k)
		}
	}
	doc := s.Description
	switch {
	case len(opt) == 0:
		typedDict(b, cls, "TypedDict", true, req, s, doc)
	case len(req) == 0:
		typedDict(b, cls, "TypedDict", false, opt, s, doc)
	default:
		typedDict(b, "_"+cls+"Required", "TypedDict", true, req, s, "")
		b.WriteString("\n\n")
		typedDict(b, cls, "_"+cls+"Required", false, opt, s, doc)
	}
}

func typedDict(b *strings.Builder, cls, base string, total bool, keys []string, s *schema, doc string) {
	plain := true
	for _, k := range keys {
		if !pyIdent.MatchString(k) || pyKeywords[k] {
			plain = false
		}
	}
	if !plain {
		// The functional syntax takes any key; it evaluates its types, so they are quoted.
		fmt.Fprintf(b, "%s = TypedDict(\n    %q,\n    {\n", cls, cls)
		for _, k := range keys {
			fmt.Fprintf(b, "        %q: %q,\n", k, pyType(s.Properties[k], false))
		}
		fmt.Fprintf(b, "    },\n    total=%s,\n)\n", pyBool(total))
		return
	}
	totalArg := ""
	if !total {
		totalArg = ", total=False"
	}
	fmt.Fprintf(b, "class %s(%s%s):\n", cls, base, totalArg)
	if doc != "" {
		fmt.Fprintf(b, "    %s\n\n", pyDocstring(doc))
	}
	for _, k := range keys {
		p := s.Properties[k]
		fmt.Fprintf(b, "    %s: %s\n", k, pyType(p, false))
		if p.Description != "" {
			fmt.Fprintf(b, "    %s\n", pyDocstring(p.Description))
		}
	}
}

// pyType is the annotation of a schema; quoted refs are not needed under postponed
// evaluation, but the functional syntax quotes the whole annotation.
func pyType(s *schema, _ bool) string {
	if s == nil {
		return "Any"
	}
	if s.Ref != "" {
		return pyName(strings.TrimPrefix(s.Ref, "#/components/schemas/"))
	}
	if len(s.OneOf) > 0 || len(s.AnyOf) > 0 {
		return union(append(append([]*schema{}, s.OneOf...), s.AnyOf...))
	}
	if s.Const != nil {
		return "Literal[" + pyLiteral(s.Const) + "]"
	}
	nullable := false
	var types []string
	for _, t := range s.Type {
		if t == "null" {
			nullable = true
			continue
		}
		types = append(types, scalar(t, s))
	}
	var t string
	switch len(types) {
	case 0:
		if nullable {
			return "None"
		}
		t = "Any"
	case 1:
		t = types[0]
	default:
		t = "Union[" + strings.Join(types, ", ") + "]"
	}
	if nullable {
		return "Optional[" + t + "]"
	}
	return t
}

// scalar is the annotation of one JSON type of s.
func scalar(t string, s *schema) string {
	if len(s.Enum) > 0 && t != "array" && t != "object" {
		var lits []string
		for _, e := range s.Enum {
			if e != nil {
				lits = append(lits, pyLiteral(e))
			}
		}
		return "Literal[" + strings.Join(lits, ", ") + "]"
	}
	switch t {
	case "string":
		return "str"
	case "integer":
		return "int"
	case "number":
		return "float"
	case "boolean":
		return "bool"
	case "array":
		return "List[" + pyType(s.Items, false) + "]"
	case "object":
		var extra schema
		if len(s.AdditionalProperties) > 0 && json.Unmarshal(s.AdditionalProperties, &extra) == nil {
			return "Dict[str, " + pyType(&extra, false) + "]"
		}
		return "Dict[str, Any]"
	}
	return "Any"
}

func union(ss []*schema) string {
	var parts []string
	seen := map[string]bool{}
	for _, s := range ss {
		t := pyType(s, false)
		if !seen[t] {
			seen[t] = true
			parts = append(parts, t)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "Union[" + strings.Join(parts, ", ") + "]"
}

func pyLiteral(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case bool:
		return pyBool(v)
	default:
		return fmt.Sprint(v)
	}
}

func pyBool(v bool) string {
	if v {
		return "True"
	}
	return "False"
}

// pyName turns a schema name into a Python class name (huma's names are Go-style already).
func pyName(n string) string {
	var b strings.Builder
	up := true
	for _, r := range n {
		if r == '-' || r == '_' || r == '.' || r == ' ' {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}

// pyDocstring quotes text as a one-line docstring.
func pyDocstring(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	text = strings.ReplaceAll(text, `\`, `\\`)
	text = strings.ReplaceAll(text, `"""`, `\"\"\"`)
	if strings.HasSuffix(text, `"`) {
		text += " "
	}
	return `"""` + text + `"""`
}
