package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentplane/agentplane/internal/domain"
)

// Request bodies are checked against the schema the document publishes, before the handler
// runs: the document is the one place their shapes, limits, enums and formats are written, and
// a request it accepts is never refused for its shape. Handlers keep only the rules a schema
// cannot say (the Validate methods of the types, references, cross-field rules).

// bodySchemaURL is where the document is registered for compiling its request schemas; the
// .invalid name never resolves and nothing is fetched.
const bodySchemaURL = "https://agentplane.invalid/openapi.json"

// bodySchemaSets holds the compiled request schemas of each document built by this process,
// keyed like openAPIDocs: compiling them is done once per distinct route table and mode.
var bodySchemaSets sync.Map // string (routesKey) → map[string]*jsonschema.Schema

// cachedBodySchemas compiles (once per key) the JSON request body schema of every operation of
// doc, keyed by route pattern ("POST /api/v1/agents").
func cachedBodySchemas(key string, doc []byte) (map[string]*jsonschema.Schema, error) {
	if set, ok := bodySchemaSets.Load(key); ok {
		return set.(map[string]*jsonschema.Schema), nil
	}
	set, err := compileBodySchemas(doc)
	if err != nil {
		return nil, err
	}
	bodySchemaSets.Store(key, set)
	return set, nil
}

func compileBodySchemas(doc []byte) (map[string]*jsonschema.Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("request schemas: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(bodySchemaURL, v); err != nil {
		return nil, fmt.Errorf("request schemas: %w", err)
	}
	paths, _ := v.(map[string]any)["paths"].(map[string]any)
	set := map[string]*jsonschema.Schema{}
	for path, item := range paths {
		for method, op := range item.(map[string]any) {
			body, _ := op.(map[string]any)["requestBody"].(map[string]any)
			content, _ := body["content"].(map[string]any)
			if _, ok := content["application/json"]; !ok {
				continue
			}
			ptr := "#/paths/" + pointerToken(path) + "/" + method + "/requestBody/content/application~1json/schema"
			sch, err := c.Compile(bodySchemaURL + ptr)
			if err != nil {
				return nil, fmt.Errorf("request schema of %s %s: %w", strings.ToUpper(method), path, err)
			}
			set[strings.ToUpper(method)+" "+path] = sch
		}
	}
	return set, nil
}

// pointerToken escapes one JSON Pointer token (RFC 6901).
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// checkBody validates a JSON request body against sch, leaving the body for the handler to
// read again. What the handler's decode refuses on its own terms (another media type, a body
// too large, not UTF-8, malformed JSON) is left to it, so those answers stay as they are. A
// field sent as null counts as left out, as decoding does. A wrong type is 400, any other
// rule 422; both name the field.
func checkBody(r *http.Request, sch *jsonschema.Schema) error {
	if sch == nil || checkContentType(r.Header.Get("Content-Type")) != nil {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil || len(body) > maxBodyBytes {
		// decode answers these (413, 400): it reads what was read here, then the rest.
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		return nil
	}
	r.Body = newReadBody(body, r.Body)
	if !utf8.Valid(body) {
		return nil
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil || inst == nil {
		return nil
	}
	// A NUL is refused as such, whatever else is wrong (as decoding does).
	if bytes.Contains(body, []byte(`\u0000`)) {
		if err := findNUL(body); err != nil {
			return err
		}
	}
	err = sch.Validate(withoutNulls(inst))
	if ve, ok := err.(*jsonschema.ValidationError); ok {
		return schemaError(ve)
	}
	return nil
}

// readCloser is a body read again from the bytes already read, closing the original.
type readCloser struct {
	io.Reader
	io.Closer
}

// readBody is a request body checkBody has read in full: decode takes its bytes instead of
// reading and copying them a second time (BenchmarkExecuteSyncAllocs in bench/ counts both).
// Anyone else reads it as a body.
type readBody struct {
	bytes.Reader
	data []byte
	orig io.Closer
}

func newReadBody(data []byte, orig io.Closer) *readBody {
	b := &readBody{data: data, orig: orig}
	b.Reset(data)
	return b
}

// Close closes the original body.
func (b *readBody) Close() error { return b.orig.Close() }

// take returns the whole body and leaves it read, or false when some of it was read already.
func (b *readBody) take() ([]byte, bool) {
	if b.Len() != len(b.data) {
		return nil, false
	}
	b.Reset(nil)
	return b.data, true
}

// withoutNulls drops the members of objects whose value is null, at any depth: a request
// field sent as null means the same as one left out.
func withoutNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = withoutNulls(e)
		}
	case []any:
		for i, e := range x {
			x[i] = withoutNulls(e)
		}
	}
	return v
}

