package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/auth/authtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/ratelimit"
	"github.com/agentplane/agentplane/internal/store"
)

// slowRate is a refill rate at which no token comes back within a test.
const slowRate = 0.001

// TestRateLimitPerUser: bearer-token requests are limited per user with the same bucket rule
// as keys, with the same headers and 429.
func TestRateLimitPerUser(t *testing.T) {
	e := newServerEnvWith(t, func(c *Config) { c.RateLimit, c.RateBurst = slowRate, 3 })
	hash := authtest.PasswordHash(t, "s3cret-pass")
	ada := token(t, newUser(t, e, "ada@example.com", hash, e.ws, domain.RoleMember))
	bob := token(t, newUser(t, e, "bob@example.com", hash, e.ws, domain.RoleMember))
	for i, left := range []string{"2", "1", "0"} {
		resp := e.do(t, "GET", "/api/v1/agents", bearer(ada, e.ws), "")
		if resp.StatusCode != 200 || resp.Header.Get("RateLimit-Limit") != "3" || resp.Header.Get("RateLimit-Remaining") != left {
			t.Fatalf("ada %d: %d %v", i, resp.StatusCode, resp.Header)
		}
	}
	e.run([]scenario{
		{name: "ada over the limit", method: "GET", path: "/api/v1/agents", header: bearer(ada, e.ws), status: 429, code: "rate_limited", message: "this user"},
		{name: "bob has his own bucket", method: "GET", path: "/api/v1/agents", header: bearer(bob, e.ws), status: 200},
		{name: "the key has its own bucket", method: "GET", path: "/api/v1/agents", status: 200},
	})
	resp := e.do(t, "GET", "/api/v1/agents", bearer(bob, e.ws), "")
	if resp.Header.Get("RateLimit-Limit") != "3" || resp.Header.Get("RateLimit-Remaining") != "1" {
		t.Fatalf("headers of a bearer request: %v", resp.Header)
	}
	resp = e.do(t, "GET", "/api/v1/agents", bearer(ada, e.ws), "")
	if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != 429 || ra < 1 {
		t.Fatalf("429 of a bearer request: %d %v", resp.StatusCode, resp.Header)
	}
}

