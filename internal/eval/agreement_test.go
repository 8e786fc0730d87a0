package eval

import (
	"math"
	"testing"

	"github.com/agentplane/agentplane/internal/store"
)

func labels(dt string, pairs ...[2]string) []store.ScorePair {
	out := make([]store.ScorePair, len(pairs))
	for i, p := range pairs {
		j, h := p[0], p[1]
		out[i] = store.ScorePair{ExecutionID: "x", JudgeType: dt, HumanType: dt, JudgeLabel: &j, HumanLabel: &h}
	}
	return out
}

func TestAgree(t *testing.T) {
	t.Parallel()
	near := func(got *float64, want float64) bool { return got != nil && math.Abs(*got-want) < 1e-9 }

	// The textbook example: 50 items, yes/yes 20, yes/no 5, no/yes 10, no/no 15: po 0.7, pe 0.5, kappa 0.4.
	var ps []store.ScorePair
	for _, c := range []struct {
		j, h string
		n    int
	}{{"yes", "yes", 20}, {"yes", "no", 5}, {"no", "yes", 10}, {"no", "no", 15}} {
		for range c.n {
			ps = append(ps, labels(store.ScoreCategorical, [2]string{c.j, c.h})...)
		}
	}
	a, err := Agree("judge", "human", ps)
	if err != nil || a.Count != 50 || !near(a.ExactAgreement, 0.7) || !near(a.Kappa, 0.4) || a.Pearson != nil {
		t.Fatalf("kappa: %+v %v", a, err)
	}

	// One label only: chance agrees fully, kappa is undefined.
	a, _ = Agree("j", "h", labels(store.ScoreBoolean, [2]string{"true", "true"}, [2]string{"true", "true"}))
	if a.Kappa != nil || !near(a.ExactAgreement, 1) {
		t.Fatalf("one label: %+v", a)
	}

	// Numeric: Pearson over the values.
	num := func(x, y float64) store.ScorePair {
		return store.ScorePair{JudgeType: store.ScoreNumeric, HumanType: store.ScoreNumeric, JudgeValue: &x, HumanValue: &y}
	}
	a, _ = Agree("j", "h", []store.ScorePair{num(1, 2), num(2, 4), num(3, 6), num(4, 8)})
	if !near(a.Pearson, 1) || !near(a.ExactAgreement, 0) || a.Kappa != nil {
		t.Fatalf("pearson: %+v", a)
	}
	a, _ = Agree("j", "h", []store.ScorePair{num(1, 3), num(2, 2), num(3, 1)})
	if !near(a.Pearson, -1) {
		t.Fatalf("negative pearson: %+v", a)
	}

	// Nothing to compare; two data types.
	if a, _ = Agree("j", "h", nil); a.Count != 0 || a.DataType != nil || a.ExactAgreement != nil {
		t.Fatalf("empty: %+v", a)
	}
	mixed := []store.ScorePair{num(1, 1), {ExecutionID: "x2", JudgeType: store.ScoreNumeric, HumanType: store.ScoreBoolean}}
	if _, err := Agree("j", "h", mixed); err == nil {
		t.Fatal("two data types compared")
	}
}
