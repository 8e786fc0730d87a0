package client

import (
	"context"
	"net/http"
)

// The OpenAI-compatible endpoint answers in OpenAI's wire format (no data envelope): an
// agent is called by its id or name as the model. Errors come back as *Error with the code of
// OpenAI's error object.

// OpenAIChatCompletions runs an agent through POST /api/v1/openai/chat/completions (without
// stream; an approval the run waits for is an *Error with code approval_required).
func (c *Client) OpenAIChatCompletions(ctx context.Context, in OpenAIChatRequest, opts ...RequestOption) (*OpenAIChatCompletion, error) {
	var out OpenAIChatCompletion
	if err := c.do(ctx, http.MethodPost, "/api/v1/openai/chat/completions", nil, in, &out, opts...); err != nil {
		return nil, err
	}
	return &out, nil
}

// OpenAIResponses runs an agent through POST /api/v1/openai/responses (without stream).
func (c *Client) OpenAIResponses(ctx context.Context, in OpenAIResponsesRequest, opts ...RequestOption) (*OpenAIResponse, error) {
	var out OpenAIResponse
	if err := c.do(ctx, http.MethodPost, "/api/v1/openai/responses", nil, in, &out, opts...); err != nil {
		return nil, err
	}
	return &out, nil
}

// OpenAIModels lists the agents callable as models.
func (c *Client) OpenAIModels(ctx context.Context) (*OpenAIModelList, error) {
	var out OpenAIModelList
	if err := c.do(ctx, http.MethodGet, "/api/v1/openai/models", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
