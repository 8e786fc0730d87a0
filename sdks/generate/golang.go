package main

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oapi-codegen/oapi-codegen/v2/pkg/codegen"
)

// goTypes generates the Go SDK's types (package client): a struct per schema of the document
// and a Params struct per operation (its query parameters, with form tags the client encodes),
// by oapi-codegen. The document is first marked with the pointers Go needs (goPointers).
func goTypes(doc []byte) ([]byte, error) {
	var raw map[string]any
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, fmt.Errorf("read the document: %w", err)
	}
	renameReserved(raw)
	markGoTypes(raw)
	marked, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}

	// Load and generate: models only; the calls are the hand-written layer of client/.
	spec, err := openapi3.NewLoader().LoadFromData(marked)
	if err != nil {
		return nil, fmt.Errorf("load the document for oapi-codegen: %w", err)
	}
	code, err := codegen.Generate(spec, codegen.Configuration{
		PackageName: "client",
		Generate:    codegen.GenerateOptions{Models: true},
		Compatibility: codegen.CompatibilityOptions{
			// An enum value's constant carries its type's name, so no value ("list") takes a name
			// the hand-written layer uses.
			AlwaysPrefixEnumValues: true,
		},
		OutputOptions: codegen.OutputOptions{
			SkipPrune:                             true,
			NameNormalizer:                        string(codegen.NameNormalizerFunctionToCamelCaseWithInitialisms),
			PreferSkipOptionalPointer:             true,
			PreferSkipOptionalPointerWithOmitzero: true,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("oapi-codegen: %w", err)
	}
	return []byte("// " + generatedBanner + "\n\n" + code), nil
}

// reservedGoNames are the names of client/'s hand-written layer. A schema of the same name is
// generated as "API" + name (Option, a guardrail scanner's option, becomes APIOption).
var reservedGoNames = []string{"Client", "Error", "List", "Option", "RequestOption", "Stream", "StreamEvent"}

// renameReserved renames the schemas that would take a reserved name, and every $ref to them.
func renameReserved(doc map[string]any) {
	schemas, _ := dig(doc, "components", "schemas").(map[string]any)
	renamed := map[string]string{}
	for _, name := range reservedGoNames {
		if s, ok := schemas[name]; ok {
			delete(schemas, name)
			schemas["API"+name] = s
			renamed["#/components/schemas/"+name] = "#/components/schemas/API" + name
		}
	}
	if len(renamed) > 0 {
		rewriteRefs(doc, renamed)
	}
}

// rewriteRefs replaces the $refs of v found in renamed.
func rewriteRefs(v any, renamed map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok && renamed[ref] != "" {
			v["$ref"] = renamed[ref]
		}
		for _, c := range v {
			rewriteRefs(c, renamed)
		}
	case []any:
		for _, c := range v {
			rewriteRefs(c, renamed)
		}
	}
}

// markGoTypes says, with oapi-codegen's extensions, how each property becomes a Go field.
// An optional field has no pointer (its zero is "absent") except where the zero is a value
// the server must see: a nullable property (null is not the zero), an optional boolean or
// number that accepts zero, and every optional field of a PATCH body (absent = keep). A
// nullable scalar of a PATCH body is a Nullable (unset, a value, or null to clear it). A
// property of any type (no "type") is a json.RawMessage the caller decodes.
func markGoTypes(doc map[string]any) {
	schemas, _ := dig(doc, "components", "schemas").(map[string]any)
	patch := patchBodies(doc)
	names := make([]string, 0, len(schemas))
	for name := range schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if s, ok := schemas[name].(map[string]any); ok {
			dropRequiredAlternatives(s)
			markProperties(s, patch[name])
		}
	}
	markQueryParameters(doc)
}

// dropRequiredAlternatives removes an object's anyOf when its alternatives only say which of
// its own properties must be given ("name or config_id"): a rule of values the server checks,
// not a union of types. oapi-codegen would make it a union whose JSON holds every property,
// "" and 0 included, so that a score created with config_id would send name: "".
func dropRequiredAlternatives(s map[string]any) {
	alts := asSlice(s["anyOf"])
	if len(alts) == 0 || s["properties"] == nil {
		return
	}
	for _, a := range alts {
		alt, _ := a.(map[string]any)
		for k := range alt {
			if k != "required" && k != "properties" {
				return // a real alternative shape
			}
		}
		props, _ := alt["properties"].(map[string]any)
		for _, p := range props {
			if ps, _ := p.(map[string]any); ps["type"] != nil || ps["$ref"] != nil {
				return
			}
		}
	}
	delete(s, "anyOf")
}

