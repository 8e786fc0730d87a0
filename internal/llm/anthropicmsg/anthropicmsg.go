package anthropicmsg

import (
	"context"
	"errors"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/agentplane/agentplane/internal/llm"
)

// Provider calls one Anthropic Messages endpoint as one credential. It is safe for
// concurrent use: the SDK client is built once and keeps no per-call state.
type Provider struct {
	ep     llm.Endpoint
	client anthropic.Client
}

var (
	_ llm.Provider    = (*Provider)(nil)
	_ llm.ModelLister = (*Provider)(nil)
)

// New returns a Provider for ep; ep.BaseURL is the host root ("https://api.anthropic.com"),
// to which the SDK appends /v1/messages and /v1/models. ep.Provider defaults to
// "anthropic" (it names the service in errors).
func New(ep llm.Endpoint) *Provider {
	if ep.Provider == "" {
		ep.Provider = "anthropic"
	}
	opts := []option.RequestOption{
		// Without this the SDK reads ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL,
		// profiles and custom headers from the process environment: the platform's own
		// credentials could leak into a user's endpoint.
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(ep.Client()),
		option.WithMaxRetries(0),
	}
	if ep.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(ep.BaseURL))
	}
	if ep.APIKey != "" {
		opts = append(opts, option.WithAPIKey(ep.APIKey))
	}
	return &Provider{ep: ep, client: anthropic.NewClient(opts...)}
}

// Complete streams one Messages call, emitting text and thinking deltas as they arrive.
// Errors are *llm.Error (HTTP answers, stream error events, broken or unfinished
// streams), ctx's error once ctx ended, emit's error, or a plain error for a request
// that cannot be sent at all (a malformed schema or tool-call arguments).
func (p *Provider) Complete(ctx context.Context, req llm.Request, emit func(llm.Event) error) (*llm.Response, error) {
	params, err := buildParams(&req)
	if err != nil {
		return nil, err
	}
	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	d := newDecoder(len(req.OutputSchema) > 0, emit)
	for stream.Next() {
		if err := d.handle(stream.Current()); err != nil {
			if errors.Is(err, errMalformed) {
				return nil, llm.TransportError(ctx, p.ep, err)
			}
			return nil, err
		}
	}
	// An answer whose message_stop arrived is complete, whatever the connection did next.
	if d.stopped {
		return d.response(), nil
	}
	if err := stream.Err(); err != nil {
		return nil, p.callError(ctx, err)
	}
	return nil, llm.TransportError(ctx, p.ep, llm.ErrIncomplete)
}

// maxModelsPage is the largest page the Models API serves; fewer pages, fewer round trips.
const maxModelsPage = 1000

// ListModels returns the ids of the models the credential may use, following has_more
// across pages.
func (p *Provider) ListModels(ctx context.Context) ([]string, error) {
	pager := p.client.Models.ListAutoPaging(ctx, anthropic.ModelListParams{Limit: anthropic.Int(maxModelsPage)})
	var ids []string
	for pager.Next() {
		ids = append(ids, pager.Current().ID)
	}
	if err := pager.Err(); err != nil {
		return nil, p.callError(ctx, err)
	}
	return ids, nil
}
