package domain

// ScoreConfigCreateRequest is a new score config. The document checks its shape; Validate
// holds the name rule, and ScoreConfig.Check the rules of its bounds and categories.
type ScoreConfigCreateRequest struct {
	Name        string          `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Unique in the workspace."`
	DataType    string          `json:"data_type" enum:"numeric,categorical,boolean"`
	Min         *float64        `json:"min,omitempty" doc:"Numeric only: the lowest value a score may have."`
	Max         *float64        `json:"max,omitempty" doc:"Numeric only: the highest value a score may have."`
	Categories  []ScoreCategory `json:"categories,omitempty" doc:"Categorical only (and required): the labels scores may name and the numbers they stand for; labels and values unique, at most 100."`
	Description string          `json:"description,omitempty" maxLength:"2000"`
	Archived    bool            `json:"archived,omitempty"`
}

// Validate holds a new config's rule: a name that is more than white space.
func (r *ScoreConfigCreateRequest) Validate() error {
	return NotBlank("name", r.Name)
}

// ScoreConfigUpdateRequest is a change to a score config; a field left out stays as it is.
type ScoreConfigUpdateRequest struct {
	Name        *string          `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Description *string          `json:"description,omitempty" maxLength:"2000"`
	Archived    *bool            `json:"archived,omitempty" doc:"true: the config takes no new scores; false takes them again."`
	Min         *float64         `json:"min,omitempty" nullable:"true" doc:"A new lower bound; null removes it."`
	Max         *float64         `json:"max,omitempty" nullable:"true" doc:"A new upper bound; null removes it."`
	Categories  *[]ScoreCategory `json:"categories,omitempty" doc:"Replaces the categories (categorical configs)."`
}

// Validate holds the rule of a config change that needs not know the config: a new name that
// is more than white space. That data_type never changes is checked against the config.
func (r *ScoreConfigUpdateRequest) Validate() error {
	return NotBlankIfSet("name", r.Name)
}

// ScoreCreateRequest is a new score.
type ScoreCreateRequest struct {
	Name        string         `json:"name,omitempty" maxLength:"200" doc:"What is scored. Required without config_id; with it, the config's name or left out."`
	ConfigID    *string        `json:"config_id,omitempty" doc:"A score config to check the score against (not archived)."`
	DataType    string         `json:"data_type,omitempty" enum:"numeric,categorical,boolean" doc:"Required without config_id; with it, the config's data type or left out."`
	Value       *float64       `json:"value,omitempty" doc:"Numeric: the score (within the config's min and max). Categorical: a category's value (the label is filled in). Boolean: 1 or 0."`
	StringValue *string        `json:"string_value,omitempty" maxLength:"200" doc:"Categorical: the category's label (its value is filled in from the config). Boolean: \"true\" or \"false\"."`
	ExecutionID *string        `json:"execution_id,omitempty" maxLength:"200" doc:"The execution scored."`
	TraceID     *string        `json:"trace_id,omitempty" maxLength:"200" doc:"The trace scored (or, with span_id, the trace of the span)."`
	SpanID      *string        `json:"span_id,omitempty" maxLength:"200" doc:"The span scored; needs trace_id (or execution_id)."`
	SessionID   *string        `json:"session_id,omitempty" maxLength:"200" doc:"The chat session scored (or a session id ingested traces carry)."`
	Source      string         `json:"source,omitempty" enum:"api,annotation,eval" doc:"Who gives the score (default api): an application, a person reviewing runs, an automated evaluation."`
	Comment     string         `json:"comment,omitempty" maxLength:"10000"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// Validate holds a new score's rule: it names what is scored (a name that is more than white
// space) or a score config (an empty config_id is none), or both. The store checks the value
// against the config and what is scored.
func (r *ScoreCreateRequest) Validate() error {
	if r.ConfigID != nil && *r.ConfigID != "" {
		return nil
	}
	if NotBlank("name", r.Name) != nil {
		return Invalid("name", "is required without config_id")
	}
	return nil
}
