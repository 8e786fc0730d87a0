package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/prompttmpl"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

// TypeJudge is the evaluator type whose score a model gives.
const TypeJudge = "llm_judge"

// JudgeFunc makes a judge's model call (the engine's Judge in the server and the emulator).
type JudgeFunc func(ctx context.Context, req runtime.JudgeRequest) (*runtime.JudgeReply, error)

// judgeOptions are llm_judge's config options.
var judgeOptions = []option{
	{name: "model", typ: "string", required: true}, {name: "prompt", typ: "string", required: true},
	{name: "score_type", typ: "string"}, {name: "min", typ: "number"}, {name: "max", typ: "number"}, {name: "labels", typ: "string_list"},
}

// judgeVars are the variables a judge's prompt may use.
var judgeVars = []string{"input", "output", "expected_output", "metadata"}

// judgeScale is what a judge may answer: a number from lo to hi, one of labels, or pass/fail.
type judgeScale struct {
	dataType string
	lo, hi   float64
	labels   []string
}

// checkJudge checks an llm_judge config and returns the data type of its scores: the score
// config's (when there is one), else config.score_type (default boolean). A numeric judge
// scores within the score config's min and max, else config.min and config.max (default 0 and
// 1); a categorical one picks among the score config's labels, else config.labels.
func checkJudge(cfg domain.JSONObject, c *domain.ScoreConfig) (string, error) {
	if err := (kind{options: judgeOptions}).checkConfig(cfg); err != nil {
		return "", err
	}
	if strings.TrimSpace(cfg["model"].(string)) == "" {
		return "", &store.ValidationError{Field: "config.model", Message: "must name a model, e.g. gpt-4o-mini"}
	}
	t, err := prompttmpl.Parse(cfg["prompt"].(string))
	if err != nil {
		return "", &store.ValidationError{Field: "config.prompt", Message: err.Error()}
	}
	for _, v := range t.Variables() {
		if root, _, _ := strings.Cut(v, "."); !slices.Contains(judgeVars, root) {
			return "", &store.ValidationError{Field: "config.prompt", Message: fmt.Sprintf("uses {{%s}}; a judge's prompt may use %s", v, strings.Join(judgeVars, ", "))}
		}
	}
	s, err := scaleOf(cfg, c)
	if err != nil {
		return "", err
	}
	return s.dataType, nil
}

// scaleOf is what a judge of this config may answer.
func scaleOf(cfg domain.JSONObject, c *domain.ScoreConfig) (*judgeScale, error) {
	st, _ := cfg["score_type"].(string)
	s := &judgeScale{dataType: st, lo: 0, hi: 1}
	if c != nil {
		if st != "" && st != c.DataType {
			return nil, &store.ValidationError{Field: "config.score_type", Message: fmt.Sprintf("score config %s is %s; leave score_type out or make it %s", c.Name, c.DataType, c.DataType)}
		}
		s.dataType = c.DataType
	}
	if s.dataType == "" {
		s.dataType = domain.ScoreBoolean
	}
	switch s.dataType {
	case domain.ScoreNumeric:
		if lo, ok := cfg["min"].(float64); ok {
			s.lo = lo
		}
		if hi, ok := cfg["max"].(float64); ok {
			s.hi = hi
		}
		if c != nil && c.Min != nil {
			s.lo = *c.Min
		}
		if c != nil && c.Max != nil {
			s.hi = *c.Max
		}
		if s.lo >= s.hi {
			return nil, &store.ValidationError{Field: "config.max", Message: fmt.Sprintf("must be above min (%g), got %g", s.lo, s.hi)}
		}
	case domain.ScoreCategorical:
		if c != nil {
			for _, cat := range c.Categories {
				s.labels = append(s.labels, cat.Label)
			}
		} else if l, ok := cfg["labels"].([]any); ok {
			for _, v := range l {
				s.labels = append(s.labels, v.(string))
			}
		}
		if len(s.labels) < 2 {
			return nil, &store.ValidationError{Field: "config.labels", Message: "a categorical judge needs at least two labels (or a categorical score config)"}
		}
	case domain.ScoreBoolean:
	default:
		return nil, &store.ValidationError{Field: "config.score_type", Message: fmt.Sprintf("must be one of %s, got %q", strings.Join(domain.ScoreDataTypes, ", "), s.dataType)}
	}
	return s, nil
}

