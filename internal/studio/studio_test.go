package studio_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/cli"
	"github.com/agentplane/agentplane/internal/studio"
)

func fetchPath(t *testing.T, h http.Handler, path string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestHandler checks the page shell, its hashed asset URLs, compression, caching and 404s.
func TestHandler(t *testing.T) {
	h := studio.New()
	page := fetchPath(t, h, "/studio", nil)
	if page.Code != 200 || !strings.HasPrefix(page.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET /studio: %d %s", page.Code, page.Header().Get("Content-Type"))
	}
	if csp := page.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	if slash := fetchPath(t, h, "/studio/", nil); slash.Code != 200 || slash.Body.String() != page.Body.String() {
		t.Errorf("GET /studio/: %d", slash.Code)
	}
	urls := regexp.MustCompile(`"(/studio/assets/[^"?]+)\?v=([0-9a-f]{16})"`).FindAllStringSubmatch(page.Body.String(), -1)
	if len(urls) < 3 {
		t.Fatalf("the page names %d hashed assets, want the script, the stylesheet and the icon:\n%s", len(urls), page.Body)
	}
	// First load: every script and stylesheet, compressed, stays within the 300 KB budget.
	total := 0
	entries, err := os.ReadDir("assets")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); ext == ".js" || ext == ".css" {
			names = append(names, "/studio/assets/"+e.Name())
		}
	}
	if len(names) < 3 {
		t.Fatalf("found only %v", names)
	}
	for _, name := range names {
		rec := fetchPath(t, h, name, http.Header{"Accept-Encoding": {"gzip, br"}})
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d", name, rec.Code)
		}
		total += rec.Body.Len()
		raw := fetchPath(t, h, name, nil)
		if raw.Header().Get("Content-Encoding") != "" {
			t.Errorf("%s without Accept-Encoding: encoding %q", name, raw.Header().Get("Content-Encoding"))
		}
		if raw.Body.Len() <= 1024 {
			continue // too small to be worth compressing
		}
		if rec.Header().Get("Content-Encoding") != "gzip" {
			t.Fatalf("GET %s with gzip accepted: encoding %q", name, rec.Header().Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(plain, raw.Body.Bytes()) {
			t.Fatalf("%s: the gzip body is not the file: %v", name, err)
		}
	}
	if total > 300*1024 {
		t.Errorf("first load is %d bytes of compressed JS and CSS, over the 300 KB budget", total)
	}
	t.Logf("first load: %d bytes of JS and CSS, gzip", total)
	for _, u := range urls {
		rec := fetchPath(t, h, u[1]+"?v="+u[2], nil)
		if rec.Code != 200 || !strings.Contains(rec.Header().Get("Cache-Control"), "immutable") {
			t.Errorf("GET %s?v=%s: %d, Cache-Control %q", u[1], u[2], rec.Code, rec.Header().Get("Cache-Control"))
		}
		if again := fetchPath(t, h, u[1], http.Header{"If-None-Match": {rec.Header().Get("ETag")}}); again.Code != http.StatusNotModified {
			t.Errorf("GET %s with its ETag: %d, want 304", u[1], again.Code)
		}
	}
	for _, path := range []string{"/studio/nope", "/studio/assets/nope.js", "/studio/assets/../studio.go"} {
		if rec := fetchPath(t, h, path, nil); rec.Code != 404 {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
		}
	}
	req := httptest.NewRequest("POST", "/studio", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /studio: %d, want 405", rec.Code)
	}
}

// TestMounted checks that the emulator serves Studio next to the API.
func TestMounted(t *testing.T) {
	emu, err := cli.NewEmulator(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)), cli.EmulatorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	if rec := fetchPath(t, emu.Handler, "/studio", nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), "agentplane Studio") {
		t.Errorf("emulator GET /studio: %d", rec.Code)
	}
	if rec := fetchPath(t, emu.Handler, "/studio/assets/app.js", nil); rec.Code != 200 {
		t.Errorf("emulator GET /studio/assets/app.js: %d", rec.Code)
	}
}
