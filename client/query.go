package client

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"time"
)

// query encodes the query parameters of a generated Params struct: each field with a form tag
// whose value is not its zero (or, for a pointer, not nil). Header parameters have no form tag
// and are left to the client's options.
func query(params any) url.Values {
	q := url.Values{}
	v := reflect.ValueOf(params)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return q
		}
		v = v.Elem()
	}
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("form"), ",")
		if name == "" || name == "-" {
			continue
		}
		addValue(q, name, v.Field(i))
	}
	return q
}

// addValue adds f to q under name unless it is zero; a pointer's target is sent even when zero
// (enabled=false), a slice as one parameter per item.
func addValue(q url.Values, name string, f reflect.Value) {
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			return
		}
		f = f.Elem()
	} else if f.IsZero() {
		return
	}
	switch x := f.Interface().(type) {
	case time.Time:
		q.Add(name, x.UTC().Format(time.RFC3339Nano))
		return
	case fmt.Stringer:
		q.Add(name, x.String())
		return
	}
	if f.Kind() == reflect.Slice {
		for j := range f.Len() {
			addValue(q, name, f.Index(j))
		}
		return
	}
	q.Add(name, fmt.Sprint(f.Interface()))
}
