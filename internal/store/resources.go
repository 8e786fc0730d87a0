package store

import "github.com/agentplane/agentplane/internal/domain"

// resource is one kind of stored thing: its key in StoreStats, its table and, when other
// resources refer to it by id (CheckRefs), its Kind.
type resource struct {
	key   string
	table string
	kind  domain.Kind
}

// resources declares every resource of a workspace, once: StoreStats counts them, Truncate
// empties them and CheckRefs finds a Kind's table here. A resource comes after those it
// refers to, so Truncate deletes in reverse order. A new resource adds its row (and its
// migration); TestResourcesCoverTheSchema fails while a table is missing.
var resources = []resource{
	{"workspaces", "workspaces", ""},
	{"api_keys", "api_keys", ""},
	{"agents", "agents", domain.KindAgent},
	{"agent_versions", "agent_versions", ""},
	{"prompts", "prompts", domain.KindPrompt},
	{"prompt_versions", "prompt_versions", ""},
	{"data_sources", "data_sources", domain.KindDataSource},
	{"data_source_versions", "data_source_versions", ""},
	{"credentials", "credentials", domain.KindCredential},
	{"llm_models", "llm_models", domain.KindLLMModel},
	{"mcp_tools", "mcp_tools", domain.KindMCPTool},
	{"guardrails", "guardrails", domain.KindGuardrail},
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
func kindTable(k domain.Kind) string {
	for _, r := range resources {
		if r.kind == k {
			return r.table
		}
	}
	return ""
}
