package domain

import "encoding/json"

// DatasetCreateRequest is a new dataset.
type DatasetCreateRequest struct {
	Name        string          `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Unique in the workspace."`
	Description string          `json:"description,omitempty" maxLength:"2000"`
	Metadata    map[string]any  `json:"metadata,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty" doc:"A JSON Schema (draft 2020-12) every item's input must satisfy."`
}

// Validate holds a new dataset's rule: a name that is more than white space. Its input
// schema is compiled by eval.CreateDataset.
func (r *DatasetCreateRequest) Validate() error {
	return NotBlank("name", r.Name)
}

// EvaluatorCreateRequest is a new evaluator.
type EvaluatorCreateRequest struct {
	Name          string         `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Unique in the workspace."`
	Description   string         `json:"description,omitempty" maxLength:"2000"`
	Type          string         `json:"type" required:"true" doc:"The evaluator type."`
	Config        map[string]any `json:"config,omitempty" doc:"The type's options (see the README's evaluator types); unknown options are refused."`
	ScoreName     string         `json:"score_name,omitempty" maxLength:"200" doc:"The name of the scores it gives; defaults to the score config's name, else the evaluator's name."`
	ScoreConfigID *string        `json:"score_config_id,omitempty" doc:"A score config (not archived, of the type's data type) to check its scores against."`
}

// Validate holds a new evaluator's rule: a name that is more than white space. Its type and
// config are the rules of eval.Prepare, which knows the registered types.
func (r *EvaluatorCreateRequest) Validate() error {
	return NotBlank("name", r.Name)
}
