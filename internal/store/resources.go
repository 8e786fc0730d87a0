package store

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

// resource is one kind of stored thing: its key in StoreStats, its table and, when other
// resources refer to it by id (CheckRefs), its Kind.
type resource struct {
	key   string
	table string
	kind  Kind
}

// resources declares every resource of a workspace, once: StoreStats counts them, Truncate
// empties them and CheckRefs finds a Kind's table here. A resource comes after those it
// refers to, so Truncate deletes in reverse order. A new resource adds its row (and its
// migration); TestResourcesCoverTheSchema fails while a table is missing.
var resources = []resource{
	{"workspaces", "workspaces", ""},
	{"api_keys", "api_keys", ""},
	{"agents", "agents", KindAgent},
	{"agent_versions", "agent_versions", ""},
	{"prompts", "prompts", KindPrompt},
	{"prompt_versions", "prompt_versions", ""},
	{"data_sources", "data_sources", KindDataSource},
	{"data_source_versions", "data_source_versions", ""},
	{"credentials", "credentials", KindCredential},
	{"llm_models", "llm_models", KindLLMModel},
	{"mcp_tools", "mcp_tools", KindMCPTool},
	{"guardrails", "guardrails", KindGuardrail},
	{"memories", "memories", ""},
	{"executions", "executions", ""},
	{"execution_event_batches", "execution_events", ""},
	{"traces", "traces", ""},
	{"spans", "spans", ""},
	{"approvals", "approvals", ""},
	{"chat_sessions", "chat_sessions", ""},
	{"chat_messages", "chat_messages", ""},
	{"score_configs", "score_configs", ""},
	{"scores", "scores", ""},
	{"evaluators", "evaluators", ""},
	{"datasets", "datasets", ""},
	{"dataset_items", "dataset_items", ""},
	{"asset_blobs", "asset_blobs", ""},
	{"assets", "assets", ""},
	{"agent_triggers", "agent_triggers", ""},
	{"trigger_events", "trigger_events", ""},
	{"webhook_deliveries", "webhook_deliveries", ""},
	{"annotation_queues", "annotation_queues", ""},
	{"annotation_items", "annotation_items", ""},
	{"evaluation_rules", "evaluation_rules", ""},
	{"evaluation_judgments", "evaluation_judgments", ""},
	{"experiments", "experiments", ""},
	{"experiment_items", "experiment_items", ""},
}

// table is the table of a referable kind's rows ("" for a kind no resource declares).
func (k Kind) table() string {
	for _, r := range resources {
		if r.kind == k {
			return r.table
		}
	}
	return ""
}
