package schemacheck

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCompileAndValidate(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","minLength":1},"n":{"type":"integer"}},"required":["q"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(map[string]any{"q": "hi", "n": 3.0}); err != nil {
		t.Fatalf("valid value rejected: %v", err)
	}
	err = s.Validate(map[string]any{"q": ""})
	if err == nil || !strings.HasPrefix(err.Error(), "/q:") {
		t.Fatalf("want /q failure, got %v", err)
	}
	err = s.Validate(map[string]any{"n": 1.5})
	if err == nil {
		t.Fatal("missing required and wrong type accepted")
	}
}

func TestCompileRejects(t *testing.T) {
	for _, raw := range []string{
		`{"type":"nonsense"}`,
		`{"minLength":-1}`,
		`{"$ref":"https://example.com/x.json"}`,
		`"string"`,
		`{`,
	} {
		if _, err := Compile(json.RawMessage(raw)); err == nil {
			t.Errorf("Compile(%s) succeeded", raw)
		}
	}
}
