package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// Case is what an evaluator judges: a run's input and output, the output expected of it (nil
// when none), and its metadata.
type Case struct {
	Input          map[string]any
	Output         json.RawMessage
	ExpectedOutput json.RawMessage
	Metadata       map[string]any
}

// EvaluationResult is the score an evaluator gives a case, checked like any score but not stored.
type EvaluationResult struct {
	EvaluatorID string   `json:"evaluator_id"`
	Name        string   `json:"name" doc:"The score's name."`
	ConfigID    *string  `json:"config_id" doc:"The score config it was checked against; null for a score by name alone."`
	DataType    string   `json:"data_type" enum:"numeric,categorical,boolean"`
	Value       *float64 `json:"value"`
	StringValue *string  `json:"string_value"`
	Comment     string   `json:"comment" doc:"Why: what differed, what matched, or the judge's reasoning."`
	// What a judge's model call cost; zero for the deterministic types.
	TokenUsage domain.TokenUsage `json:"token_usage"`
	Cost       float64           `json:"cost" doc:"USD, from the model catalog's prices."`
	TraceID    *string           `json:"trace_id" doc:"The trace recording the judge's model call; null for the deterministic types."`
}

// verdict is what an evaluator concluded about a case, before it is checked as a score.
type verdict struct {
	value   *float64
	label   *string
	comment string
	usage   domain.TokenUsage
	cost    float64
	traceID *string
}

// option is one config option of an evaluator type.
type option struct {
	name, typ string // typ: string, boolean, object, string_list
	required  bool
}

// kind is an evaluator type: the data type of its scores, its options, an extra check of its
// config (regex compiled, schema compiled), and how it scores a case.
type kind struct {
	dataType string
	options  []option
	check    func(cfg domain.JSONObject) error
	score    func(cfg domain.JSONObject, c Case) (value float64, comment string, err error)
}

// kinds holds the deterministic evaluator types, registered by checks.go; llm_judge has its own
// file (judge.go), since its data type and its scores come from its config and a model.
var kinds = map[string]kind{}

// Types lists the evaluator types, sorted.
func Types() []string {
	out := make([]string, 0, len(kinds)+1)
	out = append(out, TypeJudge)
	for t := range kinds {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// checkConfig checks a config's options against its type: no unknown option, each of its
// type, the required ones present, then the type's own check.
func (k kind) checkConfig(cfg domain.JSONObject) error {
	for name := range cfg {
		if !slices.ContainsFunc(k.options, func(o option) bool { return o.name == name }) {
			names := make([]string, len(k.options))
			for i, o := range k.options {
				names[i] = o.name
			}
			return &store.ValidationError{Field: "config." + name, Message: fmt.Sprintf("is not an option of this type; options: %s", strings.Join(names, ", "))}
		}
	}
	for _, o := range k.options {
		v, ok := cfg[o.name]
		if !ok {
			if o.required {
				return &store.ValidationError{Field: "config." + o.name, Message: "is required"}
			}
			continue
		}
		if !ofType(v, o.typ) {
			return &store.ValidationError{Field: "config." + o.name, Message: "must be a " + strings.ReplaceAll(o.typ, "_", " ")}
		}
	}
	if k.check != nil {
		return k.check(cfg)
	}
	return nil
}

func ofType(v any, typ string) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "string_list":
		l, ok := v.([]any)
		if !ok || len(l) == 0 {
			return false
		}
		for _, e := range l {
			if s, ok := e.(string); !ok || strings.TrimSpace(s) == "" {
				return false
			}
		}
		return true
	}
	return v != nil // object: any JSON value but null (a schema may be true or false)
}

// Prepare checks an evaluator as it would be stored (a new one, or a stored one with a patch
// merged in) and completes it: the data type its type gives, and the score's name — the score
// config's (which must exist, not be archived, and be of that data type), else score_name,
// else the evaluator's name.
func Prepare(ctx context.Context, st *store.Store, e *domain.Evaluator) error {
	if e.Config == nil {
		e.Config = domain.JSONObject{}
	}
	var c *domain.ScoreConfig
	if e.ScoreConfigID != nil {
		var err error
		c, err = st.ScoreConfigGet(ctx, e.WorkspaceID, *e.ScoreConfigID)
		if store.IsNotFound(err) {
			return &store.ReferenceError{Field: "score_config_id", Resource: "score config", ID: *e.ScoreConfigID}
		}
		if err != nil {
			return err
		}
	}
	if e.Type == TypeJudge {
		dt, err := checkJudge(e.Config, c)
		if err != nil {
			return err
		}
		// The model must be one the workspace knows (the catalog's or its own), as for agents.
		if err := st.CheckRefs(ctx, e.WorkspaceID, domain.KindLLMModel, "config.model", e.Config["model"].(string)); err != nil {
			return err
		}
		e.DataType = dt
	} else {
		k, ok := kinds[e.Type]
		if !ok {
			return &store.ValidationError{Field: "type", Message: fmt.Sprintf("must be one of %s, got %q", strings.Join(Types(), ", "), e.Type)}
		}
		if err := k.checkConfig(e.Config); err != nil {
			return err
		}
		e.DataType = k.dataType
	}
	if c == nil {
		if strings.TrimSpace(e.ScoreName) == "" {
			e.ScoreName = e.Name
		}
		return nil
	}
	switch {
	case c.Archived:
		return &store.ValidationError{Field: "score_config_id", Message: fmt.Sprintf("score config %s (%s) is archived and takes no new scores", c.Name, c.ID)}
	case c.DataType != e.DataType:
		return &store.ValidationError{Field: "score_config_id", Message: fmt.Sprintf("score config %s (%s) is %s, but %s evaluators give %s scores", c.Name, c.ID, c.DataType, e.Type, e.DataType)}
	case e.ScoreName != "" && e.ScoreName != c.Name:
		return &store.ValidationError{Field: "score_name", Message: fmt.Sprintf("must be %q, the name of score config %s, or left out; got %q", c.Name, c.ID, e.ScoreName)}
	}
	e.ScoreName = c.Name
	return nil
}

// Run scores a case with an evaluator and checks the score as any score is checked (against
// its score config, or its data type); nothing is stored. A case the evaluator cannot judge
// (no expected output to compare with, an output that is not JSON for a JSON check) is a
// *store.ValidationError naming what is missing.
func Run(ctx context.Context, st *store.Store, judge JudgeFunc, e *domain.Evaluator, c Case) (*EvaluationResult, error) {
	var v *verdict
	if e.Type == TypeJudge {
		var err error
		if v, err = runJudge(ctx, st, judge, e, c); err != nil {
			return nil, err
		}
	} else {
		k, ok := kinds[e.Type]
		if !ok {
			return nil, fmt.Errorf("evaluator %s has unknown type %q", e.ID, e.Type)
		}
		n, comment, err := k.score(e.Config, c)
		if err != nil {
			return nil, err
		}
		v = &verdict{value: &n, comment: comment}
	}
	sc := &domain.Score{WorkspaceID: e.WorkspaceID, Name: e.ScoreName, ConfigID: e.ScoreConfigID, DataType: e.DataType, Value: v.value, StringValue: v.label}
	if err := st.ScoreValidate(ctx, sc); err != nil {
		return nil, fmt.Errorf("evaluator %s (%s): %w", e.Name, e.ID, err)
	}
	return &EvaluationResult{EvaluatorID: e.ID, Name: sc.Name, ConfigID: sc.ConfigID, DataType: sc.DataType, Value: sc.Value,
		StringValue: sc.StringValue, Comment: v.comment, TokenUsage: v.usage, Cost: v.cost, TraceID: v.traceID}, nil
}
