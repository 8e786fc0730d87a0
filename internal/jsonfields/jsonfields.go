// Package jsonfields finds the keys of a JSON document that a Go type does not know, so that a
// typo in a configuration ("temprature") is an error naming the field and the likely intended
// one, rather than a setting that silently vanishes.
package jsonfields

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Error names an unknown key by its path, with the closest known key when one is close.
type Error struct {
	Path       string // e.g. "config.steps[1].instrucion"
	Suggestion string // e.g. "instruction"; "" when nothing is close
}

func (e *Error) Error() string {
	if e.Suggestion == "" {
		return e.Path + ": unknown field"
	}
	return fmt.Sprintf("%s: unknown field; did you mean %s?", e.Path, e.Suggestion)
}

// Message is the error without its path (for errors that carry the path apart).
func (e *Error) Message() string {
	if e.Suggestion == "" {
		return "unknown field"
	}
	return "unknown field; did you mean " + e.Suggestion + "?"
}

var (
	rawType         = reflect.TypeFor[json.RawMessage]()
	anyType         = reflect.TypeFor[any]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// Unknown returns the first key of the JSON value raw (in sorted order at each level) that
// type t has no field for, as a path below prefix; nil when every key is known or raw is not
// valid JSON (decoding reports that). Structs are matched by their json tags (embedded
// structs included); slices, arrays and maps are looked into; json.RawMessage, interface
// and map[string]any values are free-form and are not.
func Unknown(raw []byte, t reflect.Type, prefix string) *Error {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return walk(v, t, prefix)
}

func walk(v any, t reflect.Type, path string) *Error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawType || t == anyType || t.Kind() == reflect.Interface {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		fields := fieldsOf(t)
		if len(fields) == 0 && reflect.PointerTo(t).Implements(unmarshalerType) {
			return nil // decodes itself, with no JSON fields of its own (store.SimFail)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ft, known := fields[k]
			if !known {
				names := make([]string, 0, len(fields))
				for n := range fields {
					names = append(names, n)
				}
				return &Error{Path: join(path, k), Suggestion: Suggest(k, names)}
			}
			if err := walk(obj[k], ft, join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		list, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, item := range list {
			if err := walk(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := walk(obj[k], t.Elem(), join(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// fieldsOf maps the JSON names of a struct's fields to their types.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, typ := range fieldsOf(ft) {
					out[n] = typ
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// CheckKeys returns the first key of obj (sorted) that is not in allowed, as a path below
// prefix; nil when all are allowed.
func CheckKeys(obj map[string]any, allowed []string, prefix string) *Error {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return &Error{Path: join(prefix, k), Suggestion: Suggest(k, allowed)}
		}
	}
	return nil
}

// Suggest returns the known name closest to name: one within an edit distance of 2 (1 for
// names of 4 characters or less), or one that name is a prefix of, or the other way round
// (at least 3 characters); "" when none is close. Ties go to the alphabetically first.
func Suggest(name string, known []string) string {
	sorted := slices.Clone(known)
	slices.Sort(sorted)
	lower := strings.ToLower(name)
	best, bestDist := "", 3
	limit := 2
	if len(name) <= 4 {
		limit = 1
	}
	for _, k := range sorted {
		d := distance(lower, strings.ToLower(k))
		if d <= limit && d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" {
		return best
	}
	if len(lower) >= 3 {
		for _, k := range sorted {
			lk := strings.ToLower(k)
			if strings.HasPrefix(lk, lower) || strings.HasPrefix(lower, lk) && len(lk) >= 3 {
				return k
			}
		}
	}
	return ""
}

// distance is the Damerau–Levenshtein (optimal string alignment) distance of two strings:
// insertions, deletions, substitutions and swaps of neighbours each count one.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}
