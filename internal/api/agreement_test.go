package api

import (
	"context"
	"testing"

	"github.com/agentplane/agentplane/client"
)

// TestScoreAgreement compares a judge's labels with a reviewer's on the emulator and on the
// server over PostgreSQL.
func TestScoreAgreement(t *testing.T) {
	t.Run("emulator", func(t *testing.T) { scoreAgreement(t, newTestEnv(t)) })
	t.Run("postgres", func(t *testing.T) { scoreAgreement(t, newTestEnvOn(t, openTestPostgres(t), false)) })
}

func scoreAgreement(t *testing.T, e *testEnv) {
	ctx := context.Background()
	a, err := e.c.AgentCreate(ctx, client.AgentCreate{Name: "Helper", Type: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	// Four runs: the judge and the reviewer agree on three; the judge changed its mind on the
	// first (the latest score counts); a fifth run has only the judge's score.
	verdicts := [][2]string{{"good", "good"}, {"bad", "bad"}, {"good", "bad"}, {"bad", "bad"}, {"good", ""}}
	for i, v := range verdicts {
		x, err := e.c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		give := func(name, label, source string) {
			if _, err := e.c.ScoreCreate(ctx, client.ScoreCreate{Name: name, DataType: "categorical", StringValue: &label, ExecutionID: &x.ID, Source: source}); err != nil {
				t.Fatal(err)
			}
		}
		if i == 0 {
			give("judge", "bad", "eval")
		}
		give("judge", v[0], "eval")
		if v[1] != "" {
			give("human", v[1], "annotation")
		}
		give("rating", "x", "api")
	}
	e.run([]scenario{
		// po 0.75; judge good 2/4, human good 1/4: pe = 0.5*0.25 + 0.5*0.75 = 0.5, kappa 0.5.
		{name: "categorical", method: "GET", path: "/api/v1/scores/agreement?judge=judge&human=human", status: 200,
			fields: map[string]any{"data.count": 4, "data.exact_agreement": 0.75, "data.kappa": 0.5, "data.pearson": nil, "data.data_type": "categorical"}},
		{name: "by source", method: "GET", path: "/api/v1/scores/agreement?judge=judge&human=human&judge_source=eval&human_source=annotation", status: 200,
			fields: map[string]any{"data.count": 4}},
		{name: "other source", method: "GET", path: "/api/v1/scores/agreement?judge=judge&human=human&human_source=api", status: 200,
			fields: map[string]any{"data.count": 0, "data.exact_agreement": nil, "data.data_type": nil}},
		{name: "unknown names", method: "GET", path: "/api/v1/scores/agreement?judge=nope&human=human", status: 200, fields: map[string]any{"data.count": 0}},
		{name: "missing human", method: "GET", path: "/api/v1/scores/agreement?judge=judge", status: 400, message: "judge and human are required"},
		{name: "bad source", method: "GET", path: "/api/v1/scores/agreement?judge=judge&human=human&judge_source=robot", status: 400, message: "judge_source"},
	})
	got, err := e.c.ScoreAgreement(ctx, client.ScoreAgreementOptions{Judge: "judge", Human: "rating"})
	if err != nil || got.Count != 5 || *got.ExactAgreement != 0 {
		t.Fatalf("judge vs rating: %+v %v", got, err)
	}
}
