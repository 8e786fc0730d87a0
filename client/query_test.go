package client

import "testing"

// TestQuery: a Params struct becomes its query: set fields by their form names, a pointer's
// false sent, zero fields and header parameters left out.
func TestQuery(t *testing.T) {
	for name, tc := range map[string]struct {
		params any
		want   string
	}{
		"FalseFilter": {ListGuardrailsParams{Enabled: Ptr(false), Limit: 5, Q: "pii"}, "enabled=false&limit=5&q=pii"},
		"EnumAndCursor": {ListExecutionsParams{Status: ListExecutionsParamsStatusFailed, Cursor: "c1"},
			"cursor=c1&status=failed"},
		"HeadersLeftOut": {ListAgentsParams{XWorkspaceID: "w1", IfNoneMatch: `"e"`}, ""},
		"Pointer":        {&ListScoresParams{Name: "judge"}, "name=judge"},
		"NilPointer":     {(*ListScoresParams)(nil), ""},
	} {
		t.Run(name, func(t *testing.T) {
			if got := query(tc.params).Encode(); got != tc.want {
				t.Fatalf("query = %q, want %q", got, tc.want)
			}
		})
	}
}
