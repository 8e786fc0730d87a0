// Package datasource runs read-only queries against a workspace's data sources: its version
// config, the Executor seam with its two implementations (Live, which connects to PostgreSQL,
// MySQL/MariaDB, SQLite and HTTP sources on `serve`, and Sample, which answers the emulator from
// generated sample tables in an in-memory SQLite), and the mapping of results to JSON.
package datasource

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/jsonfields"
)

// Types lists the kinds of data source.
var Types = []string{"postgres", "mysql", "sqlite", "http"}

// Defaults and bounds of a version config.
const (
	// DefaultMaxRows bounds a query's rows when the config sets no max_rows.
	DefaultMaxRows = 1000
	// MaxMaxRows is the largest max_rows (and table row_count) a config may ask for.
	MaxMaxRows = 100000
	// DefaultMaxBytes bounds a result (SQL: the JSON size of its rows; http: the response
	// body) when the config sets no max_bytes.
	DefaultMaxBytes = 1 << 20
	// MaxMaxBytes is the largest max_bytes a config may ask for.
	MaxMaxBytes = 64 << 20
	// DefaultMaxExecutionMS is the statement timeout the database enforces when the config
	// sets no max_execution_ms.
	DefaultMaxExecutionMS = 10000
	// DefaultHTTPTimeoutMS bounds an http source's request when the config sets no timeout_ms.
	DefaultHTTPTimeoutMS = 10000
	// maxTimeoutMS is the largest timeout_ms or max_execution_ms a config may ask for.
	maxTimeoutMS = 600000
	// connectGraceMS is how much longer than max_execution_ms a SQL query may take in all
	// (connecting, reading rows) when the config sets no timeout_ms.
	connectGraceMS = 5000
)

// DefaultTableRows is how many rows a sample table has when its config says nothing.
const DefaultTableRows = 50

// defaultSampleRows is how many items a sample HTTP source returns when its config says nothing.
const defaultSampleRows = 25

// SSLModes are the values of ssl_mode, as PostgreSQL names them; MySQL sources map them to
// the driver's tls setting.
var SSLModes = []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}

// Config is a data source version's config as querying reads it.
type Config struct {
	Type string
	// Connection parts that complete or override the credential's URL (SQL sources).
	Host     string
	Port     int
	Database string
	Schema   string // PostgreSQL: the search_path of every query; the emulator: an alias of its sample tables
	Path     string // SQLite: the database file
	SSLMode  string
	// Bounds.
	MaxRows        int
	MaxBytes       int
	MaxExecutionMS int // SQL: the database's statement timeout
	TimeoutMS      int // the whole call; 0: max_execution_ms + 5 s (SQL) or DefaultHTTPTimeoutMS (http)
	// HTTP sources.
	BaseURL     string
	Method      string            // GET (default) or POST
	Headers     map[string]string // sent with every request
	QueryParams map[string]string // the config's "query": parameters added to every request
	// The emulator's sample data.
	Tables       []Table
	SampleFields []Field
	SampleRows   int
}

// Timeout is how long a whole query may take: timeout_ms, else the default for the type.
func (c *Config) Timeout() int {
	switch {
	case c.TimeoutMS > 0:
		return c.TimeoutMS
	case c.Type == "http":
		return DefaultHTTPTimeoutMS
	}
	return c.MaxExecutionMS + connectGraceMS
}

// Table describes one table of a SQL source: a sample table of the emulator (from the
// config's tables) or a table of the database's catalog (Executor.Describe).
type Table struct {
	Name     string  `json:"name"`
	Columns  []Field `json:"columns"`
	RowCount int     `json:"-"`
}

// Field is a column of a table or a field of an HTTP source's items.
type Field struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

// SQLConfigKeys and HTTPConfigKeys are the keys a data source version's config may hold, by
// type; any other key is refused, so that a typo does not vanish.
var (
	SQLConfigKeys  = []string{"host", "port", "database", "schema", "path", "ssl_mode", "read_only", "max_rows", "max_bytes", "timeout_ms", "max_execution_ms", "tables"}
	HTTPConfigKeys = []string{"base_url", "method", "headers", "query", "timeout_ms", "max_rows", "max_bytes", "sample_fields", "sample_rows"}
	tableKeys      = []string{"name", "columns", "row_count"}
	fieldKeys      = []string{"name", "type", "nullable"}
)

