package domain

// Score sources: who gave the score.
const (
	ScoreSourceAPI        = "api"        // an application, through the API (the default)
	ScoreSourceAnnotation = "annotation" // a person reviewing runs
	ScoreSourceEval       = "eval"       // an automated evaluation
)

// ScoreSources lists the sources of scores.
var ScoreSources = []string{ScoreSourceAPI, ScoreSourceAnnotation, ScoreSourceEval}

// ScoreAuthor is who wrote a score: the API key or the signed-in user of the request.
type ScoreAuthor struct {
	Type string `json:"type" enum:"api_key,user"`
	ID   string `json:"id" doc:"The API key's id, or the user's id."`
	Name string `json:"name" doc:"The API key's prefix (its first 11 characters), or the user's email."`
}

// Score is a judgement of a run: a number, a category or a boolean, given to an execution, a
// trace, a span of a trace or a chat session, by name alone or under a score config that
// checked it.
type Score struct {
	ID          string   `json:"id"`
	WorkspaceID string   `json:"workspace_id"`
	Name        string   `json:"name" doc:"What is scored, e.g. \"helpfulness\"; the config's name for a score given under a config."`
	ConfigID    *string  `json:"config_id" doc:"The score config that checked the score; null for a score given by name alone."`
	DataType    string   `json:"data_type" enum:"numeric,categorical,boolean"`
	Value       *float64 `json:"value" doc:"The number: the score itself (numeric), the category's value (categorical; null for a category without a config and a value), 1 or 0 (boolean)."`
	StringValue *string  `json:"string_value" doc:"The category's label (categorical), \"true\" or \"false\" (boolean); null for numeric scores."`
	ExecutionID *string  `json:"execution_id" doc:"The execution scored, or the one whose trace is scored."`
	TraceID     *string  `json:"trace_id" doc:"The trace scored, or the trace of the execution or span scored."`
	SpanID      *string  `json:"span_id" doc:"The span scored (a span of trace_id)."`
	SessionID   *string  `json:"session_id" doc:"The chat session scored, or the session of the execution or trace scored."`
	Source      string   `json:"source" enum:"api,annotation,eval"`
	RuleID      *string  `json:"rule_id" doc:"The evaluation rule that gave the score (source eval, online evaluation); null otherwise."`
	Comment     string   `json:"comment"`
	// Author is nil in the emulator, which has no keys or users.
	Author    *ScoreAuthor `json:"author" doc:"Who wrote the score: the request's API key or signed-in user; null in the emulator."`
	Metadata  JSONObject   `json:"metadata"`
	CreatedAt Time         `json:"created_at"`
	UpdatedAt Time         `json:"updated_at"`
}

// ScoreFilter narrows ScoreList and ScoreSummary; zero fields match everything. A target
// filter matches scores of that target and of what it contains (trace_id: the trace's
// spans too; session_id: its executions too).
type ScoreFilter struct {
	Name, ConfigID, DataType, Source, RuleID string
	ExecutionID, TraceID, SpanID, SessionID  string
	ExperimentID                             string // the scores of an experiment's runs
	CreatedAfter, CreatedBefore              Time
}

// ScorePatch holds the fields of a score to change; nil fields stay as they are. Setting
// Value or StringValue replaces the score's value as on create: it is checked again against
// the score's config (archived or not) or data type, and the other of the two is derived.
type ScorePatch struct {
	Value       *float64
	StringValue *string
	Comment     *string
	Metadata    *JSONObject
}

// ScoreSummary sums up the scores of one name and data type.
type ScoreSummary struct {
	Name     string        `json:"name"`
	DataType string        `json:"data_type" enum:"numeric,categorical,boolean"`
	Count    int           `json:"count"`
	Mean     *float64      `json:"mean" doc:"The mean value: of the numbers (numeric), the share of true (boolean); null for categorical scores."`
	Min      *float64      `json:"min" doc:"The lowest value (numeric); null otherwise."`
	Max      *float64      `json:"max" doc:"The highest value (numeric); null otherwise."`
	Buckets  []ScoreBucket `json:"buckets" doc:"Numeric scores' distribution: with at most 10 distinct values, one bucket per value (lower = upper = the value); else 10 buckets of equal width from min to max, each holding lower <= value < upper (the last one includes max). Empty for other types."`
	// Categories is for categorical and boolean scores.
	Categories []ScoreLabelCount `json:"categories" doc:"Categorical and boolean scores' distribution: the count of each label (\"true\" and \"false\" for boolean), most frequent first. Empty for numeric scores."`
}

// ScoreBucket counts the numeric scores from Lower to Upper.
type ScoreBucket struct {
	Lower float64 `json:"lower"`
	Upper float64 `json:"upper"`
	Count int     `json:"count"`
}

// ScoreLabelCount counts the scores of one label.
type ScoreLabelCount struct {
	Label string `json:"label"`
	Count int    `json:"count"`
}
