// Package mcpspec knows what an MCP server configuration must look like: the rules shared by
// the API and the seed loader, and the built-in catalog of templates for commonly used
// servers.
package mcpspec

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/schemacheck"
	"github.com/agentplane/agentplane/internal/store"
)

// Limits on an MCP server configuration.
const (
	MaxNameLen        = 200
	MaxDescriptionLen = 2000
	MaxCommandLen     = 1000
	MaxArgs           = 100
	MaxArgLen         = 4096
	MaxEnv            = 50
	MaxURLLen         = 2048
	MaxTools          = 200
	MaxToolDescLen    = 10_000
)

// envNameRe is the form of an environment variable's name.
var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// toolNameRe is the MCP tool name format: 1 to 128 letters, digits, '_', '-' or '.'.
var toolNameRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// NormalizeTransport returns the stored name of a transport given on input: "" (the
// default) and "http" (the name before the SSE transport existed) are streamable_http.
func NormalizeTransport(t string) string {
	if t == "" || t == "http" {
		return "streamable_http"
	}
	return t
}

// Validate checks an MCP server configuration before it is saved (its tools apart: see
// ValidateTools). Errors are *store.ValidationError or *store.ReferenceError naming the
// field, e.g. "url" or "credential_id".
func Validate(ctx context.Context, st Store, ws string, t *domain.MCPTool) error {
	switch {
	case strings.TrimSpace(t.Name) == "":
		return domain.Invalid("name", "is required and must not be empty")
	case len([]rune(t.Name)) > MaxNameLen:
		return domain.Invalid("name", "must be at most %d characters", MaxNameLen)
	case len([]rune(t.Description)) > MaxDescriptionLen:
		return domain.Invalid("description", "must be at most %d characters", MaxDescriptionLen)
	case !slices.Contains(domain.MCPTransports, t.Transport):
		return domain.Invalid("transport", "must be one of %s, got %q", strings.Join(domain.MCPTransports, ", "), t.Transport)
	}
	if err := validateTransport(t); err != nil {
		return err
	}
	if t.CredentialID != nil && *t.CredentialID != "" {
		return checkCredential(ctx, st, ws, t.Transport, *t.CredentialID)
	}
	return nil
}

// httpCredentialTypes are the credential types a server over HTTP takes: a token, sent as a
// bearer token or in a custom header. A stdio command takes any credential, in an
// environment variable.
var httpCredentialTypes = []string{"api_key", "bearer_token"}

func checkCredential(ctx context.Context, st Store, ws, transport, id string) error {
	c, err := st.CredentialGet(ctx, ws, id)
	if store.IsNotFound(err) {
		return &store.ReferenceError{Field: "credential_id", Resource: string(domain.KindCredential), ID: id}
	}
	if err != nil {
		return err
	}
	if transport != "stdio" && !slices.Contains(httpCredentialTypes, c.Type) {
		return domain.Invalid("credential_id", "credential %s is of type %s; a server over %s takes a token: one of %s",
			id, c.Type, transport, strings.Join(httpCredentialTypes, ", "))
	}
	return nil
}

// validateTransport checks that the fields of the chosen transport are set and those of the
// others are empty, so a configuration never carries a command it will not run.
func validateTransport(t *domain.MCPTool) error {
	if t.Transport == "stdio" {
		switch {
		case strings.TrimSpace(t.Command) == "":
			return domain.Invalid("command", "is required for the stdio transport")
		case len(t.Command) > MaxCommandLen:
			return domain.Invalid("command", "must be at most %d characters", MaxCommandLen)
		case strings.ContainsAny(t.Command, "\x00\r\n"):
			return domain.Invalid("command", "must be a single line")
		case t.URL != "":
			return domain.Invalid("url", "is only for the streamable_http and sse transports; leave it empty for stdio")
		case len(t.Args) > MaxArgs:
			return domain.Invalid("args", "must hold at most %d arguments", MaxArgs)
		}
		for i, a := range t.Args {
			if len(a) > MaxArgLen || strings.ContainsRune(a, 0) {
				return domain.Invalid(fmt.Sprintf("args[%d]", i), "must be at most %d characters, without NUL bytes", MaxArgLen)
			}
		}
		return validateEnv(t.Env)
	}
	switch {
	case len(t.Env) > 0:
		return domain.Invalid("env", "is only for the stdio transport; leave it empty for %s", t.Transport)
	case t.Command != "":
		return domain.Invalid("command", "is only for the stdio transport; leave it empty for %s", t.Transport)
	case len(t.Args) > 0:
		return domain.Invalid("args", "are only for the stdio transport; leave them empty for %s", t.Transport)
	case strings.TrimSpace(t.URL) == "":
		return domain.Invalid("url", "is required for the %s transport", t.Transport)
	case len(t.URL) > MaxURLLen:
		return domain.Invalid("url", "must be at most %d characters", MaxURLLen)
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return domain.Invalid("url", "is not a valid URL: %s", err.Error())
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return domain.Invalid("url", "must be an absolute http:// or https:// URL, got %q", t.URL)
	}
	if u.User != nil {
		return domain.Invalid("url", "must not carry a user name or password; link a credential instead")
	}
	return nil
}

