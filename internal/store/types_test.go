package store

import (
	"encoding/json"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

// TestListsMarshalAsArrays: a nil list is written as [], never null, since the API documents
// lists as non-nullable arrays.
func TestListsMarshalAsArrays(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{domain.Strings(nil), `[]`},
		{domain.Strings{}, `[]`},
		{domain.Strings{"a", "b"}, `["a","b"]`},
		{struct {
			Tags domain.Strings `json:"tags"`
		}{}, `{"tags":[]}`},
		{domain.ApprovalConfig{}, `{"checkpoints":[]}`},
		{&domain.ApprovalConfig{Checkpoints: []domain.Checkpoint{{Name: "review", When: "before_output"}}}, `{"checkpoints":[{"name":"review","when":"before_output"}]}`},
		{domain.AgentConfig{Model: "m", Approval: &domain.ApprovalConfig{}}, `{"model":"m","approval":{"checkpoints":[]}}`},
	} {
		got, err := json.Marshal(tc.v)
		if err != nil || string(got) != tc.want {
			t.Errorf("json.Marshal(%#v) = %s, %v; want %s", tc.v, got, err, tc.want)
		}
	}
}

// TestJSONColumnsScan: empty and non-empty JSON columns, as text and as bytes, scan to
// non-nil values with their elements (an empty list or object is never null in a response).
func TestJSONColumnsScan(t *testing.T) {
	for src, want := range map[any]int{"[]": 0, `["a","b"]`: 2, string([]byte(`["a"]`)): 1} {
		for _, in := range []any{src, []byte(src.(string))} {
			var l domain.Strings
			if err := l.Scan(in); err != nil || l == nil || len(l) != want {
				t.Errorf("Strings.Scan(%q) = %#v, %v", in, l, err)
			}
		}
	}
	for src, want := range map[string]int{"{}": 0, `{"a":1}`: 1, `{"a":1,"b":[1]}`: 2} {
		for _, in := range []any{src, []byte(src)} {
			var o domain.JSONObject
			if err := o.Scan(in); err != nil || o == nil || len(o) != want {
				t.Errorf("JSONObject.Scan(%q) = %#v, %v", in, o, err)
			}
		}
	}
}
