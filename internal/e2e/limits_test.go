package e2e

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
)

func TestServeLimitFlags(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env  map[string]string
		args []string
		want string
	}{
		"negative rate":        {nil, []string{"--rate-limit", "-1"}, "--rate-limit"},
		"negative RATE_BURST":  {map[string]string{"RATE_BURST": "-5"}, nil, "--rate-burst"},
		"zero burst with rate": {nil, []string{"--rate-burst", "0"}, "--rate-burst"},
		"negative MAX_AGENTS":  {map[string]string{"MAX_AGENTS": "-1"}, nil, "--max-agents"},
		"negative per month":   {nil, []string{"--max-executions-per-month=-2"}, "--max-executions-per-month"},
		"negative concurrent":  {map[string]string{"MAX_CONCURRENT_EXECUTIONS": "-3"}, nil, "--max-concurrent-executions"},
		"jwks ftp url":         {nil, []string{"--jwks-url", "ftp://idp.example/jwks"}, "--jwks-url"},
		"jwks no host":         {map[string]string{"JWKS_URL": "https:///jwks"}, nil, "--jwks-url"},
		"jwks not a url":       {map[string]string{"JWKS_URL": "idp.example/jwks"}, nil, "--jwks-url"},
		"unknown MODELS":       {map[string]string{"MODELS": "fake"}, nil, "--models"},
		"unknown --models":     {nil, []string{"--models", "mock"}, "--models"},
		"redis http url":       {nil, []string{"--redis-url", "http://127.0.0.1:6379"}, "--redis-url"},
		"redis host only":      {map[string]string{"REDIS_URL": "127.0.0.1:6379"}, nil, "--redis-url"},
	} {
		t.Run(name, func(t *testing.T) {
			env := serveEnv(t.TempDir())
			for k, v := range tc.env {
				env[k] = v
			}
			code, stderr := exit(t, env, append([]string{"serve"}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d (want 2), stderr %q (want mention of %q)", code, stderr, tc.want)
			}
		})
	}
}

// TestServeLimits boots serve with tight limits from the environment and meets them through
// the SDK: on SQLite (buckets in the process), PostgreSQL (buckets in the database) and,
// when TEST_REDIS_URL is set, with REDIS_URL (buckets in Redis).
func TestServeLimits(t *testing.T) {
	forEachServeDB(t, limitsSuite)
	t.Run("redis", func(t *testing.T) {
		u := os.Getenv("TEST_REDIS_URL")
		if u == "" {
			t.Skip("TEST_REDIS_URL is not set: skipping the Redis run (set it to a redis:// URL, e.g. redis://127.0.0.1:6379/0, to run it)")
		}
		env := serveEnv(t.TempDir())
		env["REDIS_URL"] = u
		limitsSuite(t, env)
	})
}

// TestServeRedisDown: a --redis-url that does not answer stops start-up with a message
// naming Redis.
func TestServeRedisDown(t *testing.T) {
	t.Parallel()
	env := serveEnv(t.TempDir())
	env["REDIS_URL"] = "redis://127.0.0.1:1/0"
	code, stderr := exit(t, env, "serve")
	if code == 0 || !strings.Contains(stderr, "redis") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func limitsSuite(t *testing.T, env map[string]string) {
	env["RATE_LIMIT"], env["RATE_BURST"], env["MAX_AGENTS"] = "0.001", "4", "1"
	p := start(t, env, "serve")
	ctx := context.Background()
	var ae *client.Error
	if _, err := p.C.AgentCreate(ctx, client.AgentCreateRequest{Name: "one", Type: "simple"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.C.AgentCreate(ctx, client.AgentCreateRequest{Name: "two", Type: "simple"}); !errors.As(err, &ae) || ae.Status != 402 ||
		ae.Code != "plan_limit_exceeded" || !strings.Contains(ae.Message, "max_agents (1)") {
		t.Fatalf("second agent: %v", err)
	}
	var err error
	for range 3 {
		if _, err = p.C.AgentList(ctx, client.ListAgentsParams{}); err != nil {
			break
		}
	}
	if !errors.As(err, &ae) || ae.Status != 429 || ae.Code != "rate_limited" || ae.Header.Get("Retry-After") == "" {
		t.Fatalf("after the burst: %v", err)
	}
}
