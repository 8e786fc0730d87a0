package domain

// Evaluator scores a run's output: a deterministic check or a model acting as judge (package
// eval holds the types and their rules). The score it writes is named ScoreName, of DataType,
// and checked against ScoreConfigID when set.
type Evaluator struct {
	ID            string     `json:"id"`
	WorkspaceID   string     `json:"workspace_id"`
	Name          string     `json:"name" doc:"Unique in the workspace."`
	Description   string     `json:"description"`
	Type          string     `json:"type" doc:"The evaluator type."`
	Config        JSONObject `json:"config" doc:"The type's options; see the evaluator types in the README."`
	ScoreName     string     `json:"score_name" doc:"The name of the scores it writes (the score config's name when score_config_id is set)."`
	ScoreConfigID *string    `json:"score_config_id" doc:"The score config its scores are checked against; null for scores by name alone."`
	DataType      string     `json:"data_type" enum:"numeric,categorical,boolean" doc:"The data type of its scores."`
	CreatedAt     Time       `json:"created_at"`
	UpdatedAt     Time       `json:"updated_at"`
}

// EvaluatorFilter narrows EvaluatorList; zero fields match everything.
type EvaluatorFilter struct {
	Type  string
	Name  string // exact name
	Query string // substring of name or description, case-insensitive
}