// markQueryParameters gives a pointer to the optional boolean and number query parameters
// that accept zero: enabled=false is a filter, not its absence.
func markQueryParameters(doc map[string]any) {
	paths, _ := doc["paths"].(map[string]any)
	for _, item := range paths {
		ops, _ := item.(map[string]any)
		for _, op := range ops {
			for _, p := range asSlice(dig(op, "parameters")) {
				param, _ := p.(map[string]any)
				s, _ := param["schema"].(map[string]any)
				if param["in"] == "query" && param["required"] != true && s != nil && zeroIsValue(s) {
					s["x-go-type-skip-optional-pointer"] = false
				}
			}
		}
	}
}

// markProperties marks the properties of s and of the objects nested in it.
func markProperties(s map[string]any, patch bool) {
	if items, ok := s["items"].(map[string]any); ok {
		markProperties(items, false)
	}
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	for _, r := range asSlice(s["required"]) {
		if name, ok := r.(string); ok {
			required[name] = true
		}
	}
	for name, p := range props {
		ps, ok := p.(map[string]any)
		if !ok {
			continue
		}
		markProperties(ps, false)
		if isAny(ps) {
			ps["x-go-type"] = "json.RawMessage"
			continue
		}
		if t := scalarGoType(ps); patch && nullable(ps) && t != "" {
			ps["x-go-type"] = "Nullable[" + t + "]"
			ps["x-go-type-skip-optional-pointer"] = true
			continue
		}
		if nullable(ps) || !required[name] && (patch || zeroIsValue(ps)) {
			ps["x-go-type-skip-optional-pointer"] = false
		}
	}
}

// scalarGoType is the Go type of a nullable scalar schema, "" for any other.
func scalarGoType(s map[string]any) string {
	for _, t := range asSlice(s["type"]) {
		switch t {
		case "string":
			return "string"
		case "number":
			return "float64"
		case "integer":
			return "int64"
		case "boolean":
			return "bool"
		}
	}
	return ""
}

// patchBodies names the schemas that are the body of a PATCH.
func patchBodies(doc map[string]any) map[string]bool {
	out := map[string]bool{}
	paths, _ := doc["paths"].(map[string]any)
	for _, item := range paths {
		ref, _ := dig(item, "patch", "requestBody", "content", "application/json", "schema", "$ref").(string)
		const prefix = "#/components/schemas/"
		if len(ref) > len(prefix) {
			out[ref[len(prefix):]] = true
		}
	}
	return out
}

// isAny reports a schema of any JSON value: no type and nothing that would give one.
func isAny(s map[string]any) bool {
	for _, k := range []string{"type", "$ref", "properties", "items", "oneOf", "anyOf", "allOf", "enum", "const", "additionalProperties"} {
		if _, ok := s[k]; ok {
			return false
		}
	}
	return true
}

// nullable reports a 3.1 type list with "null" in it, or an anyOf/oneOf with a null member
// (a nullable $ref).
func nullable(s map[string]any) bool {
	for _, t := range asSlice(s["type"]) {
		if t == "null" {
			return true
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		for _, m := range asSlice(s[k]) {
			if dig(m, "type") == "null" {
				return true
			}
		}
	}
	return false
}

// zeroIsValue reports a boolean, or a number whose minimum allows 0: sending false or 0 means
// something, so the field needs a pointer to tell it from "absent".
func zeroIsValue(s map[string]any) bool {
	types := asSlice(s["type"])
	if t, ok := s["type"].(string); ok {
		types = []any{t}
	}
	for _, t := range types {
		switch t {
		case "boolean":
			return true
		case "integer", "number":
			min, ok := s["minimum"].(float64)
			return !ok || min <= 0
		}
	}
	return false
}

// dig walks nested objects by key; nil when one is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
