package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
)

// TestCallDecisions: --reject and --edit become decisions; a flag without CALL_ID= or an
// edit whose arguments are not JSON is a usage error.
func TestCallDecisions(t *testing.T) {
	got, err := callDecisions([]string{"c1=wrong customer=really"}, []string{`c2={"order_id":"C-3"}`})
	if err != nil || len(got) != 2 || got[0].CallID != "c1" || got[0].Decision != "reject" || got[0].Message != "wrong customer=really" ||
		got[1].CallID != "c2" || got[1].Decision != "edit" || string(got[1].Arguments) != `{"order_id":"C-3"}` {
		t.Fatalf("decisions %+v %v", got, err)
	}
	for _, bad := range [][2][]string{{{"c1"}, nil}, {{"=no"}, nil}, {nil, {"c2={"}}, {nil, {`{"a":1}`}}} {
		var ue usageError
		if _, err := callDecisions(bad[0], bad[1]); err == nil || !asUsage(err, &ue) {
			t.Errorf("%v: want a usage error, got %v", bad, err)
		}
	}
}

func asUsage(err error, ue *usageError) bool {
	u, ok := err.(usageError)
	*ue = u
	return ok
}

// TestWritePending: the question with its choices, then a call a line.
func TestWritePending(t *testing.T) {
	var b strings.Builder
	a := &client.Approval{Question: "Which size?", Choices: []string{"S", "M"},
		Calls: []client.PendingCall{{CallID: "q1", Name: "ask_user", Arguments: json.RawMessage(`{"question":"Which size?"}`)}}}
	if err := writePending(&b, a); err != nil {
		t.Fatal(err)
	}
	if want := "question: Which size? (S / M)\nq1\task_user\t{\"question\":\"Which size?\"}\n"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}
