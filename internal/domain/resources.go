package domain

// Kind names a resource that other resources refer to by id.
type Kind string

// Referable kinds; each is the kind of one row of resources.
const (
	KindAgent      Kind = "agent"
	KindPrompt     Kind = "prompt"
	KindMCPTool    Kind = "mcp tool"
	KindGuardrail  Kind = "guardrail"
	KindCredential Kind = "credential"
	KindDataSource Kind = "data source"
	KindLLMModel   Kind = "llm model"
)
