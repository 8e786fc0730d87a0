// Package schemacheck compiles the JSON Schemas (draft 2020-12 by default) that agents
// declare for their input and output, caches them, and validates values against them with
// messages that name the failing path.
package schemacheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled JSON Schema.
type Schema struct{ s *jsonschema.Schema }

var cache sync.Map // sha256 of the schema text -> *Schema

type noRemote struct{}

func (noRemote) Load(url string) (any, error) {
	return nil, fmt.Errorf("remote $ref %q is not allowed; inline the definition under $defs", url)
}

// Compile parses and compiles a schema; the same text compiles once per process.
func Compile(raw json.RawMessage) (*Schema, error) {
	key := sha256.Sum256(raw)
	if v, ok := cache.Load(key); ok {
		return v.(*Schema), nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		if _, isBool := doc.(bool); !isBool {
			return nil, errors.New("a schema must be a JSON object or boolean")
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noRemote{})
	c.AssertFormat()
	const url = "mem://schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, cleanErr(err)
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil, cleanErr(err)
	}
	s := &Schema{s: compiled}
	cache.Store(key, s)
	return s, nil
}

// Validate checks a decoded JSON value (from encoding/json into any) against the schema.
// The error names the failing location as a JSON pointer, e.g. "/items/0/name: …".
func (s *Schema) Validate(v any) error {
	err := s.s.Validate(normalize(v))
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return firstLeaf(ve)
	}
	return err
}

// ValidationFailure is one failed constraint at one location of the value.
type ValidationFailure struct {
	Path    string // JSON pointer, "" for the root
	Message string
}

func (f *ValidationFailure) Error() string {
	p := f.Path
	if p == "" {
		p = "(root)"
	}
	return p + ": " + f.Message
}

func firstLeaf(ve *jsonschema.ValidationError) error {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	path := ""
	if len(ve.InstanceLocation) > 0 {
		path = "/" + strings.Join(ve.InstanceLocation, "/")
	}
	msg := ve.ErrorKind.LocalizedString(printer)
	return &ValidationFailure{Path: path, Message: msg}
}

// normalize turns float64 numbers from encoding/json into json.Number-free values the
// validator accepts; it round-trips through jsonschema's own decoder for exactness.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return v
	}
	return out
}

func cleanErr(err error) error {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "mem://schema.json", "schema")
	return errors.New(msg)
}