// ParseConfig checks a version config for a data source type and returns it. Every problem
// is a *domain.FieldError naming the key under "config".
func ParseConfig(typ string, raw map[string]any) (*Config, error) {
	c := &Config{Type: typ}
	allowed := SQLConfigKeys
	if typ == "http" {
		allowed = HTTPConfigKeys
	}
	if err := checkKeys(raw, allowed, "config"); err != nil {
		return nil, err
	}
	var err error
	ints := []struct {
		key          string
		dst          *int
		def, lo, max int
	}{
		{"max_rows", &c.MaxRows, DefaultMaxRows, 1, MaxMaxRows},
		{"max_bytes", &c.MaxBytes, DefaultMaxBytes, 1024, MaxMaxBytes},
		{"timeout_ms", &c.TimeoutMS, 0, 1, maxTimeoutMS},
		{"max_execution_ms", &c.MaxExecutionMS, DefaultMaxExecutionMS, 1, maxTimeoutMS},
		{"port", &c.Port, 0, 1, 65535},
		{"sample_rows", &c.SampleRows, defaultSampleRows, 0, MaxMaxRows},
	}
	for _, k := range ints {
		if *k.dst, err = intKey(raw, k.key, k.def, k.lo, k.max); err != nil {
			return nil, err
		}
	}
	strs := []struct {
		key string
		dst *string
		max int
	}{{"host", &c.Host, 255}, {"database", &c.Database, 255}, {"schema", &c.Schema, 255}, {"path", &c.Path, 4096}}
	for _, k := range strs {
		if *k.dst, err = stringKey(raw, k.key, k.max); err != nil {
			return nil, err
		}
	}
	if strings.ContainsAny(c.Host, "/ \t\r\n@?#") {
		return nil, domain.Invalid("config.host", "must be a host name or address, without scheme, path or credentials")
	}
	if c.SSLMode, err = stringKey(raw, "ssl_mode", 20); err != nil {
		return nil, err
	}
	if c.SSLMode != "" && !slices.Contains(SSLModes, c.SSLMode) {
		return nil, domain.Invalid("config.ssl_mode", "must be one of %s", strings.Join(SSLModes, ", "))
	}
	if v, ok := raw["read_only"]; ok && v != nil {
		if b, isBool := v.(bool); !isBool || !b {
			return nil, domain.Invalid("config.read_only", "must be true (or left out): data source queries are always read-only")
		}
	}
	if v, ok := raw["base_url"]; ok && v != nil {
		s, isStr := v.(string)
		u, perr := url.Parse(s)
		if !isStr || perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return nil, domain.Invalid("config.base_url", "must be an absolute http or https URL without credentials (put secrets in a credential)")
		}
		c.BaseURL = s
	}
	if c.Method, err = stringKey(raw, "method", 10); err != nil {
		return nil, err
	}
	switch c.Method = strings.ToUpper(c.Method); c.Method {
	case "":
		c.Method = http.MethodGet
	case http.MethodGet, http.MethodPost:
	default:
		return nil, domain.Invalid("config.method", "must be GET or POST")
	}
	if c.Headers, err = stringMap(raw, "headers", true); err != nil {
		return nil, err
	}
	if c.QueryParams, err = stringMap(raw, "query", false); err != nil {
		return nil, err
	}
	if v, ok := raw["tables"]; ok && v != nil {
		if c.Tables, err = parseTables(v); err != nil {
			return nil, err
		}
	}
	if v, ok := raw["sample_fields"]; ok && v != nil {
		if c.SampleFields, err = parseFields("config.sample_fields", v, true); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// stringKey reads an optional string key of at most max bytes, without control characters.
func stringKey(raw map[string]any, key string, max int) (string, error) {
	v, ok := raw[key]
	if !ok || v == nil {
		return "", nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", domain.Invalid("config."+key, "must be a string")
	}
	if len(s) > max {
		return "", domain.Invalid("config."+key, "must be at most %d bytes", max)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", domain.Invalid("config."+key, "must not contain control characters")
	}
	return strings.TrimSpace(s), nil
}

// stringMap reads an optional object of names to scalar values (numbers and booleans are
// written as text); with header, names must be HTTP header names.
func stringMap(raw map[string]any, key string, header bool) (map[string]string, error) {
	v, ok := raw[key]
	if !ok || v == nil {
		return nil, nil
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		return nil, domain.Invalid("config."+key, "must be an object of names to values")
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		f := "config." + key + "." + k
		if k == "" || header && !validHeaderName(k) {
			return nil, domain.Invalid(f, "is not a valid name")
		}
		var s string
		switch y := x.(type) {
		case string:
			s = y
		case float64, bool:
			s = fmt.Sprint(y)
		default:
			return nil, domain.Invalid(f, "must be a string")
		}
		if strings.ContainsAny(s, "\r\n\x00") {
			return nil, domain.Invalid(f, "must not contain line breaks or NUL")
		}
		out[k] = s
	}
	return out, nil
}

func validHeaderName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

// checkKeys refuses the first key of obj that is not allowed, naming it under prefix.
func checkKeys(obj map[string]any, allowed []string, prefix string) error {
	if err := jsonfields.CheckKeys(obj, allowed, prefix); err != nil {
		return &domain.FieldError{Field: err.Path, Message: err.Message()}
	}
	return nil
}

// intKey reads an optional integer key within [lo, hi]; JSON numbers arrive as float64.
func intKey(raw map[string]any, key string, def, lo, hi int) (int, error) {
	v, ok := raw[key]
	if !ok || v == nil {
		return def, nil
	}
	n, isInt := asInt(v)
	if !isInt || n < lo || n > hi {
		return 0, domain.Invalid("config."+key, "must be an integer from %d to %d", lo, hi)
	}
	return n, nil
}

func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1e15 {
			return 0, false
		}
		return int(x), true
	case int:
		return x, true
	case int64:
		return int(x), true
	}
	return 0, false
}

