package eval

import (
	"fmt"
	"math"

	"github.com/agentplane/agentplane/internal/store"
)

// Agreement says how far a judge's scores agree with a person's on the same executions.
type Agreement struct {
	Judge          string   `json:"judge" doc:"The judge's score name."`
	Human          string   `json:"human" doc:"The person's score name."`
	DataType       *string  `json:"data_type" doc:"numeric, categorical or boolean: the two names' data type; null when no execution has both."`
	Count          int      `json:"count" doc:"Executions scored under both names (the latest score of each name counts)."`
	ExactAgreement *float64 `json:"exact_agreement" doc:"The share of those executions where both gave the same value (numeric) or label; null when count is 0."`
	Kappa          *float64 `json:"kappa" doc:"Cohen's kappa (categorical and boolean): 1 is full agreement, 0 what chance would give; null for numeric scores, or when chance alone agrees fully (one label only)."`
	Pearson        *float64 `json:"pearson" doc:"Pearson's correlation of the values (numeric); null for other types, or with fewer than two executions or no variation."`
}

// Agree computes the agreement over pairs of scores (store.ScorePairs); pairs of two data
// types are a *store.ValidationError.
func Agree(judge, human string, pairs []store.ScorePair) (*Agreement, error) {
	a := &Agreement{Judge: judge, Human: human, Count: len(pairs)}
	if len(pairs) == 0 {
		return a, nil
	}
	dt := pairs[0].JudgeType
	for _, p := range pairs {
		if p.JudgeType != dt || p.HumanType != dt {
			return nil, &store.ValidationError{Field: "human", Message: fmt.Sprintf("scores %q and %q must be of one data type to compare; execution %s has %s and %s",
				judge, human, p.ExecutionID, p.JudgeType, p.HumanType)}
		}
	}
	a.DataType = &dt
	same := 0
	for _, p := range pairs {
		if key(p.JudgeValue, p.JudgeLabel, dt) == key(p.HumanValue, p.HumanLabel, dt) {
			same++
		}
	}
	exact := float64(same) / float64(len(pairs))
	a.ExactAgreement = &exact
	if dt == store.ScoreNumeric {
		a.Pearson = pearson(pairs)
	} else {
		a.Kappa = kappa(pairs, dt, exact)
	}
	return a, nil
}

// key is what two scores must share to agree: the label (categorical, boolean), else the value.
func key(v *float64, label *string, dt string) string {
	if dt != store.ScoreNumeric && label != nil {
		return *label
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(*v)
}

// kappa is Cohen's kappa: (observed − expected agreement) ÷ (1 − expected), the expected
// agreement being what the two raters' label frequencies give by chance.
func kappa(pairs []store.ScorePair, dt string, observed float64) *float64 {
	j, h := map[string]float64{}, map[string]float64{}
	for _, p := range pairs {
		j[key(p.JudgeValue, p.JudgeLabel, dt)]++
		h[key(p.HumanValue, p.HumanLabel, dt)]++
	}
	n := float64(len(pairs))
	expected := 0.0
	for label, c := range j {
		expected += (c / n) * (h[label] / n)
	}
	if expected >= 1 {
		return nil
	}
	k := (observed - expected) / (1 - expected)
	return &k
}

// pearson is the correlation of the pairs' values.
func pearson(pairs []store.ScorePair) *float64 {
	var xs, ys []float64
	for _, p := range pairs {
		if p.JudgeValue != nil && p.HumanValue != nil {
			xs, ys = append(xs, *p.JudgeValue), append(ys, *p.HumanValue)
		}
	}
	if len(xs) < 2 {
		return nil
	}
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	mx, my = mx/float64(len(xs)), my/float64(len(ys))
	var cov, vx, vy float64
	for i := range xs {
		cov += (xs[i] - mx) * (ys[i] - my)
		vx += (xs[i] - mx) * (xs[i] - mx)
		vy += (ys[i] - my) * (ys[i] - my)
	}
	if vx == 0 || vy == 0 {
		return nil
	}
	r := cov / math.Sqrt(vx*vy)
	return &r
}
