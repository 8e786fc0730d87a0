package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestPublicURL: --public-url (PUBLIC_URL) is the server /openapi.json lists, on serve and
// on the emulator; without it the server is the address the request reached; a bad value
// stops start-up with exit 2 naming the flag.
func TestPublicURL(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		cmd  string
		env  map[string]string
		args []string
	}{
		"serve ftp":           {"serve", nil, []string{"--public-url", "ftp://api.example"}},
		"serve relative":      {"serve", map[string]string{"PUBLIC_URL": "/api"}, nil},
		"emulator query":      {"emulator", nil, []string{"--public-url", "https://api.example/?x=1"}},
		"emulator no host":    {"emulator", map[string]string{"PUBLIC_URL": "https://"}, nil},
		"emulator with creds": {"emulator", nil, []string{"--public-url=https://u:p@api.example"}},
	} {
		t.Run(name, func(t *testing.T) {
			env := emulatorEnv(tc.env)
			if tc.cmd == "serve" {
				env = serveEnv(t.TempDir())
				for k, v := range tc.env {
					env[k] = v
				}
			}
			code, stderr := exit(t, env, append([]string{tc.cmd}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, "--public-url") {
				t.Fatalf("exit %d (want 2), stderr %q (want mention of --public-url)", code, stderr)
			}
		})
	}
	servers := func(p *proc) string {
		t.Helper()
		status, body, _, err := p.C.Raw(context.Background(), http.MethodGet, "/openapi.json", nil, nil)
		if err != nil || status != http.StatusOK {
			t.Fatalf("GET /openapi.json: %d %v", status, err)
		}
		var doc struct {
			Servers []struct{ URL string } `json:"servers"`
		}
		decode(t, body, &doc)
		if len(doc.Servers) != 1 {
			t.Fatalf("servers: %+v", doc.Servers)
		}
		return doc.Servers[0].URL
	}
	serve := start(t, func() map[string]string {
		env := serveEnv(dataDir(t))
		env["PUBLIC_URL"] = "https://agents.example.org/"
		return env
	}(), "serve")
	if got := servers(serve); got != "https://agents.example.org" {
		t.Errorf("serve with PUBLIC_URL: servers %q", got)
	}
	emu := start(t, emulatorEnv(map[string]string{"PUBLIC_URL": "http://ignored.example"}), "emulator", "--public-url", "https://emu.example.org")
	if got := servers(emu); got != "https://emu.example.org" {
		t.Errorf("emulator --public-url over PUBLIC_URL: servers %q", got)
	}
	plain := start(t, emulatorEnv(nil), "emulator")
	if got := servers(plain); got != plain.URL {
		t.Errorf("emulator without a public URL: servers %q, want %q", got, plain.URL)
	}
}
