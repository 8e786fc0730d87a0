package api

import (
	"net/http"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

// TestTrustedProxies: X-Forwarded-For decides the client address only when the peer is a
// trusted proxy, and then it is the right-most address that is not a trusted proxy.
func TestTrustedProxies(t *testing.T) {
	behind := newServerEnvWith(t, func(c *Config) { c.TrustedProxies = []string{"127.0.0.0/8", "10.0.0.0/8"} })
	direct := newServerEnv(t)
	for _, tc := range []struct {
		name string
		e    *testEnv
		xff  []string
		want int
	}{
		{"trusted peer, allowed client", behind, []string{"203.0.113.7"}, 200},
		{"trusted chain, allowed client", behind, []string{"198.51.100.1, 203.0.113.7, 10.1.2.3"}, 200},
		{"spoofed left-most entry ignored", behind, []string{"203.0.113.7, 198.51.100.1"}, 403},
		{"trusted peer, other client", behind, []string{"198.51.100.1"}, 403},
		{"untrusted peer: header ignored", direct, []string{"203.0.113.7"}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.e.newKey(&domain.APIKey{Name: "ip", Scopes: domain.Strings{"agents:read"}, AllowedIPs: domain.Strings{"203.0.113.0/24", "2001:db8::/32"}})
			req, _ := http.NewRequest("GET", tc.e.ts.URL+"/api/v1/agents", nil)
			req.Header.Set("X-API-Key", key)
			for _, v := range tc.xff {
				req.Header.Add("X-Forwarded-For", v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}
