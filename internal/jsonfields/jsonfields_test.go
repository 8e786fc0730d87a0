package jsonfields

import (
	"encoding/json"
	"reflect"
	"testing"
)

type step struct {
	ID          string   `json:"id"`
	Instruction string   `json:"instruction,omitempty"`
	DependsOn   []string `json:"depends_on,omitempty"`
}

type inner struct {
	Name string `json:"name"`
}

type base struct {
	Shared string `json:"shared"`
}

type config struct {
	base
	Model       string            `json:"model"`
	Temperature *float64          `json:"temperature,omitempty"`
	Steps       []step            `json:"steps,omitempty"`
	Schema      json.RawMessage   `json:"input_schema,omitempty"`
	Free        map[string]any    `json:"metadata,omitempty"`
	ByName      map[string]inner  `json:"by_name,omitempty"`
	Any         any               `json:"any,omitempty"`
	Hidden      string            `json:"-"`
	Tags        map[string]string `json:"tags,omitempty"`
	NoTag       int
}

func TestUnknown(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[config]()
	for _, tc := range []struct {
		raw, want string
	}{
		{`{"model":"m","temperature":0.2}`, ""},
		{`{"model":"m","temprature":0.2}`, "config.temprature: unknown field; did you mean temperature?"},
		{`{"modle":"m"}`, "config.modle: unknown field; did you mean model?"},
		{`{"steps":[{"id":"a"},{"id":"b","instrucion":"x"}]}`, "config.steps[1].instrucion: unknown field; did you mean instruction?"},
		{`{"shared":"x","NoTag":1}`, ""},
		{`{"input_schema":{"anything":{"goes":1}},"metadata":{"free":true},"any":{"x":1}}`, ""},
		{`{"by_name":{"a":{"name":"x","nmae":"y"}}}`, "config.by_name.a.nmae: unknown field; did you mean name?"},
		{`{"Hidden":"x"}`, "config.Hidden: unknown field"},
		{`{"zzz":1,"aaa":2}`, "config.aaa: unknown field"},
		{`{"max_iterations":3}`, "config.max_iterations: unknown field"},
		{`not json`, ""},
		{`{"steps":"not a list"}`, ""},
	} {
		err := Unknown([]byte(tc.raw), typ, "config")
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("Unknown(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	known := []string{"model", "temperature", "max_tokens", "max_iterations", "top_p", "tools"}
	for name, want := range map[string]string{
		"temprature":   "temperature",
		"Temperature":  "temperature",
		"max_token":    "max_tokens",
		"maxtokens":    "max_tokens",
		"tool":         "tools",
		"top-p":        "top_p",
		"mdoel":        "model",
		"max_iter":     "max_iterations",
		"colour":       "",
		"x":            "",
		"system":       "",
		"temperatures": "temperature",
	} {
		if got := Suggest(name, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestCheckKeys(t *testing.T) {
	t.Parallel()
	if err := CheckKeys(map[string]any{"host": "h", "prot": 5432}, []string{"host", "port"}, "config"); err == nil ||
		err.Error() != "config.prot: unknown field; did you mean port?" || err.Message() != "unknown field; did you mean port?" {
		t.Fatalf("got %v", err)
	}
	if err := CheckKeys(map[string]any{"host": "h"}, []string{"host", "port"}, "config"); err != nil {
		t.Fatal(err)
	}
}
