package datasource

import (
	"errors"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	cfg, err := ParseConfig("postgres", map[string]any{
		"max_rows": float64(50),
		"tables": []any{map[string]any{"name": "t", "row_count": float64(3), "columns": []any{
			map[string]any{"name": "id", "type": "integer"}, map[string]any{"name": "note", "nullable": true},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxRows != 50 || cfg.Tables[0].RowCount != 3 || cfg.Tables[0].Columns[1].Type != "string" || !cfg.Tables[0].Columns[1].Nullable {
		t.Fatalf("parsed %+v", cfg)
	}
	if cfg, _ := ParseConfig("http", nil); cfg.MaxRows != DefaultMaxRows || cfg.SampleRows != defaultSampleRows || cfg.Method != "GET" ||
		cfg.MaxBytes != DefaultMaxBytes || cfg.Timeout() != DefaultHTTPTimeoutMS {
		t.Fatalf("defaults %+v", cfg)
	}
	if cfg, _ := ParseConfig("postgres", nil); cfg.MaxExecutionMS != DefaultMaxExecutionMS || cfg.Timeout() != DefaultMaxExecutionMS+connectGraceMS {
		t.Fatalf("SQL defaults %+v", cfg)
	}
	cfg, err = ParseConfig("postgres", map[string]any{"host": " db.internal ", "port": float64(6432), "database": "orders", "schema": "sales",
		"ssl_mode": "require", "read_only": true, "max_bytes": float64(4096), "max_execution_ms": float64(250), "timeout_ms": float64(900)})
	if err != nil || cfg.Host != "db.internal" || cfg.Port != 6432 || cfg.Database != "orders" || cfg.Schema != "sales" || cfg.SSLMode != "require" ||
		cfg.MaxBytes != 4096 || cfg.MaxExecutionMS != 250 || cfg.Timeout() != 900 {
		t.Fatalf("connection keys: %+v %v", cfg, err)
	}
	cfg, err = ParseConfig("http", map[string]any{"base_url": "https://api.example.com/v1", "method": "post",
		"headers": map[string]any{"Accept": "application/json", "X-Version": float64(2)}, "query": map[string]any{"region": "eu", "debug": false}})
	if err != nil || cfg.Method != "POST" || cfg.Headers["X-Version"] != "2" || cfg.QueryParams["debug"] != "false" {
		t.Fatalf("http keys: %+v %v", cfg, err)
	}
	bad := []struct {
		raw   map[string]any
		field string
	}{
		{map[string]any{"max_rows": float64(0)}, "config.max_rows"},
		{map[string]any{"max_rows": 1.5}, "config.max_rows"},
		{map[string]any{"max_rows": "10"}, "config.max_rows"},
		{map[string]any{"timeout_ms": float64(-1)}, "config.timeout_ms"},
		{map[string]any{"base_url": "ftp://x"}, "config.base_url"},
		{map[string]any{"tables": "customers"}, "config.tables"},
		{map[string]any{"tables": []any{map[string]any{"columns": []any{}}}}, "config.tables[0].name"},
		{map[string]any{"tables": []any{map[string]any{"name": "t"}}}, "config.tables[0].columns"},
		{map[string]any{"tables": []any{map[string]any{"name": "t", "columns": []any{}}}}, "config.tables[0].columns"},
		{map[string]any{"tables": []any{map[string]any{"name": "t", "columns": []any{"id"}}}}, "config.tables[0].columns[0]"},
		{map[string]any{"tables": []any{map[string]any{"name": "t", "columns": []any{map[string]any{"name": "id", "type": 3}}}}}, "config.tables[0].columns[0].type"},
		{map[string]any{"tables": []any{map[string]any{"name": "t", "columns": []any{map[string]any{"name": "a"}, map[string]any{"name": "A"}}}}}, "config.tables[0].columns[1].name"},
		{map[string]any{"tables": []any{map[string]any{"name": "t", "columns": []any{map[string]any{"name": "a"}}}, map[string]any{"name": "T", "columns": []any{map[string]any{"name": "a"}}}}}, "config.tables[1].name"},
		{map[string]any{"sample_fields": []any{3}}, "config.sample_fields[0]"},
		{map[string]any{"max_row": float64(5)}, "config.max_row"},
		{map[string]any{"tables": []any{map[string]any{"name": "t", "colums": []any{}}}}, "config.tables[0].colums"},
		{map[string]any{"tables": []any{map[string]any{"name": "t", "columns": []any{map[string]any{"name": "a", "nulable": true}}}}}, "config.tables[0].columns[0].nulable"},
		{map[string]any{"sample_fields": []any{map[string]any{"name": "a", "typ": "string"}}}, "config.sample_fields[0].typ"},
		{map[string]any{"headers": map[string]any{}, "baseurl": "https://x"}, "config.baseurl"},
		{map[string]any{"read_only": false}, "config.read_only"},
		{map[string]any{"read_only": "yes"}, "config.read_only"},
		{map[string]any{"max_bytes": float64(10)}, "config.max_bytes"},
		{map[string]any{"max_execution_ms": float64(0)}, "config.max_execution_ms"},
		{map[string]any{"port": float64(70000)}, "config.port"},
		{map[string]any{"host": "db.example.com/x"}, "config.host"},
		{map[string]any{"host": 5}, "config.host"},
		{map[string]any{"ssl_mode": "sometimes"}, "config.ssl_mode"},
		{map[string]any{"schema": "a\nb"}, "config.schema"},
		{map[string]any{"base_url": "https://user:pw@api.example.com"}, "config.base_url"},
		{map[string]any{"base_url": "https://x", "method": "DELETE"}, "config.method"},
		{map[string]any{"base_url": "https://x", "headers": map[string]any{"Bad Header": "x"}}, "config.headers.Bad Header"},
		{map[string]any{"base_url": "https://x", "headers": map[string]any{"X-A": "a\r\nb"}}, "config.headers.X-A"},
		{map[string]any{"base_url": "https://x", "headers": []any{"x"}}, "config.headers"},
		{map[string]any{"base_url": "https://x", "query": map[string]any{"a": []any{1}}}, "config.query.a"},
	}
	for _, b := range bad {
		typ := "postgres"
		if _, http := b.raw["sample_fields"]; http || b.raw["base_url"] != nil || b.raw["headers"] != nil {
			typ = "http"
		}
		_, err := ParseConfig(typ, b.raw)
		var fe *domain.FieldError
		if !errors.As(err, &fe) || fe.Field != b.field {
			t.Errorf("%v: got %v, want a domain.FieldError on %s", b.raw, err, b.field)
		}
	}
}