func parseTables(v any) ([]Table, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, domain.Invalid("config.tables", "must be an array of {name, columns}")
	}
	seen := map[string]bool{}
	out := make([]Table, 0, len(list))
	for i, item := range list {
		f := fmt.Sprintf("config.tables[%d]", i)
		m, ok := item.(map[string]any)
		if !ok {
			return nil, domain.Invalid(f, "must be an object with name and columns")
		}
		if err := checkKeys(m, tableKeys, f); err != nil {
			return nil, err
		}
		name, _ := m["name"].(string)
		if strings.TrimSpace(name) == "" {
			return nil, domain.Invalid(f+".name", "is required and must be a non-empty string")
		}
		if seen[strings.ToLower(name)] {
			return nil, domain.Invalid(f+".name", "table %q is listed twice", name)
		}
		seen[strings.ToLower(name)] = true
		cols, err := parseFields(f+".columns", m["columns"], false)
		if err != nil {
			return nil, err
		}
		if len(cols) == 0 {
			return nil, domain.Invalid(f+".columns", "must list at least one column")
		}
		rows, err := intKey(m, "row_count", DefaultTableRows, 0, MaxMaxRows)
		if err != nil {
			return nil, domain.Invalid(f+".row_count", "must be an integer from 0 to %d", MaxMaxRows)
		}
		out = append(out, Table{Name: name, Columns: cols, RowCount: rows})
	}
	return out, nil
}

// parseFields reads [{name, type, nullable?}]; with namesOnly, plain strings are accepted too
// and their type is guessed from the name.
func parseFields(field string, v any, namesOnly bool) ([]Field, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, domain.Invalid(field, "must be an array of {name, type}")
	}
	seen := map[string]bool{}
	out := make([]Field, 0, len(list))
	for i, item := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		var col Field
		switch x := item.(type) {
		case string:
			if !namesOnly {
				return nil, domain.Invalid(f, "must be an object with name and type")
			}
			col = Field{Name: x, Type: guessType(x)}
		case map[string]any:
			if err := checkKeys(x, fieldKeys, f); err != nil {
				return nil, err
			}
			col.Name, _ = x["name"].(string)
			col.Type, _ = x["type"].(string)
			if t, present := x["type"]; present && t != nil {
				if _, isStr := t.(string); !isStr {
					return nil, domain.Invalid(f+".type", "must be a string")
				}
			}
			if col.Type == "" {
				col.Type = guessType(col.Name)
			}
			if n, present := x["nullable"]; present && n != nil {
				b, isBool := n.(bool)
				if !isBool {
					return nil, domain.Invalid(f+".nullable", "must be a boolean")
				}
				col.Nullable = b
			}
		default:
			return nil, domain.Invalid(f, "must be an object with name and type")
		}
		if strings.TrimSpace(col.Name) == "" {
			return nil, domain.Invalid(f+".name", "is required and must be a non-empty string")
		}
		if seen[strings.ToLower(col.Name)] {
			return nil, domain.Invalid(f+".name", "%q is listed twice", col.Name)
		}
		seen[strings.ToLower(col.Name)] = true
		out = append(out, col)
	}
	return out, nil
}

// guessType picks a plausible column type from a field name.
func guessType(name string) string {
	n := strings.ToLower(name)
	switch {
	case n == "id" || strings.HasSuffix(n, "_id") || n == "stock" || n == "quantity" || strings.HasSuffix(n, "_count") || strings.HasSuffix(n, "_cents"):
		return "integer"
	case strings.HasSuffix(n, "_at") || n == "timestamp":
		return "timestamp"
	case n == "price" || n == "amount" || n == "total" || n == "rating" || strings.HasSuffix(n, "_price"):
		return "number"
	case strings.HasPrefix(n, "is_") || strings.HasPrefix(n, "has_") || n == "active" || n == "enabled":
		return "boolean"
	}
	return "string"
}
