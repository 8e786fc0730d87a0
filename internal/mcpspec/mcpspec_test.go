package mcpspec

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/mcpclient"
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
		cfg := &domain.MCPTool{Name: tp.Name, Description: tp.Description, Transport: tp.Transport, Command: tp.Command,
			Args: tp.Args, URL: tp.URL, Tools: tp.Tools}
		if err := Validate(context.Background(), nil, "ws", cfg); err != nil {
			t.Errorf("%s: %v", tp.ID, err)
		}
		if err := ValidateTools(cfg.Tools); err != nil {
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
	ok := func() *domain.MCPTool {
		return &domain.MCPTool{Name: "x", Transport: "stdio", Command: "npx", Tools: []domain.MCPToolDef{
			{Name: "a", InputSchema: []byte(`{"type":"object"}`)}, {Name: "b.c-d_e"}, {Name: "f", InputSchema: []byte(`null`)}}}
	}
	for _, c := range []struct {
		name  string
		edit  func(t *domain.MCPTool)
		field string
	}{
		{"name", func(t *domain.MCPTool) { t.Name = "" }, "name"},
		{"transport", func(t *domain.MCPTool) { t.Transport = "grpc" }, "transport"},
		{"command", func(t *domain.MCPTool) { t.Command = " " }, "command"},
		{"multi-line command", func(t *domain.MCPTool) { t.Command = "npx\nrm -rf /" }, "command"},
		{"url on stdio", func(t *domain.MCPTool) { t.URL = "https://x.example" }, "url"},
		{"nul in arg", func(t *domain.MCPTool) { t.Args = domain.Strings{"ok", "a\x00b"} }, "args[1]"},
		{"env name", func(t *domain.MCPTool) { t.Env = domain.Env{"OK": "1", "1BAD": "x"} }, "env"},
		{"nul in env", func(t *domain.MCPTool) { t.Env = domain.Env{"TEAM": "T\x00"} }, "env.TEAM"},
		{"env on sse", func(t *domain.MCPTool) {
			t.Transport, t.Command, t.URL, t.Env = "sse", "", "https://x.example", domain.Env{"A": "b"}
		}, "env"},
		{"args on sse", func(t *domain.MCPTool) {
			t.Transport, t.Command, t.URL, t.Args = "sse", "", "https://x.example", domain.Strings{"-y"}
		}, "args"},
		{"command on streamable_http", func(t *domain.MCPTool) { t.Transport, t.URL = "streamable_http", "https://x.example" }, "command"},
		{"no url", func(t *domain.MCPTool) { t.Transport, t.Command = "sse", "" }, "url"},
		{"http is not stored", func(t *domain.MCPTool) { t.Transport, t.Command, t.URL = "http", "", "https://x.example/mcp" }, "transport"},
		{"credentials in url", func(t *domain.MCPTool) {
			t.Transport, t.Command, t.URL = "streamable_http", "", "https://user:pw@x.example/mcp"
		}, "url"},
		{"schemeless url", func(t *domain.MCPTool) { t.Transport, t.Command, t.URL = "sse", "", "x.example/mcp" }, "url"},
		{"tool name", func(t *domain.MCPTool) { t.Tools[1].Name = "" }, "tools[1].name"},
		{"duplicate tool", func(t *domain.MCPTool) { t.Tools[2].Name = "a" }, "tools[2].name"},
		{"schema array", func(t *domain.MCPTool) { t.Tools[0].InputSchema = []byte(`[]`) }, "tools[0].input_schema"},
		{"schema type", func(t *domain.MCPTool) { t.Tools[0].InputSchema = []byte(`{"type":"array"}`) }, "tools[0].input_schema"},
		{"schema remote ref", func(t *domain.MCPTool) { t.Tools[0].InputSchema = []byte(`{"$ref":"https://example.com/s.json"}`) }, "tools[0].input_schema"},
	} {
		cfg := ok()
		c.edit(cfg)
		err := Validate(context.Background(), nil, "ws", cfg)
		if err == nil {
			err = ValidateTools(cfg.Tools)
		}
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%s: error %v, want one on %s", c.name, err, c.field)
		}
	}
	if err := Validate(context.Background(), nil, "ws", ok()); err != nil {
		t.Fatal(err)
	}
	if err := ValidateTools(ok().Tools); err != nil {
		t.Fatal(err)
	}
}

func TestNormalizeTransport(t *testing.T) {
	for in, want := range map[string]string{"": "streamable_http", "http": "streamable_http", "sse": "sse", "stdio": "stdio", "grpc": "grpc"} {
		if got := NormalizeTransport(in); got != want {
			t.Errorf("NormalizeTransport(%q) = %q, want %q", in, got, want)
		}
	}
	if !slices.Equal(domain.MCPTransports, mcpclient.Transports) {
		t.Errorf("stored transports %v, the client speaks %v", domain.MCPTransports, mcpclient.Transports)
	}
}

// packageRe is an npm (@scope/name) or PyPI package name, with an optional @version.
var packageRe = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*(@[a-z0-9.^~-]+)?$`)

// TestTemplatesReachTheirServers checks each template against its transport: an HTTP one
// names an https endpoint and a transport the client speaks; a stdio one runs its package
// with npx or uvx the way those tools run a server non-interactively (npx -y <package>:
// without -y, npx asks on the server's stdin whether to install it, and the session hangs).
func TestTemplatesReachTheirServers(t *testing.T) {
	all, err := Templates("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range all {
		if !slices.Contains(mcpclient.Transports, tp.Transport) {
			t.Errorf("%s: transport %q is not one the client speaks", tp.ID, tp.Transport)
			continue
		}
		switch tp.Transport {
		case mcpclient.StreamableHTTP, mcpclient.SSE:
			u, err := url.Parse(tp.URL)
			if err != nil || u.Scheme != "https" || u.Host == "" || tp.Command != "" || len(tp.Args) > 0 {
				t.Errorf("%s: an HTTP server needs an https URL and no command: %q %q %q", tp.ID, tp.URL, tp.Command, tp.Args)
			}
		case mcpclient.Stdio:
			var pkg string
			switch {
			case tp.Command == "npx" && len(tp.Args) >= 2 && tp.Args[0] == "-y":
				pkg = tp.Args[1]
			case tp.Command == "uvx" && len(tp.Args) >= 1:
				pkg = tp.Args[0]
			default:
				t.Errorf("%s: runs %q %q; want npx -y <package> or uvx <package>", tp.ID, tp.Command, tp.Args)
				continue
			}
			if !packageRe.MatchString(pkg) || tp.URL != "" {
				t.Errorf("%s: package %q (url %q)", tp.ID, pkg, tp.URL)
			}
		}
		// A record made from the template is recognised as made from it (the emulator's
		// refresh answers with its tools).
		rec := &domain.MCPTool{Transport: tp.Transport, URL: tp.URL, Command: tp.Command, Args: tp.Args}
		if got := TemplateFor(rec); got == nil || got.ID != tp.ID {
			t.Errorf("%s: TemplateFor found %v", tp.ID, got)
		}
	}
	if TemplateFor(&domain.MCPTool{Transport: "stdio", Command: "npx", Args: domain.Strings{"-y", "unknown-server"}}) != nil {
		t.Error("an unknown server matched a template")
	}
}