// validateEnv checks a stdio command's variables: at most MaxEnv, names of letters, digits
// and '_' not starting with a digit, values of at most MaxArgLen characters without NUL.
func validateEnv(env domain.Env) error {
	if len(env) > MaxEnv {
		return domain.Invalid("env", "must hold at most %d variables", MaxEnv)
	}
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !envNameRe.MatchString(k) {
			return domain.Invalid("env", "%q is not a variable name (letters, digits and '_', not starting with a digit)", k)
		}
		if v := env[k]; len(v) > MaxArgLen || strings.ContainsRune(v, 0) {
			return domain.Invalid("env."+k, "must be at most %d characters, without NUL bytes", MaxArgLen)
		}
	}
	return nil
}

// ValidateTools checks the tools a server declares: names in the MCP format and unique, and
// each input_schema a JSON Schema (2020-12) of an object.
func ValidateTools(tools []domain.MCPToolDef) error {
	if len(tools) > MaxTools {
		return domain.Invalid("tools", "must hold at most %d tools", MaxTools)
	}
	seen := map[string]int{}
	for i, tool := range tools {
		f := fmt.Sprintf("tools[%d]", i)
		if !ValidToolName(tool.Name) {
			return domain.Invalid(f+".name", "must be 1 to 128 letters, digits, '_', '-' or '.', got %q", tool.Name)
		}
		if j, dup := seen[tool.Name]; dup {
			return domain.Invalid(f+".name", "tool %q is already declared by tools[%d]", tool.Name, j)
		}
		seen[tool.Name] = i
		if len([]rune(tool.Description)) > MaxToolDescLen {
			return domain.Invalid(f+".description", "must be at most %d characters", MaxToolDescLen)
		}
		if err := checkInputSchema(tool.InputSchema); err != nil {
			return domain.Invalid(f+".input_schema", "%s", err.Error())
		}
	}
	return nil
}

// ValidToolName reports whether name has the MCP tool name format: 1 to 128 letters,
// digits, '_', '-' or '.'.
func ValidToolName(name string) bool { return toolNameRe.MatchString(name) }

// checkInputSchema accepts an absent schema, or one that compiles and describes an object:
// MCP passes tool arguments as a JSON object.
func checkInputSchema(raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("must be a JSON Schema object")
	}
	if typ, ok := doc["type"]; ok && typ != "object" {
		return fmt.Errorf(`must describe an object ("type": "object"), since tool arguments are a JSON object`)
	}
	if _, err := schemacheck.Compile(raw); err != nil {
		return fmt.Errorf("is not a valid JSON Schema (2020-12): %s", err.Error())
	}
	return nil
}

// EnvVar is an environment variable a template's server reads.
type EnvVar struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Template is a ready configuration of a commonly used MCP server, with the tools it offers;
// creating an MCP tool from it usually needs only a credential or a path changed.
type Template struct {
	ID             string              `json:"id" doc:"Slug, e.g. github."`
	Name           string              `json:"name"`
	Description    string              `json:"description"`
	Transport      string              `json:"transport" enum:"streamable_http,sse,stdio"`
	Command        string              `json:"command,omitempty"`
	Args           []string            `json:"args"`
	URL            string              `json:"url,omitempty"`
	RequiredEnv    []EnvVar            `json:"required_env" doc:"Environment variables the server needs to start."`
	CredentialHint string              `json:"credential_hint,omitempty" doc:"What credential to link, if any."`
	Homepage       string              `json:"homepage"`
	Tools          []domain.MCPToolDef `json:"tools"`
}

//go:embed templates.json
var templatesJSON []byte

var loadTemplates = sync.OnceValues(func() ([]Template, error) {
	var ts []Template
	dec := json.NewDecoder(bytes.NewReader(templatesJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ts); err != nil {
		return nil, fmt.Errorf("mcp templates: %w", err)
	}
	for i := range ts { // lists are sent as [], never null
		t := &ts[i]
		if t.Args == nil {
			t.Args = []string{}
		}
		if t.RequiredEnv == nil {
			t.RequiredEnv = []EnvVar{}
		}
		if t.Tools == nil {
			t.Tools = []domain.MCPToolDef{}
		}
	}
	return ts, nil
})

// TemplateFor returns the template t was made from (shared: not to be changed), nil when
// none: one of the same transport and URL, or of the same command whose package argument
// (its first argument that is not a flag) is among t's arguments.
func TemplateFor(t *domain.MCPTool) *Template {
	all, err := loadTemplates()
	if err != nil {
		return nil
	}
	for i := range all {
		tp := &all[i]
		if tp.Transport != t.Transport {
			continue
		}
		if tp.Transport != "stdio" {
			if tp.URL == t.URL {
				return tp
			}
			continue
		}
		if tp.Command != t.Command {
			continue
		}
		for _, a := range tp.Args {
			if !strings.HasPrefix(a, "-") {
				if slices.Contains(t.Args, a) {
					return tp
				}
				break
			}
		}
	}
	return nil
}

// Templates returns the templates whose id, name or description contains query
// (case-insensitive; "" returns all), in catalog order.
func Templates(query string) ([]Template, error) {
	all, err := loadTemplates()
	if err != nil {
		return nil, err
	}
	q := strings.ToLower(strings.TrimSpace(query))
	out := make([]Template, 0, len(all))
	for _, t := range all {
		if q == "" || strings.Contains(strings.ToLower(t.ID+"\n"+t.Name+"\n"+t.Description), q) {
			out = append(out, t)
		}
	}
	return out, nil
}
