package domain

import (
	"fmt"
	"strings"
)

// Score data types: what a score's value means.
const (
	ScoreNumeric     = "numeric"     // any number, within the config's min and max
	ScoreCategorical = "categorical" // one of the config's categories: a label and its number
	ScoreBoolean     = "boolean"     // 1 ("true") or 0 ("false")
)

// ScoreDataTypes lists the data types of scores and score configs.
var ScoreDataTypes = []string{ScoreNumeric, ScoreCategorical, ScoreBoolean}

// ScoreCategory is one category of a categorical score config: the label a score names and
// the number it stands for (so categories can be averaged and ordered).
type ScoreCategory struct {
	Label string  `json:"label" minLength:"1" pattern:"\\S" maxLength:"200" doc:"What a score names in string_value, e.g. \"correct\"."`
	Value float64 `json:"value" doc:"The number the label stands for, stored as the score's value."`
}

// ScoreConfig says what the scores of one name may hold: their data type, a numeric range,
// or categories. An archived config takes no new scores; configs are never deleted, so the
// scores given under one keep their meaning.
type ScoreConfig struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	Name        string          `json:"name" doc:"Unique in the workspace; the name of every score given under this config."`
	DataType    string          `json:"data_type" enum:"numeric,categorical,boolean"`
	Min         *float64        `json:"min" doc:"Numeric configs: the lowest value a score may have; null for no bound."`
	Max         *float64        `json:"max" doc:"Numeric configs: the highest value a score may have; null for no bound."`
	Categories  []ScoreCategory `json:"categories" doc:"Categorical configs: the labels a score may name and their values (both unique); empty for other types."`
	Description string          `json:"description"`
	Archived    bool            `json:"archived" doc:"An archived config takes no new scores (422); its scores stay."`
	CreatedAt   Time            `json:"created_at"`
	UpdatedAt   Time            `json:"updated_at"`
}

// ScoreConfigFilter narrows ScoreConfigList; zero fields match everything.
type ScoreConfigFilter struct {
	DataType string
	Archived *bool
	Query    string // substring of name or description, case-insensitive
}

// ScoreConfigPatch holds the fields of a score config to change; nil fields stay as they are.
// ClearMin and ClearMax remove a bound. The data type never changes.
type ScoreConfigPatch struct {
	Name               *string
	Description        *string
	Archived           *bool
	Min, Max           *float64
	ClearMin, ClearMax bool
	Categories         *[]ScoreCategory
}

// Limits of a score config.
const (
	maxScoreCategories    = 100
	maxScoreCategoryLabel = 200
)

// Check reports the first rule c breaks as a *ValidationError naming the field: a known data
// type; a range only on numeric configs, with min at most max; categories only on
// categorical configs, at least one, at most 100, with unique non-empty labels of at most 200
// characters and unique values.
func (c *ScoreConfig) Check() error {
	if !isScoreDataType(c.DataType) {
		return &FieldError{Field: "data_type", Message: fmt.Sprintf("must be one of %s, got %q", strings.Join(ScoreDataTypes, ", "), c.DataType)}
	}
	if c.DataType != ScoreNumeric {
		for field, v := range map[string]*float64{"min": c.Min, "max": c.Max} {
			if v != nil {
				return &FieldError{Field: field, Message: fmt.Sprintf("only numeric score configs have a range; this one is %s", c.DataType)}
			}
		}
	}
	if c.Min != nil && c.Max != nil && *c.Min > *c.Max {
		return &FieldError{Field: "min", Message: fmt.Sprintf("must be at most max (%g), got %g", *c.Max, *c.Min)}
	}
	if c.DataType != ScoreCategorical {
		if len(c.Categories) > 0 {
			return &FieldError{Field: "categories", Message: fmt.Sprintf("only categorical score configs have categories; this one is %s", c.DataType)}
		}
		return nil
	}
	if len(c.Categories) == 0 {
		return &FieldError{Field: "categories", Message: "a categorical score config needs at least one category"}
	}
	if len(c.Categories) > maxScoreCategories {
		return &FieldError{Field: "categories", Message: fmt.Sprintf("must hold at most %d categories, got %d", maxScoreCategories, len(c.Categories))}
	}
	labels, values := map[string]bool{}, map[float64]bool{}
	for i, cat := range c.Categories {
		field := fmt.Sprintf("categories[%d]", i)
		switch {
		case strings.TrimSpace(cat.Label) == "":
			return &FieldError{Field: field + ".label", Message: "is required and must not be empty"}
		case len([]rune(cat.Label)) > maxScoreCategoryLabel:
			return &FieldError{Field: field + ".label", Message: fmt.Sprintf("must be at most %d characters", maxScoreCategoryLabel)}
		case labels[cat.Label]:
			return &FieldError{Field: field + ".label", Message: fmt.Sprintf("%q is used by another category; labels must be unique", cat.Label)}
		case values[cat.Value]:
			return &FieldError{Field: field + ".value", Message: fmt.Sprintf("%g is used by another category; values must be unique", cat.Value)}
		}
		labels[cat.Label], values[cat.Value] = true, true
	}
	return nil
}

