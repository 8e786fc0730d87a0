// Package datasource holds what agentplane knows about querying a data source without the
// HTTP layer: the version config it reads, the read-only check of SQL and HTTP queries, and
// the emulator's generator of mock result sets.
package datasource

import (
	"fmt"
	"math"
	"net/url"
	"strings"
)

// Types lists the kinds of data source.
var Types = []string{"postgres", "mysql", "sqlite", "http"}

// DefaultMaxRows bounds a query's rows when the config sets no max_rows.
const DefaultMaxRows = 1000

// MaxMaxRows is the largest max_rows (and table row_count) a config may ask for.
const MaxMaxRows = 100000

// defaultTableRows is how many rows a mock table has when its config says nothing.
const defaultTableRows = 50

// defaultSampleRows is how many items a mock HTTP source returns when its config says nothing.
const defaultSampleRows = 25

// FieldError says a well-formed value is not acceptable; Field names it ("query",
// "config.tables[0].name", …) and Message says what is wrong.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Config is the part of a data source version's config that querying uses; other keys (host,
// port, headers, …) are kept in the stored object and ignored here.
type Config struct {
	Type         string
	MaxRows      int
	TimeoutMS    int
	BaseURL      string
	Tables       []Table
	SampleFields []Field
	SampleRows   int
}

// Table describes one table of a SQL source, for mock results.
type Table struct {
	Name     string
	Columns  []Field
	RowCount int
}

// Field is a column of a table or a field of an HTTP source's items.
type Field struct {
	Name     string
	Type     string
	Nullable bool
}

// ParseConfig checks the keys of a version config that agentplane reads and returns them.
// Every problem is a *FieldError naming the key under "config".
func ParseConfig(typ string, raw map[string]any) (*Config, error) {
	c := &Config{Type: typ, MaxRows: DefaultMaxRows}
	var err error
	if c.MaxRows, err = intKey(raw, "max_rows", DefaultMaxRows, 1, MaxMaxRows); err != nil {
		return nil, err
	}
	if c.TimeoutMS, err = intKey(raw, "timeout_ms", 0, 1, 600000); err != nil {
		return nil, err
	}
	if v, ok := raw["base_url"]; ok && v != nil {
		s, isStr := v.(string)
		u, perr := url.Parse(s)
		if !isStr || perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fieldErr("config.base_url", "must be an absolute http or https URL")
		}
		c.BaseURL = s
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
	if c.SampleRows, err = intKey(raw, "sample_rows", defaultSampleRows, 0, MaxMaxRows); err != nil {
		return nil, err
	}
	return c, nil
}

// intKey reads an optional integer key within [lo, hi]; JSON numbers arrive as float64.
func intKey(raw map[string]any, key string, def, lo, hi int) (int, error) {
	v, ok := raw[key]
	if !ok || v == nil {
		return def, nil
	}
	n, isInt := asInt(v)
	if !isInt || n < lo || n > hi {
		return 0, fieldErr("config."+key, "must be an integer from %d to %d", lo, hi)
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
		return nil, fieldErr("config.tables", "must be an array of {name, columns}")
	}
	seen := map[string]bool{}
	out := make([]Table, 0, len(list))
	for i, item := range list {
		f := fmt.Sprintf("config.tables[%d]", i)
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fieldErr(f, "must be an object with name and columns")
		}
		name, _ := m["name"].(string)
		if strings.TrimSpace(name) == "" {
			return nil, fieldErr(f+".name", "is required and must be a non-empty string")
		}
		if seen[strings.ToLower(name)] {
			return nil, fieldErr(f+".name", "table %q is listed twice", name)
		}
		seen[strings.ToLower(name)] = true
		cols, err := parseFields(f+".columns", m["columns"], false)
		if err != nil {
			return nil, err
		}
		if len(cols) == 0 {
			return nil, fieldErr(f+".columns", "must list at least one column")
		}
		rows, err := intKey(m, "row_count", defaultTableRows, 0, MaxMaxRows)
		if err != nil {
			return nil, fieldErr(f+".row_count", "must be an integer from 0 to %d", MaxMaxRows)
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
		return nil, fieldErr(field, "must be an array of {name, type}")
	}
	seen := map[string]bool{}
	out := make([]Field, 0, len(list))
	for i, item := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		var col Field
		switch x := item.(type) {
		case string:
			if !namesOnly {
				return nil, fieldErr(f, "must be an object with name and type")
			}
			col = Field{Name: x, Type: guessType(x)}
		case map[string]any:
			col.Name, _ = x["name"].(string)
			col.Type, _ = x["type"].(string)
			if t, present := x["type"]; present && t != nil {
				if _, isStr := t.(string); !isStr {
					return nil, fieldErr(f+".type", "must be a string")
				}
			}
			if col.Type == "" {
				col.Type = guessType(col.Name)
			}
			if n, present := x["nullable"]; present && n != nil {
				b, isBool := n.(bool)
				if !isBool {
					return nil, fieldErr(f+".nullable", "must be a boolean")
				}
				col.Nullable = b
			}
		default:
			return nil, fieldErr(f, "must be an object with name and type")
		}
		if strings.TrimSpace(col.Name) == "" {
			return nil, fieldErr(f+".name", "is required and must be a non-empty string")
		}
		if seen[strings.ToLower(col.Name)] {
			return nil, fieldErr(f+".name", "%q is listed twice", col.Name)
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

// tableNames lists the configured tables for messages.
func (c *Config) tableNames() string {
	if len(c.Tables) == 0 {
		return "none (add config.tables with each table's columns)"
	}
	names := make([]string, len(c.Tables))
	for i, t := range c.Tables {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}
