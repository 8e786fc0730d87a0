package client

import (
	"context"
	"net/http"
)

// AgentList lists agents, newest first.
func (c *Client) AgentList(ctx context.Context, o ListAgentsParams) (*List[Agent], error) {
	return list[Agent](ctx, c, "/api/v1/agents", query(o))
}

// AgentCreate creates an agent and its active version 1.
func (c *Client) AgentCreate(ctx context.Context, in AgentCreateRequest, opts ...RequestOption) (*Agent, error) {
	return send[Agent](ctx, c, http.MethodPost, "/api/v1/agents", in, opts...)
}

// AgentGet gets an agent.
func (c *Client) AgentGet(ctx context.Context, id string) (*Agent, error) {
	return get[Agent](ctx, c, "/api/v1/agents/"+pathEscape(id), nil)
}

// AgentUpdate changes an agent's fields.
func (c *Client) AgentUpdate(ctx context.Context, id string, in AgentUpdateRequest) (*Agent, error) {
	return send[Agent](ctx, c, http.MethodPatch, "/api/v1/agents/"+pathEscape(id), in)
}

// AgentDelete deletes an agent and its versions, returning it.
func (c *Client) AgentDelete(ctx context.Context, id string) (*Agent, error) {
	return send[Agent](ctx, c, http.MethodDelete, "/api/v1/agents/"+pathEscape(id), nil)
}

// AgentVersionList lists an agent's versions, newest first.
func (c *Client) AgentVersionList(ctx context.Context, agentID string, o ListAgentVersionsParams) (*List[AgentVersion], error) {
	return list[AgentVersion](ctx, c, "/api/v1/agents/"+pathEscape(agentID)+"/versions", query(o))
}

// AgentVersionCreate adds a version (not active until promoted).
func (c *Client) AgentVersionCreate(ctx context.Context, agentID string, config AgentConfig, notes string, opts ...RequestOption) (*AgentVersion, error) {
	body := map[string]any{"config": config, "notes": notes}
	return send[AgentVersion](ctx, c, http.MethodPost, "/api/v1/agents/"+pathEscape(agentID)+"/versions", body, opts...)
}

// AgentVersionGet gets one version.
func (c *Client) AgentVersionGet(ctx context.Context, agentID, versionID string) (*AgentVersion, error) {
	return get[AgentVersion](ctx, c, "/api/v1/agents/"+pathEscape(agentID)+"/versions/"+pathEscape(versionID), nil)
}

// AgentVersionPromote makes a version active and returns the agent.
func (c *Client) AgentVersionPromote(ctx context.Context, agentID, versionID string) (*Agent, error) {
	return send[Agent](ctx, c, http.MethodPost, "/api/v1/agents/"+pathEscape(agentID)+"/versions/"+pathEscape(versionID)+"/promote", nil)
}

// AgentPreview validates input and shows the messages an execution would send.
func (c *Client) AgentPreview(ctx context.Context, agentID string, in AgentPreviewRequest) (*AgentPreview, error) {
	return send[AgentPreview](ctx, c, http.MethodPost, "/api/v1/agents/"+pathEscape(agentID)+"/preview", in)
}

// LLMModelList lists the model catalog.
func (c *Client) LLMModelList(ctx context.Context, o ListLLMModelsParams) (*List[LLMModel], error) {
	return list[LLMModel](ctx, c, "/api/v1/llm-models", query(o))
}

// LLMModelCreate registers a workspace model.
func (c *Client) LLMModelCreate(ctx context.Context, in LlmModelCreateRequest, opts ...RequestOption) (*LLMModel, error) {
	return send[LLMModel](ctx, c, http.MethodPost, "/api/v1/llm-models", in, opts...)
}

// LLMModelUpdate changes a workspace model (built-in entries are read-only: 403).
func (c *Client) LLMModelUpdate(ctx context.Context, id string, in LlmModelUpdateRequest) (*LLMModel, error) {
	return send[LLMModel](ctx, c, http.MethodPatch, "/api/v1/llm-models/"+pathEscape(id), in)
}

// LLMModelDelete deletes a workspace model, returning it.
func (c *Client) LLMModelDelete(ctx context.Context, id string) (*LLMModel, error) {
	return send[LLMModel](ctx, c, http.MethodDelete, "/api/v1/llm-models/"+pathEscape(id), nil)
}

// LLMModelGet gets one model.
func (c *Client) LLMModelGet(ctx context.Context, id string) (*LLMModel, error) {
	return get[LLMModel](ctx, c, "/api/v1/llm-models/"+pathEscape(id), nil)
}
