package domain

import (
	"fmt"
	"strings"
)

// AnnotationQueueCreateRequest is a new annotation queue.
type AnnotationQueueCreateRequest struct {
	Name           string   `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Unique in the workspace."`
	Description    string   `json:"description,omitempty" maxLength:"2000"`
	ScoreConfigIDs []string `json:"score_config_ids" minItems:"1" maxItems:"20" doc:"The score configs reviewers score items under (not archived)."`
}

// Validate holds a new queue's rule: a name that is more than white space.
func (r *AnnotationQueueCreateRequest) Validate() error {
	return NotBlank("name", r.Name)
}

// AnnotationQueueUpdateRequest is a change to an annotation queue; a field left out stays as
// it is.
type AnnotationQueueUpdateRequest struct {
	Name           *string   `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Description    *string   `json:"description,omitempty" maxLength:"2000"`
	ScoreConfigIDs *[]string `json:"score_config_ids,omitempty" minItems:"1" maxItems:"20" doc:"Replaces the list; items reviewed already keep their scores."`
}

// Validate holds the rule of a queue change: a new name that is more than white space.
func (r *AnnotationQueueUpdateRequest) Validate() error {
	return NotBlankIfSet("name", r.Name)
}

// AnnotationItemsAddRequest adds executions to an annotation queue.
type AnnotationItemsAddRequest struct {
	ExecutionIDs []string `json:"execution_ids" minItems:"1" maxItems:"1000" doc:"Executions of the workspace to review; one already in the queue is skipped."`
}

// Validate holds the rule of the executions added: no id that is white space only (the
// document bounds how many).
func (r *AnnotationItemsAddRequest) Validate() error {
	for i, id := range r.ExecutionIDs {
		if strings.TrimSpace(id) == "" {
			return Invalid("execution_ids", "item %d is empty", i)
		}
	}
	return nil
}

// AnnotationScore is one score a reviewer gives the execution of an annotation item.
type AnnotationScore struct {
	ConfigID    string         `json:"config_id" minLength:"1" doc:"One of the queue's score_config_ids."`
	Value       *float64       `json:"value,omitempty" doc:"As for POST /scores: the number, the category's value, or 1/0."`
	StringValue *string        `json:"string_value,omitempty" maxLength:"200" doc:"As for POST /scores: the category's label, or \"true\"/\"false\"."`
	Comment     string         `json:"comment,omitempty" maxLength:"10000"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// AnnotationCompleteRequest completes an annotation item with the reviewer's scores.
type AnnotationCompleteRequest struct {
	Scores []AnnotationScore `json:"scores" minItems:"1" maxItems:"20" doc:"The reviewer's scores of the item's execution."`
}

// Validate holds the rule of a completion: each score names its config by more than white
// space (the document bounds how many). Whether a value fits its config is the store's check.
func (r *AnnotationCompleteRequest) Validate() error {
	for i, sc := range r.Scores {
		if err := NotBlank(fmt.Sprintf("scores[%d].config_id", i), sc.ConfigID); err != nil {
			return err
		}
	}
	return nil
}