func isScoreDataType(t string) bool {
	for _, d := range ScoreDataTypes {
		if t == d {
			return true
		}
	}
	return false
}

// Apply checks a score's value against the config and completes it: it returns the numeric
// value and the label the score stores. value and label are what the caller sent (nil when
// absent). The error is a *ValidationError naming the field and the rule it breaks:
//
//   - numeric: value is required, label refused, and value within min and max;
//   - categorical: label one of the categories (value, if sent, its number), or value alone
//     one of the categories' numbers (the label is filled in);
//   - boolean: value 0 or 1, label "true" or "false", agreeing when both are sent.
func (c *ScoreConfig) Apply(value *float64, label *string) (*float64, *string, error) {
	switch c.DataType {
	case ScoreNumeric:
		if label != nil {
			return nil, nil, &FieldError{Field: "string_value", Message: fmt.Sprintf("score config %s (%s) is numeric: send value, not string_value", c.Name, c.ID)}
		}
		if value == nil {
			return nil, nil, &FieldError{Field: "value", Message: "is required for a numeric score"}
		}
		if c.Min != nil && *value < *c.Min {
			return nil, nil, &FieldError{Field: "value", Message: fmt.Sprintf("must be at least %g (the min of score config %s), got %g", *c.Min, c.Name, *value)}
		}
		if c.Max != nil && *value > *c.Max {
			return nil, nil, &FieldError{Field: "value", Message: fmt.Sprintf("must be at most %g (the max of score config %s), got %g", *c.Max, c.Name, *value)}
		}
		return value, nil, nil
	case ScoreCategorical:
		return applyCategory(c, value, label)
	case ScoreBoolean:
		return ApplyBoolean(value, label)
	}
	return nil, nil, &FieldError{Field: "config_id", Message: fmt.Sprintf("score config %s has unknown data type %q", c.ID, c.DataType)}
}

func applyCategory(c *ScoreConfig, value *float64, label *string) (*float64, *string, error) {
	if label == nil && value == nil {
		return nil, nil, &FieldError{Field: "string_value", Message: fmt.Sprintf("is required for a categorical score: one of %s (the categories of score config %s)", c.labels(), c.Name)}
	}
	if label != nil {
		for _, cat := range c.Categories {
			if cat.Label != *label {
				continue
			}
			if value != nil && *value != cat.Value {
				return nil, nil, &FieldError{Field: "value", Message: fmt.Sprintf("category %q is %g in score config %s, got %g (or leave value out)", cat.Label, cat.Value, c.Name, *value)}
			}
			return PtrTo(cat.Value), PtrTo(cat.Label), nil
		}
		return nil, nil, &FieldError{Field: "string_value", Message: fmt.Sprintf("must be one of %s (the categories of score config %s), got %q", c.labels(), c.Name, *label)}
	}
	for _, cat := range c.Categories {
		if cat.Value == *value {
			return PtrTo(cat.Value), PtrTo(cat.Label), nil
		}
	}
	vals := make([]string, len(c.Categories))
	for i, cat := range c.Categories {
		vals[i] = fmt.Sprintf("%g (%s)", cat.Value, cat.Label)
	}
	return nil, nil, &FieldError{Field: "value", Message: fmt.Sprintf("must be one of %s (the categories of score config %s), got %g", strings.Join(vals, ", "), c.Name, *value)}
}

func (c *ScoreConfig) labels() string {
	out := make([]string, len(c.Categories))
	for i, cat := range c.Categories {
		out[i] = fmt.Sprintf("%q", cat.Label)
	}
	return strings.Join(out, ", ")
}

// applyBoolean checks a boolean score: value 0 or 1 and label "true" or "false", agreeing.
func ApplyBoolean(value *float64, label *string) (*float64, *string, error) {
	if value == nil && label == nil {
		return nil, nil, &FieldError{Field: "value", Message: `is required for a boolean score: 1 or 0 (or string_value "true" or "false")`}
	}
	var fromLabel *float64
	if label != nil {
		switch *label {
		case "true":
			fromLabel = PtrTo(1.0)
		case "false":
			fromLabel = PtrTo(0.0)
		default:
			return nil, nil, &FieldError{Field: "string_value", Message: fmt.Sprintf(`must be "true" or "false" for a boolean score, got %q`, *label)}
		}
	}
	if value != nil {
		if *value != 0 && *value != 1 {
			return nil, nil, &FieldError{Field: "value", Message: fmt.Sprintf("must be 1 (true) or 0 (false) for a boolean score, got %g", *value)}
		}
		if fromLabel != nil && *fromLabel != *value {
			return nil, nil, &FieldError{Field: "value", Message: fmt.Sprintf("string_value %q is %g, got %g (or leave one out)", *label, *fromLabel, *value)}
		}
		fromLabel = value
	}
	l := "false"
	if *fromLabel == 1 {
		l = "true"
	}
	return PtrTo(*fromLabel), &l, nil
}