// schemaError turns the validator's answer into the API's: the first failing rule in the
// order of the body's fields, as a 400 for a wrong type and a FieldError (422) otherwise.
func schemaError(ve *jsonschema.ValidationError) error {
	leaf := firstLeaf(ve)
	if _, ok := leaf.ErrorKind.(*kind.AnyOf); ok {
		names := anyOfFields(leaf)
		return domain.Invalid(names[0], "is required without %s", strings.Join(names[1:], " or "))
	}
	field := fieldPath(leaf.InstanceLocation)
	if r, ok := leaf.ErrorKind.(*kind.Required); ok {
		return domain.Invalid(fieldPath(append(slices.Clone(leaf.InstanceLocation), r.Missing[0])), "is required")
	}
	if t, ok := leaf.ErrorKind.(*kind.Type); ok {
		return badRequest("%s: expected %s, got %s", field, strings.Join(t.Want, " or "), t.Got)
	}
	return domain.Invalid(field, "%s", ruleMessage(leaf))
}

// firstLeaf picks the failing rule to report: the deepest cause, the first in field order, so
// the same body always gets the same answer.
func firstLeaf(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return ve
	}
	_, anyOf := ve.ErrorKind.(*kind.AnyOf)
	_, oneOf := ve.ErrorKind.(*kind.OneOf)
	if anyOf && allRequired(ve.Causes) {
		return ve // "name or config_id": say so, rather than naming one of them
	}
	leaves := make([]*jsonschema.ValidationError, 0, len(ve.Causes))
	for _, c := range ve.Causes {
		leaves = append(leaves, firstLeaf(c))
	}
	if anyOf || oneOf {
		// Of the alternatives, the ones whose type the value has say what is wrong with it.
		fits := slices.DeleteFunc(slices.Clone(leaves), func(l *jsonschema.ValidationError) bool {
			_, wrongType := l.ErrorKind.(*kind.Type)
			return wrongType && len(l.InstanceLocation) == len(ve.InstanceLocation)
		})
		if len(fits) > 0 {
			leaves = fits
		}
	}
	slices.SortStableFunc(leaves, func(a, b *jsonschema.ValidationError) int {
		return strings.Compare(fieldPath(a.InstanceLocation), fieldPath(b.InstanceLocation))
	})
	return leaves[0]
}

// allRequired reports whether every cause is a missing field: an anyOf of alternatives.
func allRequired(causes []*jsonschema.ValidationError) bool {
	for _, c := range causes {
		leaf := c
		for len(leaf.Causes) == 1 {
			leaf = leaf.Causes[0]
		}
		if _, ok := leaf.ErrorKind.(*kind.Required); !ok {
			return false
		}
	}
	return true
}

// fieldPath writes an instance location as the API names fields: config.tools[0].name.
func fieldPath(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	if b.Len() == 0 {
		return "request body"
	}
	return b.String()
}

// ruleMessage says in the API's words which rule a value broke.
func ruleMessage(ve *jsonschema.ValidationError) string {
	switch k := ve.ErrorKind.(type) {
	case *kind.MinLength:
		if k.Want == 1 {
			return "is required and must not be empty"
		}
		return fmt.Sprintf("must be at least %d characters", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters", k.Want)
	case *kind.Enum:
		return fmt.Sprintf("must be one of %s, got %s", enumList(k.Want), jsonText(k.Got))
	case *kind.Format:
		if k.Want == "date-time" {
			return fmt.Sprintf("must be an RFC 3339 time such as 2026-01-02T15:04:05Z, got %s", jsonText(k.Got))
		}
		return fmt.Sprintf("must be a valid %s, got %s", k.Want, jsonText(k.Got))
	case *kind.Minimum:
		return "must be at least " + k.Want.FloatString(ratDigits(k.Want.IsInt()))
	case *kind.Maximum:
		return "must be at most " + k.Want.FloatString(ratDigits(k.Want.IsInt()))
	case *kind.MinItems:
		return fmt.Sprintf("must hold at least %d items", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("must hold at most %d items", k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("must hold at most %d entries", k.Want)
	case *kind.Pattern:
		return fmt.Sprintf("must match %s", k.Want)
	}
	return ve.ErrorKind.LocalizedString(message.NewPrinter(language.English))
}

// anyOfFields lists the fields an anyOf of required alternatives names, by their paths, in
// the order of the alternatives: name, config_id.
func anyOfFields(ve *jsonschema.ValidationError) []string {
	var names []string
	for _, c := range ve.Causes {
		leaf := c
		for len(leaf.Causes) == 1 {
			leaf = leaf.Causes[0]
		}
		if r, ok := leaf.ErrorKind.(*kind.Required); ok {
			for _, m := range r.Missing {
				names = append(names, fieldPath(append(slices.Clone(leaf.InstanceLocation), m)))
			}
		}
	}
	return names
}

func ratDigits(isInt bool) int {
	if isInt {
		return 0
	}
	return 3
}

func enumList(want []any) string {
	out := make([]string, len(want))
	for i, w := range want {
		if s, ok := w.(string); ok {
			out[i] = s
			continue
		}
		out[i] = jsonText(w)
	}
	return strings.Join(out, ", ")
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
