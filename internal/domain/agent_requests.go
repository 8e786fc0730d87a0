package domain

// AgentCreateRequest is a new agent as a client asks for it. The document checks its shape;
// Validate holds the rest, and agentconfig.Validate its config.
type AgentCreateRequest struct {
	Name        string         `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Display name."`
	Description string         `json:"description,omitempty" maxLength:"2000"`
	Type        string         `json:"type" doc:"The agent type."`
	Status      string         `json:"status,omitempty" enum:"active,inactive,archived" doc:"Defaults to active."`
	Tags        []string       `json:"tags,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Config      *AgentConfig   `json:"config,omitempty" doc:"Configuration of version 1, which becomes active. Defaults to {\"model\": \"gpt-4o-mini\"}."`
	Notes       string         `json:"notes,omitempty" doc:"Notes of version 1."`
	// Completion webhook. JSON null reads as "" (no webhook).
	WebhookURL    *string `json:"webhook_url,omitempty" maxLength:"2000" doc:"An absolute http(s) URL each execution of the agent is POSTed to when it ends, signed with the Standard Webhooks scheme (see webhook_secret); no fragment (#…), no user:password@ (the rule of every webhook URL)."`
	WebhookSecret *string `json:"webhook_secret,omitempty" doc:"The Standard Webhooks signing secret: whsec_ followed by the base64 of 24 to 64 bytes. Left out with a webhook_url, one is generated and returned once, in this response."`
}

// Validate holds a new agent's rules: a name that is more than white space and the rules of
// every completion webhook.
func (r *AgentCreateRequest) Validate() error {
	if err := NotBlank("name", r.Name); err != nil {
		return err
	}
	return CompletionWebhook{URL: r.WebhookURL, Secret: r.WebhookSecret, New: true}.Validate()
}

// AgentUpdateRequest is a change to an agent; a field left out stays as it is.
type AgentUpdateRequest struct {
	Name        *string         `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Description *string         `json:"description,omitempty" maxLength:"2000"`
	Status      *string         `json:"status,omitempty" enum:"active,inactive,archived"`
	Tags        *[]string       `json:"tags,omitempty"`
	Metadata    *map[string]any `json:"metadata,omitempty"`
	// Completion webhook. JSON null reads as "" (remove the webhook).
	WebhookURL    *string `json:"webhook_url,omitempty" maxLength:"2000" nullable:"true" doc:"A new webhook URL (the secret is kept, or generated and returned once if the agent has none); null or \"\" removes the webhook and its secret."`
	WebhookSecret *string `json:"webhook_secret,omitempty" doc:"A new signing secret (whsec_ + base64 of 24 to 64 bytes) for the agent's webhook."`
}

// Validate holds the rules of an agent change that need not know the agent: a name that is
// more than white space and the rules of every completion webhook.
func (r *AgentUpdateRequest) Validate() error {
	if err := NotBlankIfSet("name", r.Name); err != nil {
		return err
	}
	return CompletionWebhook{URL: r.WebhookURL, Secret: r.WebhookSecret}.Validate()
}