// schema is the JSON Schema of the judge's answer: reasoning first (the model explains before
// it decides), then the score.
func (s *judgeScale) schema() json.RawMessage {
	score := map[string]any{"type": "string", "enum": []string{"pass", "fail"}}
	switch s.dataType {
	case domain.ScoreNumeric:
		score = map[string]any{"type": "number", "minimum": s.lo, "maximum": s.hi}
	case domain.ScoreCategorical:
		score = map[string]any{"type": "string", "enum": s.labels}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "additionalProperties": false, "required": []string{"reasoning", "score"},
		"properties": map[string]any{"reasoning": map[string]any{"type": "string"}, "score": score}})
	return b
}

// instructions tell the judge how to answer.
func (s *judgeScale) instructions() string {
	var what string
	switch s.dataType {
	case domain.ScoreNumeric:
		what = fmt.Sprintf("a number from %g (worst) to %g (best)", s.lo, s.hi)
	case domain.ScoreCategorical:
		what = "exactly one of: " + strings.Join(s.labels, ", ")
	default:
		what = `"pass" or "fail"`
	}
	return "You are an evaluator judging the output of an AI agent. Follow the instructions of the user's message and answer with JSON only: " +
		`"reasoning", one to three sentences on why, then "score", ` + what + "."
}

// runJudge renders the prompt, asks the model and reads its answer.
func runJudge(ctx context.Context, st *store.Store, judge JudgeFunc, e *domain.Evaluator, c Case) (*verdict, error) {
	var sc *domain.ScoreConfig
	if e.ScoreConfigID != nil {
		var err error
		if sc, err = st.ScoreConfigGet(ctx, e.WorkspaceID, *e.ScoreConfigID); err != nil {
			return nil, err
		}
	}
	scale, err := scaleOf(e.Config, sc)
	if err != nil {
		return nil, err
	}
	t, err := prompttmpl.Parse(e.Config["prompt"].(string))
	if err != nil {
		return nil, err
	}
	prompt, err := t.Render(map[string]any{"input": jsonVar(c.Input), "output": Text(c.Output), "expected_output": Text(c.ExpectedOutput),
		"metadata": jsonVar(c.Metadata)})
	if err != nil {
		return nil, &store.ValidationError{Field: "config.prompt", Message: err.Error()}
	}
	model := e.Config["model"].(string)
	reply, err := judge(ctx, runtime.JudgeRequest{Workspace: e.WorkspaceID, Model: model, Schema: scale.schema(),
		Name: "eval " + e.Name, Metadata: domain.JSONObject{"evaluator_id": e.ID},
		Messages: []llm.Message{{Role: "system", Content: scale.instructions()}, {Role: "user", Content: prompt}}})
	if err != nil {
		return nil, err
	}
	v, err := scale.read(model, reply.Content)
	if err != nil {
		return nil, err
	}
	v.usage, v.cost, v.traceID = reply.TokenUsage, reply.Cost, &reply.TraceID
	return v, nil
}

// read parses the judge's answer; one that is not of the schema is a *runtime.ModelError.
func (s *judgeScale) read(model, content string) (*verdict, error) {
	var a struct {
		Reasoning string          `json:"reasoning"`
		Score     json.RawMessage `json:"score"`
	}
	bad := func(why string) error {
		return &runtime.ModelError{Message: fmt.Sprintf("judge model %s answered %s: %s", model, quoteShort(content), why)}
	}
	if err := json.Unmarshal([]byte(content), &a); err != nil || len(a.Score) == 0 {
		return nil, bad(`not a JSON object with "reasoning" and "score"`)
	}
	v := &verdict{comment: a.Reasoning}
	var label string
	switch s.dataType {
	case domain.ScoreNumeric:
		var n float64
		if json.Unmarshal(a.Score, &n) != nil || n < s.lo || n > s.hi {
			return nil, bad(fmt.Sprintf("the score must be a number from %g to %g", s.lo, s.hi))
		}
		v.value = &n
		return v, nil
	case domain.ScoreCategorical:
		if json.Unmarshal(a.Score, &label) != nil || !slices.Contains(s.labels, label) {
			return nil, bad("the score must be one of " + strings.Join(s.labels, ", "))
		}
		v.label = &label
		return v, nil
	}
	if json.Unmarshal(a.Score, &label) != nil || (label != "pass" && label != "fail") {
		return nil, bad(`the score must be "pass" or "fail"`)
	}
	n := 0.0
	if label == "pass" {
		n = 1
	}
	v.value = &n
	return v, nil
}

// jsonVar makes a JSON object usable both by field ({{input.message}}) and whole ({{input}}
// renders as JSON text: Mustache prints a value through fmt, which calls String).
func jsonVar(m map[string]any) any {
	if m == nil {
		return ""
	}
	return jsonText(m)
}

type jsonText map[string]any

func (o jsonText) String() string {
	b, _ := json.Marshal(map[string]any(o))
	return string(b)
}
