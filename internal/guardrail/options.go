package guardrail

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Option describes one config option of a scanner type: the catalog shows it and NewScanner
// checks configs against it.
type Option struct {
	Name        string `json:"name"`
	Type        string `json:"type" enum:"boolean,integer,number,string,string_list,object,json_schema"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	// Default is used when the option is left out; nil when there is none.
	Default any      `json:"default,omitempty"`
	Enum    []string `json:"enum,omitempty" doc:"Allowed values of a string, or of each item of a string_list."`
	Minimum *float64 `json:"minimum,omitempty"`
	Maximum *float64 `json:"maximum,omitempty"`
	MaxLen  int      `json:"max_items,omitempty" doc:"Most items a string_list or object may hold."`
}

// ConfigError says a scanner config is not acceptable. Option is the path inside the config
// ("threshold", "patterns[2]"); empty when the scanner type itself is unknown.
type ConfigError struct {
	Option  string
	Message string
}

func (e *ConfigError) Error() string {
	if e.Option == "" {
		return e.Message
	}
	return e.Option + ": " + e.Message
}

func configErr(option, format string, args ...any) error {
	return &ConfigError{Option: option, Message: fmt.Sprintf(format, args...)}
}

func num(f float64) *float64 { return &f }

// values is a config checked against its options, with defaults filled in. Integers are int,
// numbers float64, string lists []string and objects map[string]any.
type values map[string]any

func (v values) str(k string) string {
	s, _ := v[k].(string)
	return s
}

func (v values) boolean(k string) bool {
	b, _ := v[k].(bool)
	return b
}

func (v values) integer(k string) int {
	n, _ := v[k].(int)
	return n
}

func (v values) number(k string) float64 {
	f, _ := v[k].(float64)
	return f
}

func (v values) strings(k string) []string {
	l, _ := v[k].([]string)
	return l
}

func (v values) object(k string) map[string]any {
	m, _ := v[k].(map[string]any)
	return m
}

// parseOptions checks config against opts: no unknown keys, the right JSON types, enums and
// ranges, required options present.
func parseOptions(opts []Option, config map[string]any) (values, error) {
	known := map[string]Option{}
	names := make([]string, 0, len(opts))
	for _, o := range opts {
		known[o.Name] = o
		names = append(names, o.Name)
	}
	keys := make([]string, 0, len(config))
	for k := range config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := values{}
	for _, k := range keys {
		o, ok := known[k]
		if !ok {
			return nil, configErr(k, "is not an option of this scanner; options are %s", strings.Join(names, ", "))
		}
		if config[k] == nil {
			continue // null means "use the default"
		}
		v, err := o.parse(config[k])
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	for _, o := range opts {
		if _, ok := out[o.Name]; ok {
			continue
		}
		if o.Required {
			return nil, configErr(o.Name, "is required")
		}
		if o.Default != nil {
			out[o.Name] = o.Default
		}
	}
	return out, nil
}

func (o Option) parse(raw any) (any, error) {
	switch o.Type {
	case "boolean":
		b, ok := raw.(bool)
		if !ok {
			return nil, configErr(o.Name, "must be a boolean, got %s", jsonType(raw))
		}
		return b, nil
	case "integer", "number":
		f, ok := toFloat(raw)
		if !ok {
			return nil, configErr(o.Name, "must be a %s, got %s", o.Type, jsonType(raw))
		}
		if o.Type == "integer" && f != math.Trunc(f) {
			return nil, configErr(o.Name, "must be a whole number, got %v", f)
		}
		if o.Minimum != nil && f < *o.Minimum {
			return nil, configErr(o.Name, "must be at least %v, got %v", *o.Minimum, f)
		}
		if o.Maximum != nil && f > *o.Maximum {
			return nil, configErr(o.Name, "must be at most %v, got %v", *o.Maximum, f)
		}
		if o.Type == "integer" {
			return int(f), nil
		}
		return f, nil
	case "string":
		s, ok := raw.(string)
		if !ok {
			return nil, configErr(o.Name, "must be a string, got %s", jsonType(raw))
		}
		if len(o.Enum) > 0 && !slices.Contains(o.Enum, s) {
			return nil, configErr(o.Name, "must be one of %s, got %q", strings.Join(o.Enum, ", "), s)
		}
		return s, nil
	case "string_list":
		return o.parseList(raw)
	case "object":
		m, ok := raw.(map[string]any)
		if !ok {
			return nil, configErr(o.Name, "must be an object, got %s", jsonType(raw))
		}
		if o.MaxLen > 0 && len(m) > o.MaxLen {
			return nil, configErr(o.Name, "must hold at most %d entries", o.MaxLen)
		}
		return m, nil
	case "json_schema":
		switch raw.(type) {
		case map[string]any, bool:
			return raw, nil
		}
		return nil, configErr(o.Name, "must be a JSON Schema (an object or a boolean), got %s", jsonType(raw))
	}
	return nil, fmt.Errorf("guardrail: option %s has unknown type %s", o.Name, o.Type)
}

func (o Option) parseList(raw any) ([]string, error) {
	var items []any
	switch l := raw.(type) {
	case []any:
		items = l
	case []string:
		for _, s := range l {
			items = append(items, s)
		}
	default:
		return nil, configErr(o.Name, "must be an array of strings, got %s", jsonType(raw))
	}
	if o.MaxLen > 0 && len(items) > o.MaxLen {
		return nil, configErr(o.Name, "must hold at most %d items", o.MaxLen)
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, configErr(fmt.Sprintf("%s[%d]", o.Name, i), "must be a string, got %s", jsonType(it))
		}
		if len(o.Enum) > 0 && !slices.Contains(o.Enum, s) {
			return nil, configErr(fmt.Sprintf("%s[%d]", o.Name, i), "must be one of %s, got %q", strings.Join(o.Enum, ", "), s)
		}
		out = append(out, s)
	}
	return out, nil
}

// stringList reads a JSON array of strings inside an object option, naming path on failure.
func stringList(path string, raw any, maxItems int) ([]string, error) {
	return Option{Name: path, Type: "string_list", MaxLen: maxItems}.parseList(raw)
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64, int, int64:
		return "a number"
	case string:
		return "a string"
	case []any, []string:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
