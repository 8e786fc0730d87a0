package providers

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

func TestCheckCredential(t *testing.T) {
	for _, tc := range []struct {
		name     string
		provider string
		metadata map[string]any
		field    string
	}{
		{"a public provider", "openai", nil, ""},
		{"another service is not checked", "github", map[string]any{"weight": "heavy"}, ""},
		{"ollama needs a base URL", "ollama", nil, "metadata.base_url"},
		{"ollama with its base URL", "ollama", map[string]any{"base_url": "http://localhost:11434/v1"}, ""},
		{"a base URL with credentials", "openai", map[string]any{"base_url": "https://u:p@example.com/v1"}, "metadata.base_url"},
		{"a default flag", "openai", map[string]any{"default": true}, ""},
		{"a default that is not a flag", "openai", map[string]any{"default": "yes"}, "metadata.default"},
		{"a weight", "openai", map[string]any{"weight": float64(0)}, ""},
		{"a weight over 1000", "openai", map[string]any{"weight": float64(1001)}, "metadata.weight"},
		{"a weight that is not a number", "openai", map[string]any{"weight": "1"}, "metadata.weight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckCredential(tc.provider, tc.metadata)
			var fe *domain.FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("got %v, want nil", err)
			case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
				t.Fatalf("got %v, want a FieldError on %s", err, tc.field)
			case tc.field != "" && !strings.HasPrefix(err.Error(), tc.field+": "):
				t.Fatalf("message %q does not start with the field", err)
			}
		})
	}
}