// do sends one request with the env's key unless headers blank it, and returns the response
// (body closed).
func (e *testEnv) do(t *testing.T, method, path string, headers map[string]string, body string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, e.ts.URL+path, strings.NewReader(body))
	req.RequestURI = ""
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-Key", e.key)
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestLoginThrottle: failed logins are limited per email (whatever the address) and per
// client address (whatever the email), as a 429 with Retry-After and the envelope before any
// password is checked; successful logins do not count.
func TestLoginThrottle(t *testing.T) {
	e := newServerEnvWith(t, func(c *Config) {
		c.TrustedProxies = []string{"127.0.0.1", "::1"}
		c.LoginLimits = LoginLimits{PerEmail: ratelimit.Rule{Rate: slowRate, Burst: 3}, PerAddress: ratelimit.Rule{Rate: slowRate, Burst: 5}}
	})
	hash := authtest.PasswordHash(t, "s3cret-pass")
	newUser(t, e, "ada@example.com", hash, e.ws, domain.RoleMember)
	newUser(t, e, "bob@example.com", hash, e.ws, domain.RoleMember)
	from := func(addr string) map[string]string {
		return map[string]string{"X-API-Key": "", "X-Forwarded-For": addr}
	}
	login := func(email, pw string) string { return `{"email":"` + email + `","password":"` + pw + `"}` }
	const path = "/api/v1/auth/login"
	e.run([]scenario{
		{name: "ada fails 1", method: "POST", path: path, header: from("192.0.2.1"), body: login("ada@example.com", "x"), status: 401},
		{name: "ada fails 2", method: "POST", path: path, header: from("192.0.2.1"), body: login("ada@example.com", "x"), status: 401},
		{name: "ada fails 3", method: "POST", path: path, header: from("192.0.2.2"), body: login("ADA@example.com", "x"), status: 401},
		{name: "ada locked", method: "POST", path: path, header: from("192.0.2.3"), body: login("ada@example.com", "x"), status: 429,
			code: "rate_limited", message: "too many failed logins for this email"},
		{name: "ada locked even with her password", method: "POST", path: path, header: from("192.0.2.4"), body: login("ada@example.com", "s3cret-pass"), status: 429},
		// Successes give their token back: bob fails once, logs in often, and has two failures left.
		{name: "bob fails", method: "POST", path: path, header: from("198.51.100.1"), body: login("bob@example.com", "x"), status: 401},
		{name: "bob in 1", method: "POST", path: path, header: from("198.51.100.2"), body: login("bob@example.com", "s3cret-pass"), status: 200},
		{name: "bob in 2", method: "POST", path: path, header: from("198.51.100.3"), body: login("bob@example.com", "s3cret-pass"), status: 200},
		{name: "bob in 3", method: "POST", path: path, header: from("198.51.100.4"), body: login("bob@example.com", "s3cret-pass"), status: 200},
		{name: "bob fails 2", method: "POST", path: path, header: from("198.51.100.5"), body: login("bob@example.com", "x"), status: 401},
		{name: "bob fails 3", method: "POST", path: path, header: from("198.51.100.6"), body: login("bob@example.com", "x"), status: 401},
		{name: "bob locked", method: "POST", path: path, header: from("198.51.100.7"), body: login("bob@example.com", "s3cret-pass"), status: 429},
		// Per address, whatever the emails: five failures, then none from there.
		{name: "guess 1", method: "POST", path: path, header: from("203.0.113.9"), body: login("u1@example.com", "x"), status: 401},
		{name: "guess 2", method: "POST", path: path, header: from("203.0.113.9"), body: login("u2@example.com", "x"), status: 401},
		{name: "guess 3", method: "POST", path: path, header: from("203.0.113.9"), body: login("u3@example.com", "x"), status: 401},
		{name: "guess 4", method: "POST", path: path, header: from("203.0.113.9"), body: login("u4@example.com", "x"), status: 401},
		{name: "guess 5", method: "POST", path: path, header: from("203.0.113.9"), body: login("u5@example.com", "x"), status: 401},
		{name: "address locked", method: "POST", path: path, header: from("203.0.113.9"), body: login("u6@example.com", "x"), status: 429,
			message: "too many failed logins from your address"},
	})
	resp := e.do(t, "POST", path, from("203.0.113.9"), login("u7@example.com", "x"))
	if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != 429 || ra < 1 {
		t.Fatalf("429 without Retry-After: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestLoginAddress(t *testing.T) {
	trusted, _ := auth.ParseIPAllowlist([]string{"10.0.0.1"})
	for _, c := range []struct{ remote, xff, want string }{
		{"192.0.2.7:5000", "", "192.0.2.7"},
		{"[2001:db8:1:2:3:4:5:6]:443", "", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:443", "", "2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.8]:1", "", "192.0.2.8"},
		{"10.0.0.1:1", "198.51.100.4", "198.51.100.4"},
		{"192.0.2.7:1", "198.51.100.4", "192.0.2.7"}, // an untrusted peer's header is ignored
	} {
		t.Run(c.remote+"/"+c.xff, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			r.RemoteAddr = c.remote
			if c.xff != "" {
				r.Header.Set("X-Forwarded-For", c.xff)
			}
			if got := loginAddress(r, trusted); got != c.want {
				t.Errorf("%s, want %s", got, c.want)
			}
		})
	}
}

// TestRateLimitsAcrossNodes: two nodes of one database (or one Redis) share each key's
// bucket and each email's failed-login bucket.
func TestRateLimitsAcrossNodes(t *testing.T) {
	check := func(t *testing.T, url string, shared func(st *store.Store) ratelimit.Shared) {
		var nodes []*testEnv
		for range 2 {
			st := openTestStore(t, url)
			nodes = append(nodes, newTestEnv(t, onStore(st), asServer(), withConfig(func(c *Config) {
				c.RateLimit, c.RateBurst, c.RateShared = slowRate, 6, shared(st)
				c.LoginLimits.PerEmail = ratelimit.Rule{Rate: slowRate, Burst: 2}
			})))
		}
		key := nodes[0].key
		ok := 0
		for i := range 10 {
			resp, _ := nodes[i%2].getWithKey(t, "/api/v1/agents", key)
			if resp.StatusCode == 200 {
				ok++
			} else if resp.StatusCode != 429 {
				t.Fatalf("status %d", resp.StatusCode)
			}
		}
		if ok != 6 {
			t.Fatalf("%d requests admitted across two nodes, want the burst of 6", ok)
		}
		body := `{"email":"nobody@example.com","password":"x"}`
		for i, want := range []int{401, 401, 429, 429} {
			if got := nodes[i%2].do(t, "POST", "/api/v1/auth/login", map[string]string{"X-API-Key": ""}, body).StatusCode; got != want {
				t.Fatalf("login %d: %d, want %d", i, got, want)
			}
		}
	}
	forEachDatabase(t, func(t *testing.T, url string) {
		check(t, url, func(st *store.Store) ratelimit.Shared { return ratelimit.NewDatabase(st) })
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		r := openTestRedis(t)
		check(t, dbs.SQLiteFile(t), func(*store.Store) ratelimit.Shared { return r })
	})
}

// openTestRedis connects to TEST_REDIS_URL with keys of its own, or skips the test.
func openTestRedis(t *testing.T) *ratelimit.Redis {
	t.Helper()
	u := os.Getenv("TEST_REDIS_URL")
	if u == "" {
		t.Skip("TEST_REDIS_URL is not set: skipping the Redis run (set it to a redis:// URL, e.g. redis://127.0.0.1:6379/0, to run it)")
	}
	r, err := ratelimit.NewRedis(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.WithPrefix("agentplane-test:" + store.NewID() + ":")
}
