package mcpspec

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/agentplane/agentplane/internal/store"
)

func TestTemplatesAreValidConfigurations(t *testing.T) {
	all, err := Templates("")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 10 {
		t.Fatalf("%d templates", len(all))
	}
	slug := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	seen := map[string]bool{}
	for _, tp := range all {
		if !slug.MatchString(tp.ID) || seen[tp.ID] {
			t.Errorf("template id %q is not a unique slug", tp.ID)
		}
		seen[tp.ID] = true
		if tp.Name == "" || tp.Description == "" || tp.Homepage == "" || len(tp.Tools) == 0 {
			t.Errorf("%s: incomplete", tp.ID)
		}
		for _, tool := range tp.Tools {
			if tool.Description == "" || len(tool.InputSchema) == 0 {
				t.Errorf("%s.%s: needs a description and an input schema", tp.ID, tool.Name)
			}
		}
		// No credential is set, so Validate never needs the store.
		cfg := &store.MCPTool{Name: tp.Name, Description: tp.Description, Transport: tp.Transport, Command: tp.Command,
			Args: tp.Args, URL: tp.URL, Tools: tp.Tools}
		if err := Validate(context.Background(), nil, "ws", cfg); err != nil {
			t.Errorf("%s: %v", tp.ID, err)
		}
	}
}

func TestTemplatesQuery(t *testing.T) {
	for q, want := range map[string]int{"": 12, "GITHUB": 1, "reference server": 9, "zzz": 0} {
		got, err := Templates(q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != want {
			t.Errorf("Templates(%q): %d, want %d", q, len(got), want)
		}
	}
}

func TestValidateNamesTheField(t *testing.T) {
	ok := func() *store.MCPTool {
		return &store.MCPTool{Name: "x", Transport: "stdio", Command: "npx", Tools: []store.MCPToolDef{
			{Name: "a", InputSchema: []byte(`{"type":"object"}`)}, {Name: "b.c-d_e"}, {Name: "f", InputSchema: []byte(`null`)}}}
	}
	for _, c := range []struct {
		name  string
		edit  func(t *store.MCPTool)
		field string
	}{
		{"name", func(t *store.MCPTool) { t.Name = "" }, "name"},
		{"transport", func(t *store.MCPTool) { t.Transport = "grpc" }, "transport"},
		{"command", func(t *store.MCPTool) { t.Command = " " }, "command"},
		{"multi-line command", func(t *store.MCPTool) { t.Command = "npx\nrm -rf /" }, "command"},
		{"url on stdio", func(t *store.MCPTool) { t.URL = "https://x.example" }, "url"},
		{"nul in arg", func(t *store.MCPTool) { t.Args = store.Strings{"ok", "a\x00b"} }, "args[1]"},
		{"args on http", func(t *store.MCPTool) {
			t.Transport, t.Command, t.URL, t.Args = "http", "", "https://x.example", store.Strings{"-y"}
		}, "args"},
		{"credentials in url", func(t *store.MCPTool) { t.Transport, t.Command, t.URL = "http", "", "https://user:pw@x.example/mcp" }, "url"},
		{"schemeless url", func(t *store.MCPTool) { t.Transport, t.Command, t.URL = "http", "", "x.example/mcp" }, "url"},
		{"tool name", func(t *store.MCPTool) { t.Tools[1].Name = "" }, "tools[1].name"},
		{"duplicate tool", func(t *store.MCPTool) { t.Tools[2].Name = "a" }, "tools[2].name"},
		{"schema array", func(t *store.MCPTool) { t.Tools[0].InputSchema = []byte(`[]`) }, "tools[0].input_schema"},
		{"schema type", func(t *store.MCPTool) { t.Tools[0].InputSchema = []byte(`{"type":"array"}`) }, "tools[0].input_schema"},
		{"schema remote ref", func(t *store.MCPTool) { t.Tools[0].InputSchema = []byte(`{"$ref":"https://example.com/s.json"}`) }, "tools[0].input_schema"},
	} {
		cfg := ok()
		c.edit(cfg)
		err := Validate(context.Background(), nil, "ws", cfg)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%s: error %v, want one on %s", c.name, err, c.field)
		}
	}
	if err := Validate(context.Background(), nil, "ws", ok()); err != nil {
		t.Fatal(err)
	}
}
