package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"github.com/agentplane/agentplane/internal/domain"
)

// agreementValue is one score in the comparison: its number and its label.
type agreementValue struct {
	dataType string
	value    *float64
	label    *string
}

// key is what two scores must share to agree: the label of a category, else the number.
func (v agreementValue) key() string {
	if v.dataType == domain.ScoreCategorical && v.label != nil {
		return "l:" + *v.label
	}
	if v.value != nil {
		return fmt.Sprintf("v:%g", *v.value)
	}
	return ""
}

// ScoreAgreementOf compares the newest score named judge with the newest named human on every
// execution of the workspace that has both, among the scores created in the window (zero
// bounds are open). The two names must hold the same data type (a *ValidationError
// otherwise).
func (s *Store) ScoreAgreementOf(ctx context.Context, ws, judge, human string, after, before domain.Time) (*domain.ScoreAgreement, error) {
	f := domain.ScoreFilter{CreatedAfter: after, CreatedBefore: before}
	latest := map[string]map[string]agreementValue{judge: {}, human: {}}
	for _, name := range []string{judge, human} {
		f.Name = name
		where, args := scoreFilterClause(f, ws)
		// Oldest first, so the newest score of an execution is the one kept.
		q := "SELECT execution_id, data_type, value, string_value FROM scores" + where +
			" AND execution_id IS NOT NULL ORDER BY created_at, id"
		err := s.scanRows(ctx, q, args, func(rows *sql.Rows) error {
			var eid string
			var v agreementValue
			if err := rows.Scan(&eid, &v.dataType, &v.value, &v.label); err != nil {
				return err
			}
			latest[name][eid] = v
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read %s scores: %w", name, err)
		}
	}
	var pairs [][2]agreementValue
	for eid, j := range latest[judge] {
		if h, ok := latest[human][eid]; ok {
			pairs = append(pairs, [2]agreementValue{j, h})
		}
	}
	return agreement(judge, human, pairs)
}

// agreement computes the statistics of ScoreAgreement from the pairs of (judge, human) scores.
func agreement(judge, human string, pairs [][2]agreementValue) (*domain.ScoreAgreement, error) {
	out := &domain.ScoreAgreement{Judge: judge, Human: human, Count: len(pairs)}
	if len(pairs) == 0 {
		return out, nil
	}
	dt := pairs[0][0].dataType
	for _, p := range pairs {
		if p[0].dataType != dt || p[1].dataType != dt {
			return nil, &ValidationError{Field: "human", Message: fmt.Sprintf("scores %q and %q must have the same data type to compare; found %s and %s",
				judge, human, p[0].dataType, p[1].dataType)}
		}
	}
	out.DataType = &dt
	n := float64(len(pairs))
	agree := 0
	for _, p := range pairs {
		if p[0].key() == p[1].key() {
			agree++
		}
	}
	po := float64(agree) / n
	out.ExactAgreement = &po
	if dt != domain.ScoreNumeric {
		// Cohen's kappa: agreement beyond what the two marginal distributions give by chance.
		pj, ph := map[string]float64{}, map[string]float64{}
		for _, p := range pairs {
			pj[p[0].key()] += 1 / n
			ph[p[1].key()] += 1 / n
		}
		pe := 0.0
		for k, v := range pj {
			pe += v * ph[k]
		}
		if pe < 1-1e-12 {
			k := (po - pe) / (1 - pe)
			out.Kappa = &k
		}
		return out, nil
	}
	var sx, sy, sxx, syy, sxy, sad float64
	for _, p := range pairs {
		x, y := *p[0].value, *p[1].value
		sx, sy, sxx, syy, sxy, sad = sx+x, sy+y, sxx+x*x, syy+y*y, sxy+x*y, sad+math.Abs(x-y)
	}
	mad := sad / n
	out.MeanAbsoluteDifference = &mad
	cov, vx, vy := sxy-sx*sy/n, sxx-sx*sx/n, syy-sy*sy/n
	if len(pairs) >= 2 && vx > 1e-12 && vy > 1e-12 {
		r := cov / math.Sqrt(vx*vy)
		out.Pearson = &r
	}
	return out, nil
}
