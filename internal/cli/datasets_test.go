package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
)

func TestDatasetsPush(t *testing.T) {
	t.Parallel()
	tg := emulatorTarget(t)
	env := loggedIn(t, tg)
	ctx := context.Background()
	dir := t.TempDir()
	good := filepath.Join(dir, "support-qa.jsonl")
	os.WriteFile(good, []byte("{\"input\":{\"message\":\"Where is my order?\"},\"expected_output\":{\"content\":\"Tracking link\"}}\n\n{\"input\":{\"message\":\"Refund?\"}}\n"), 0o600)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"input\":{\"message\":\"ok\"}}\n{\"expected_output\":1}\n"), 0o600)

	// The first push creates the dataset named after the file; the second adds to it.
	r := want(t, agentplane(t, env, "", "datasets", "push", good), 0, "datasets push")
	if !strings.Contains(r.stdout, "pushed 2 items to dataset support-qa") || !strings.Contains(r.stdout, "2 items, version 1") {
		t.Fatalf("push: %s", r)
	}
	r = want(t, agentplane(t, env, "", "datasets", "push", good, "--dataset", "support-qa", "-o", "json"), 0, "datasets push again")
	d := decodeJSON[client.Dataset](t, r.stdout)
	if d.ItemCount != 4 || d.Version != 2 {
		t.Fatalf("second push: %+v", d)
	}
	r = want(t, agentplane(t, env, "", "datasets", "list"), 0, "datasets list")
	if !strings.Contains(r.stdout, d.ID) || !strings.Contains(r.stdout, "support-qa") {
		t.Fatalf("list: %s", r)
	}

	// A bad line: nothing added, the line named, and no empty dataset left behind.
	r = want(t, agentplane(t, env, "", "datasets", "push", bad), 1, "push of a bad file")
	if !strings.Contains(r.stderr, "line 2: input: is required") {
		t.Fatalf("bad push: %s", r)
	}
	if l, err := tg.C.DatasetList(ctx, client.ListDatasetsParams{Name: "bad"}); err != nil || len(l.Data) != 0 {
		t.Fatalf("a failed push left a dataset: %+v %v", l, err)
	}
	want(t, agentplane(t, env, "", "datasets", "push", filepath.Join(dir, "missing.jsonl")), 2, "push of a missing file")
	want(t, agentplane(t, env, "", "datasets", "push"), 2, "push without a file")
}
