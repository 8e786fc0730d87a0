package gemini

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/agentplane/agentplane/internal/llm"
)

// DefaultBaseURL is the Gemini API's host root, used when the Endpoint names none; it is
// set explicitly so that GOOGLE_GEMINI_BASE_URL cannot redirect the SDK.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// ErrNoAPIKey is returned by every call of a Provider whose Endpoint has no API key:
// the SDK would otherwise use GOOGLE_API_KEY or GEMINI_API_KEY from the environment.
var ErrNoAPIKey = errors.New("gemini: the endpoint has no API key")

// Provider calls the Gemini API for one Endpoint. It is safe for concurrent use.
type Provider struct {
	ep     llm.Endpoint
	client *genai.Client
	err    error // why client could not be made; returned by every call
}

var (
	_ llm.Provider    = (*Provider)(nil)
	_ llm.ModelLister = (*Provider)(nil)
)

// New returns a Provider calling ep with ep.Client(). A configuration the SDK refuses
// (or a missing key) is reported by the first call rather than here.
func New(ep llm.Endpoint) *Provider {
	p := &Provider{ep: ep}
	if strings.TrimSpace(ep.APIKey) == "" {
		p.err = ErrNoAPIKey
		return p
	}
	base := ep.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:     ep.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: captureClient(ep.Client()),
		HTTPOptions: genai.HTTPOptions{
			BaseURL: base,
			// One attempt: retries are llm.Call's, which must see every failure. (nil
			// also means none today; an explicit 1 survives a change of that default.)
			RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](1)},
		},
	})
	if err != nil {
		// The SDK's message prints the whole ClientConfig, key included.
		p.err = fmt.Errorf("gemini: configuring the client: %s", llm.Redact(err.Error(), ep.APIKey))
		return p
	}
	p.client = client
	return p
}

// Complete streams one answer of req through emit; see llm.Provider.
func (p *Provider) Complete(ctx context.Context, req llm.Request, emit func(llm.Event) error) (*llm.Response, error) {
	if p.err != nil {
		return nil, p.err
	}
	contents, config, err := buildRequest(&req)
	if err != nil {
		return nil, err
	}
	ctx, hold := withHeaderHolder(ctx)
	var st stream
	for chunk, err := range p.client.Models.GenerateContentStream(ctx, req.Model, contents, config) {
		if err != nil {
			return nil, p.callError(ctx, hold, err)
		}
		if err := st.add(chunk, emit); err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return st.finish(ctx, p.ep)
}

// ListModels returns the ids (without "models/") of the models the key may generate
// content with; embedding-only and other models that cannot answer a chat are left out.
func (p *Provider) ListModels(ctx context.Context) ([]string, error) {
	if p.err != nil {
		return nil, p.err
	}
	ctx, hold := withHeaderHolder(ctx)
	var ids []string
	for m, err := range p.client.Models.All(ctx) {
		if err != nil {
			return nil, p.callError(ctx, hold, err)
		}
		if len(m.SupportedActions) > 0 && !slices.Contains(m.SupportedActions, "generateContent") {
			continue
		}
		ids = append(ids, strings.TrimPrefix(m.Name, "models/"))
	}
	return ids, nil
}
