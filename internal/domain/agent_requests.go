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

// AgentVersionCreateRequest is a new version of an agent: a whole config, or a merge patch of
// the config of the version it starts from (BaseVersionID, or Base "active").
type AgentVersionCreateRequest struct {
	Config AgentConfig `json:"config" doc:"The version's whole configuration: a version is a full snapshot. With base_version_id or base, only what changes from that version: a JSON Merge Patch (RFC 7396) applied to its config, where objects merge deeply, arrays and other values replace, and null deletes a field."`
	Notes  string      `json:"notes,omitempty" maxLength:"2000"`
	// BaseVersionID and Base make config a patch of an existing version's config.
	BaseVersionID string `json:"base_version_id,omitempty" doc:"Start from this version's config and apply config as a merge patch."`
	Base          string `json:"base,omitempty" enum:"active" doc:"\"active\": start from the active version's config and apply config as a merge patch."`
}

// Validate holds the rule of where a version starts from: one base at most, and "active" the
// only named one. agentconfig.Validate holds the config's.
func (r *AgentVersionCreateRequest) Validate() error {
	switch {
	case r.BaseVersionID != "" && r.Base != "":
		return Invalid("base", "give base_version_id or base, not both")
	case r.Base != "" && r.Base != "active":
		return Invalid("base", "must be \"active\", got %q", r.Base)
	}
	return nil
}

// AgentPreviewRequest asks what an execution would send to the model: of the active version,
// of version VersionID, or of an unsaved Config.
type AgentPreviewRequest struct {
	Input     map[string]any `json:"input"`
	VersionID string         `json:"version_id,omitempty" doc:"Preview this version instead of the active one."`
	Config    *AgentConfig   `json:"config,omitempty" doc:"Preview an unsaved configuration."`
}

// Validate holds the preview's rule: a version or a config, not both.
func (r *AgentPreviewRequest) Validate() error {
	if r.VersionID != "" && r.Config != nil {
		return Invalid("config", "give either version_id or config, not both")
	}
	return nil
}
