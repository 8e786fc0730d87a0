package runtime

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/datasource"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
)

func TestDataToolName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Customer orders DB":      "customer_orders_db",
		"  Shop -- file! ":        "shop_file",
		"ÉTÉ 2024":                "t_2024",
		"!!!":                     "source",
		strings.Repeat("ab ", 40): strings.TrimRight(strings.Repeat("ab_", 17), "_"),
	} {
		if got := dataToolName(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
		if got := "query_" + dataToolName(in); len(got) > maxToolName {
			t.Errorf("%q: %d characters", got, len(got))
		}
	}
}

// TestDescribeSource: the description lists tables and columns, bounded in size, and says
// when the catalog could not be read.
func TestDescribeSource(t *testing.T) {
	t.Parallel()
	ds := &domain.DataSource{Name: "Orders", Type: "postgres", Description: "The orders replica"}
	tables := []datasource.Table{{Name: "orders", Columns: []datasource.Field{{Name: "id", Type: "integer"}, {Name: "status", Type: "text"}}}}
	d := describeSource(ds, tables, nil)
	for _, part := range []string{`"Orders"`, "The orders replica", "$1, $2", "\n- orders(id integer, status text)"} {
		if !strings.Contains(d, part) {
			t.Errorf("description lacks %q: %s", part, d)
		}
	}
	var many []datasource.Table
	for i := range 2000 {
		many = append(many, datasource.Table{Name: fmt.Sprintf("table_%d", i), Columns: []datasource.Field{{Name: "id", Type: "bigint"}}})
	}
	d = describeSource(ds, many, nil)
	if len(d) > maxCatalogText+1000 || !strings.Contains(d, "more tables") {
		t.Errorf("%d bytes, ends %q", len(d), d[len(d)-60:])
	}
	if d = describeSource(ds, nil, errors.New("down")); !strings.Contains(d, "could not be listed") {
		t.Errorf("catalog error: %s", d)
	}
}

func TestWithMemories(t *testing.T) {
	t.Parallel()
	got := withMemories([]llm.Message{{Role: "system", Content: "Be brief."}}, "Relevant memories:\n- x")
	if len(got) != 1 || got[0].Content != "Be brief.\n\nRelevant memories:\n- x" {
		t.Errorf("%+v", got)
	}
	if got = withMemories(nil, "Relevant memories:\n- x"); len(got) != 1 || got[0].Role != "system" {
		t.Errorf("without a system prompt: %+v", got)
	}
	if got = withMemories(nil, ""); len(got) != 0 {
		t.Errorf("no memories: %+v", got)
	}
}
