// Package providers maps a model credential's provider to the wire protocol that serves it
// and builds the llm.Provider for it: OpenAI and the OpenAI-compatible services speak Chat
// Completions (Cohere through its compatibility API), Anthropic its Messages API, Google
// the Gemini API.
package providers

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/anthropicmsg"
	"github.com/agentplane/agentplane/internal/llm/gemini"
	"github.com/agentplane/agentplane/internal/llm/openaichat"
)

// Protocols.
const (
	ChatCompletions = "chat_completions"
	Messages        = "messages"
	Gemini          = "gemini"
)

// Info is what the platform knows of one provider.
type Info struct {
	Protocol string
	// BaseURL is the public API root; "" when the credential must give metadata.base_url.
	BaseURL string
}

// known lists every model provider a credential may name.
var known = map[string]Info{
	"openai":            {ChatCompletions, "https://api.openai.com/v1"},
	"deepseek":          {ChatCompletions, "https://api.deepseek.com/v1"},
	"xai":               {ChatCompletions, "https://api.x.ai/v1"},
	"mistral":           {ChatCompletions, "https://api.mistral.ai/v1"},
	"groq":              {ChatCompletions, "https://api.groq.com/openai/v1"},
	"together":          {ChatCompletions, "https://api.together.xyz/v1"},
	"openrouter":        {ChatCompletions, "https://openrouter.ai/api/v1"},
	"cohere":            {ChatCompletions, "https://api.cohere.ai/compatibility/v1"},
	"ollama":            {ChatCompletions, ""},
	"openai_compatible": {ChatCompletions, ""},
	"anthropic":         {Messages, "https://api.anthropic.com"},
	"google":            {Gemini, "https://generativelanguage.googleapis.com"},
}

// Names returns the model providers, sorted.
func Names() []string {
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Known reports whether name is a model provider.
func Known(name string) bool {
	_, ok := known[name]
	return ok
}

// Lookup returns what is known of a provider.
func Lookup(name string) (Info, bool) {
	i, ok := known[name]
	return i, ok
}

// BaseURL returns the API root a credential of provider calls: metadata.base_url when
// set (validated), else the provider's public one. A provider without a public root
// (ollama, openai_compatible) needs metadata.base_url.
func BaseURL(provider string, metadata map[string]any) (string, error) {
	info, ok := known[provider]
	if !ok {
		return "", fmt.Errorf("provider %q is not a model provider (one of %s)", provider, strings.Join(Names(), ", "))
	}
	raw, set := metadata["base_url"]
	if !set || raw == nil {
		if info.BaseURL == "" {
			return "", domain.Invalid("metadata.base_url", "is required for provider %s (e.g. http://localhost:11434/v1 for Ollama, http://host:8000/v1 for vLLM)", provider)
		}
		return info.BaseURL, nil
	}
	s, ok := raw.(string)
	if !ok {
		return "", domain.Invalid("metadata.base_url", "must be a string")
	}
	if err := CheckURL(s); err != nil {
		return "", domain.Invalid("metadata.base_url", "%v", err)
	}
	return strings.TrimRight(s, "/"), nil
}

// CheckCredential holds the rules of a model provider's credential settings: its base URL
// (required where the provider has no public one), the default flag and the pool weight.
// Credentials of other services are not checked.
func CheckCredential(provider string, metadata map[string]any) error {
	if !Known(provider) {
		return nil
	}
	if _, err := BaseURL(provider, metadata); err != nil {
		return err
	}
	if d, ok := metadata["default"]; ok {
		if _, isBool := d.(bool); !isBool {
			return domain.Invalid("metadata.default", "must be true or false")
		}
	}
	if w, ok := metadata["weight"]; ok {
		if f, isNum := w.(float64); !isNum || f < 0 || f > 1000 {
			return domain.Invalid("metadata.weight", "must be a number from 0 to 1000 (its share of the provider's calls; 0 keeps it out of the pool)")
		}
	}
	return nil
}

// CheckURL accepts an absolute http or https URL without credentials or a fragment.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an http:// or https:// URL, got %q", s)
	}
	if u.User != nil {
		return fmt.Errorf("must not carry a user or password (put the key in the credential's value)")
	}
	if u.Fragment != "" || u.RawQuery != "" {
		return fmt.Errorf("must not have a query or fragment")
	}
	return nil
}

// New builds the provider that serves a credential: ep.Provider names it, ep.BaseURL is
// already resolved with BaseURL.
func New(ep llm.Endpoint) (llm.Provider, error) {
	info, ok := known[ep.Provider]
	if !ok {
		return nil, fmt.Errorf("provider %q is not a model provider", ep.Provider)
	}
	switch info.Protocol {
	case Messages:
		return anthropicmsg.New(ep), nil
	case Gemini:
		return gemini.New(ep), nil
	default:
		return openaichat.New(ep), nil
	}
}
