package openaichat

import (
	"context"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentplane/agentplane/internal/llm"
)

// defaultBaseURL is used when an Endpoint names no BaseURL.
const defaultBaseURL = "https://api.openai.com/v1"

// Provider calls one Chat Completions endpoint. It is safe for concurrent use and meant
// to be reused: its SDK services are built once, in New.
type Provider struct {
	ep     llm.Endpoint
	chat   openai.ChatCompletionService
	models openai.ModelService
}

var (
	_ llm.Provider    = (*Provider)(nil)
	_ llm.ModelLister = (*Provider)(nil)
)

// New returns a Provider calling ep. The SDK's own retries are off (llm.Call retries,
// and needs every attempt to surface as an *llm.Error), and the services are built
// without openai.NewClient, which would read OPENAI_* variables from the environment:
// an OPENAI_API_KEY or OPENAI_ORG_ID of the host must never reach another provider.
func New(ep llm.Endpoint) *Provider {
	base := ep.BaseURL
	if base == "" {
		base = defaultBaseURL
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithAPIKey(ep.APIKey),
		option.WithHTTPClient(ep.Client()),
		option.WithMaxRetries(0),
	}
	return &Provider{
		ep:     ep,
		chat:   openai.NewChatCompletionService(opts...),
		models: openai.NewModelService(opts...),
	}
}

// Complete streams one chat completion, emitting reasoning and content deltas as they
// are decoded. Failures are *llm.Error (see fail), ctx's error when ctx ended, a
// request-mapping error, or the error emit returned.
func (p *Provider) Complete(ctx context.Context, req llm.Request, emit func(llm.Event) error) (*llm.Response, error) {
	params, err := buildParams(p.ep, &req)
	if err != nil {
		return nil, err
	}
	var x exchange
	stream := p.chat.NewStreaming(ctx, params, option.WithMiddleware(x.watch))
	defer stream.Close()
	var acc accumulator
	for stream.Next() {
		if err := acc.add(stream.Current(), emit); err != nil {
			return nil, err
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.fail(ctx, err, &x)
	}
	// The SDK ends the loop the same way on [DONE] and on a body that simply ended, so
	// the end marker is checked on the wire, and the finish reason in the chunks.
	if !x.endSeen() || acc.finish == "" {
		return nil, llm.TransportError(ctx, p.ep, llm.ErrIncomplete)
	}
	return acc.response(), nil
}

// ListModels returns the ids of the models the key may use. The listing is one page on
// every known server; a "models/" prefix (Gemini's compatible endpoint) is dropped.
func (p *Provider) ListModels(ctx context.Context) ([]string, error) {
	var x exchange
	page, err := p.models.List(ctx, option.WithMiddleware(x.watch))
	if err != nil {
		return nil, p.fail(ctx, err, &x)
	}
	ids := make([]string, 0, len(page.Data))
	for _, m := range page.Data {
		ids = append(ids, strings.TrimPrefix(m.ID, "models/"))
	}
	return ids, nil
}
