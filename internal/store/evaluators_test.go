package store

import (
	"context"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

func TestEvaluators(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		cfg, err := s.ScoreConfigCreate(ctx, &domain.ScoreConfig{WorkspaceID: ws, Name: "ok", DataType: domain.ScoreBoolean})
		if err != nil {
			t.Fatal(err)
		}
		e, err := s.EvaluatorCreate(ctx, &domain.Evaluator{WorkspaceID: ws, Name: "r", Type: "regex", Config: domain.JSONObject{"pattern": "a"},
			ScoreName: "ok", ScoreConfigID: &cfg.ID, DataType: domain.ScoreBoolean})
		if err != nil || *e.ScoreConfigID != cfg.ID || e.Config["pattern"] != "a" {
			t.Fatalf("create: %+v %v", e, err)
		}
		if _, err := s.EvaluatorCreate(ctx, &domain.Evaluator{WorkspaceID: ws, Name: "r", Type: "contains", ScoreName: "r", DataType: domain.ScoreBoolean}); err == nil {
			t.Fatal("duplicate name accepted")
		}
		e.Type, e.Config, e.ScoreConfigID, e.ScoreName = "contains", domain.JSONObject{"value": "x"}, nil, "has-x"
		up, err := s.EvaluatorReplace(ctx, e)
		if err != nil || up.Type != "contains" || up.ScoreConfigID != nil || up.ScoreName != "has-x" || up.Config["value"] != "x" {
			t.Fatalf("replace: %+v %v", up, err)
		}
		list, total, err := s.EvaluatorList(ctx, ws, domain.EvaluatorFilter{Type: "contains"}, domain.Page{Page: 1, Limit: 10})
		if err != nil || total != 1 || list[0].ID != e.ID {
			t.Fatalf("list: %d %v", total, err)
		}
		if _, err := s.EvaluatorDelete(ctx, ws, e.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EvaluatorGet(ctx, ws, e.ID); !IsNotFound(err) {
			t.Fatalf("after delete: %v", err)
		}
	})
}
