// Package guardrail checks text an agent receives or produces against a guardrail's scanners
// (prompt injection, PII, secrets, toxicity, banned topics, patterns, length, JSON shape) and
// decides what happens: allow, warn, redact or block. Everything runs locally: no network
// calls and no models, so a check costs microseconds and gives the same answer every time.
//
// The API and the seed loader call Validate before saving a guardrail; the runtime compiles
// each enabled guardrail of an agent once with New and passes every input and output through
// CheckAll (or Guard.Check), acting on the outcome's Action and Output.
package guardrail

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
)

// Stage says whether text is an agent's input or its output.
type Stage string

// The stages a guardrail can run at.
const (
	StageInput  Stage = "input"
	StageOutput Stage = "output"
)

// Stages lists the stages a caller may check text at.
var Stages = []string{string(StageInput), string(StageOutput)}

// AppliesTo lists the values of a guardrail's applies_to.
var AppliesTo = []string{"input", "output", "both"}

// The actions a guardrail or one of its scanners takes when a scanner fails, and ActionAllow,
// the outcome when every scanner passes.
const (
	ActionAllow  = "allow"
	ActionWarn   = "warn"
	ActionRedact = "redact"
	ActionBlock  = "block"
)

// Actions lists the values of a guardrail's action (and of a scanner's config.action).
var Actions = []string{ActionBlock, ActionWarn, ActionRedact}

// Limits on a guardrail's definition.
const (
	MaxNameLen        = 200
	MaxDescriptionLen = 2000
	MaxScanners       = 32
)

// actionRank orders outcomes: a stronger action wins when scanners disagree.
var actionRank = map[string]int{ActionAllow: 0, ActionWarn: 1, ActionRedact: 2, ActionBlock: 3}

// Outcome is the verdict of one guardrail on one text.
type Outcome struct {
	GuardrailID string `json:"guardrail_id"`
	Name        string `json:"name"`
	Stage       Stage  `json:"stage" enum:"input,output"`
	Skipped     bool   `json:"skipped" doc:"True when the guardrail does not apply to this stage; nothing was scanned."`
	Passed      bool   `json:"passed" doc:"True when every scanner passed."`
	Action      string `json:"action" enum:"allow,warn,redact,block" doc:"What the caller must do: the strongest action among the failed scanners, or allow."`
	// Output is the text with the findings of failed redacting scanners replaced; it equals the
	// input when nothing was redacted.
	Output  string   `json:"output" doc:"The text to pass on: the input with the findings of failed redacting scanners replaced."`
	Results []Result `json:"results"`
}

// Blocked reports whether the text must not be passed on.
func (o Outcome) Blocked() bool { return o.Action == ActionBlock }

// Guard is a compiled guardrail, safe for concurrent use: compile once, check many texts.
type Guard struct {
	id, name  string
	appliesTo string
	scanners  []*guardScanner
}

type guardScanner struct {
	*Scanner
	action string // effective: the scanner's config.action or the guardrail's action
}

// New validates a guardrail and compiles its scanners. Errors are *store.ValidationError
// naming the field at fault, e.g. "scanners[1].config.threshold".
func New(g *domain.Guardrail) (*Guard, error) {
	switch {
	case strings.TrimSpace(g.Name) == "":
		return nil, domain.Invalid("name", "is required and must not be empty")
	case len([]rune(g.Name)) > MaxNameLen:
		return nil, domain.Invalid("name", "must be at most %d characters", MaxNameLen)
	case len([]rune(g.Description)) > MaxDescriptionLen:
		return nil, domain.Invalid("description", "must be at most %d characters", MaxDescriptionLen)
	case !slices.Contains(AppliesTo, g.AppliesTo):
		return nil, domain.Invalid("applies_to", "must be one of %s, got %q", strings.Join(AppliesTo, ", "), g.AppliesTo)
	case !slices.Contains(Actions, g.Action):
		return nil, domain.Invalid("action", "must be one of %s, got %q", strings.Join(Actions, ", "), g.Action)
	case len(g.Scanners) == 0:
		return nil, domain.Invalid("scanners", "a guardrail needs at least one scanner; see GET /api/v1/guardrails/scanners")
	case len(g.Scanners) > MaxScanners:
		return nil, domain.Invalid("scanners", "must hold at most %d scanners", MaxScanners)
	}
	out := &Guard{id: g.ID, name: g.Name, appliesTo: g.AppliesTo}
	for i, spec := range g.Scanners {
		field := fmt.Sprintf("scanners[%d]", i)
		sc, err := NewScanner(spec.Type, spec.Config)
		if err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) {
				if ce.Option == "" {
					return nil, domain.Invalid(field+".type", "%s", ce.Message)
				}
				return nil, domain.Invalid(field+".config."+ce.Option, "%s", ce.Message)
			}
			return nil, err
		}
		action := sc.action
		if action == "" {
			action = g.Action
		}
		if action == ActionRedact && !sc.det.redacts() {
			if sc.action == "" {
				return nil, domain.Invalid(field+".config.action", "%s cannot redact, and the guardrail's action is redact; set block or warn here", spec.Type)
			}
			return nil, domain.Invalid(field+".config.action", "%s cannot redact with this configuration; use block or warn", spec.Type)
		}
		out.scanners = append(out.scanners, &guardScanner{Scanner: sc, action: action})
	}
	return out, nil
}

// Validate checks a guardrail as New does, for callers that only save it.
func Validate(g *domain.Guardrail) error {
	_, err := New(g)
	return err
}

// Check compiles g and checks one text: a convenience for one-off checks such as the test
// endpoint; the runtime keeps the Guard from New instead.
func Check(g *domain.Guardrail, stage Stage, text string) (Outcome, error) {
	guard, err := New(g)
	if err != nil {
		return Outcome{}, err
	}
	return guard.Check(stage, text), nil
}

// Applies reports whether the guardrail runs at stage.
func (g *Guard) Applies(stage Stage) bool {
	return (stage == StageInput || stage == StageOutput) && (g.appliesTo == "both" || g.appliesTo == string(stage))
}

// Check runs every scanner on text and combines their results. It does not look at whether
// the guardrail is enabled: the caller chooses which guardrails to run.
func (g *Guard) Check(stage Stage, text string) Outcome {
	o := Outcome{GuardrailID: g.id, Name: g.name, Stage: stage, Passed: true, Action: ActionAllow, Output: text, Results: []Result{}}
	if !g.Applies(stage) {
		o.Skipped = true
		return o
	}
	var redact []span
	for _, sc := range g.scanners {
		r, spans := sc.scan(text)
		r.Action = sc.action
		if !r.Passed {
			o.Passed = false
			if actionRank[sc.action] > actionRank[o.Action] {
				o.Action = sc.action
			}
			if sc.action == ActionRedact {
				redact = append(redact, spans...)
			}
		}
		o.Results = append(o.Results, r)
	}
	if len(redact) > 0 {
		o.Output = applyRedactions(text, redact)
	}
	return o
}

// CheckAll runs an agent's guards in order at one stage, each on the text the previous one
// passed on (so redactions accumulate), and stops at the first block. It returns every outcome
// produced, the text to pass on, and whether a guard blocked it.
func CheckAll(guards []*Guard, stage Stage, text string) (outcomes []Outcome, output string, blocked bool) {
	outcomes = []Outcome{}
	for _, g := range guards {
		o := g.Check(stage, text)
		outcomes = append(outcomes, o)
		if o.Blocked() {
			return outcomes, text, true
		}
		text = o.Output
	}
	return outcomes, text, false
}
