package docsui

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// newServer mounts the handler the way the API server does.
func newServer(t *testing.T, title string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	h := Handler(title, "/openapi.json")
	mux.Handle("GET /docs", h)
	mux.Handle("GET /docs/", h)
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{}}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// noRedirect is a client that reports redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
	return http.ErrUseLastResponse
}}

func get(t *testing.T, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

var assetRefRE = regexp.MustCompile(`(?:href|src)="([^"]+)"`)

func TestPage(t *testing.T) {
	srv := newServer(t, "agentplane <API> & \"docs\"")
	for _, p := range []string{"/docs", "/docs/"} {
		t.Run(p, func(t *testing.T) {
			resp, body := get(t, srv.URL+p)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Fatalf("Content-Type %q, want text/html", ct)
			}
			html := string(body)
			if !strings.Contains(html, `data-spec-url="/openapi.json"`) {
				t.Errorf("page lacks the spec URL:\n%s", html)
			}
			if strings.Contains(html, "http://") || strings.Contains(html, "https://") {
				t.Errorf("page references an absolute http(s) URL:\n%s", html)
			}
			if strings.Contains(html, "<API>") || !strings.Contains(html, "agentplane &lt;API&gt; &amp; &#34;docs&#34;") {
				t.Errorf("title not escaped:\n%s", html)
			}
			if strings.Contains(html, "<script>") || strings.Contains(html, "<style") {
				t.Errorf("page has inline script or style, which the CSP forbids:\n%s", html)
			}
			csp := resp.Header.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe") {
				t.Errorf("CSP %q allows unsafe sources", csp)
			}

			// Every referenced asset must resolve, relative to the page URL,
			// to something under /docs/assets/ that is served.
			refs := assetRefRE.FindAllStringSubmatch(html, -1)
			var assetCount int
			for _, m := range refs {
				ref := m[1]
				if ref == "/openapi.json" {
					continue
				}
				u, err := resp.Request.URL.Parse(ref)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(u.Path, "/docs/assets/") || u.Host != resp.Request.URL.Host {
					t.Errorf("asset %q resolves to %s, want under /docs/assets/", ref, u)
					continue
				}
				assetCount++
				aresp, abody := get(t, u.String())
				if aresp.StatusCode != http.StatusOK || len(abody) == 0 {
					t.Errorf("GET %s: status %d, %d bytes", u, aresp.StatusCode, len(abody))
				}
			}
			if assetCount != 5 {
				t.Errorf("page references %d assets, want 5 (favicon, 2 css, 2 js)", assetCount)
			}
		})
	}
}

func TestAssets(t *testing.T) {
	srv := newServer(t, "agentplane API")

	resp, body := get(t, srv.URL+"/docs/assets/swagger-ui-bundle.js")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("bundle status %d", resp.StatusCode)
	}
	ct := resp.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "text/javascript") && !strings.HasPrefix(ct, "application/javascript") {
		t.Errorf("bundle Content-Type %q", ct)
	}
	if len(body) < 100_000 || !bytes.Contains(body, []byte("SwaggerUIBundle")) {
		t.Errorf("bundle body looks wrong (%d bytes)", len(body))
	}
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=31536000") {
		t.Errorf("bundle Cache-Control %q", cc)
	}

	// Conditional request with the ETag gives 304.
	etag := resp.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	resp, _ = get(t, srv.URL+"/docs/assets/swagger-ui-bundle.js", "If-None-Match", etag)
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: status %d, want 304", resp.StatusCode)
	}

	for name, want := range map[string]string{
		"swagger-ui.css":    "text/css",
		"init.js":           "text/javascript",
		"favicon-32x32.png": "image/png",
		"LICENSE":           "text/plain",
		"VERSION":           "text/plain",
	} {
		resp, body := get(t, srv.URL+"/docs/assets/"+name)
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("%s: status %d, %d bytes", name, resp.StatusCode, len(body))
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, want) {
			t.Errorf("%s: Content-Type %q, want %s", name, ct, want)
		}
	}
}

func TestAssetGzip(t *testing.T) {
	srv := newServer(t, "agentplane API")
	_, plain := get(t, srv.URL+"/docs/assets/swagger-ui.css", "Accept-Encoding", "identity")
	// Setting Accept-Encoding ourselves stops the transport from decoding.
	resp, body := get(t, srv.URL+"/docs/assets/swagger-ui.css", "Accept-Encoding", "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(unzipped, plain) {
		t.Error("gzip body differs from the plain one")
	}
}

func TestNotFound(t *testing.T) {
	srv := newServer(t, "agentplane API")
	for _, p := range []string{
		"/docs/assets/missing.js",
		"/docs/assets/",
		"/docs/assets",
		"/docs/other",
		"/docs/index.html",
		"/docs/assets/sub/init.js",
		"/docs/assets/..%2fdocsui.go",
		"/docs/assets/%2e%2e%2fdocsui.go",
	} {
		resp, _ := get(t, srv.URL+p)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", p, resp.StatusCode)
		}
	}
}

func TestPathTricks(t *testing.T) {
	srv := newServer(t, "agentplane API")
	// The mux cleans these and redirects; nothing outside /docs/ (and no
	// file that is not an embedded asset) may be served.
	for _, p := range []string{
		"/docs/../",
		"/docs/../openapi.json",
		"/docs/assets/../../docsui.go",
		"/docs/assets/../docsui.go",
		"/docs//assets/init.js",
		"/docs/./assets/../../etc/passwd",
	} {
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = p // send the path verbatim, without client-side cleaning
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
		case resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusBadRequest:
		default:
			t.Errorf("GET %s: status %d, want a redirect or 404", p, resp.StatusCode)
		}
		if bytes.Contains(body, []byte("package docsui")) || bytes.Contains(body, []byte("root:")) {
			t.Errorf("GET %s leaked a file", p)
		}
	}

	// Called directly (no mux cleaning), dot segments still find nothing.
	h := Handler("t", "/openapi.json")
	for _, p := range []string{"/assets/../docsui.go", "/assets/../assets/init.js", "/assets/./init.js", "/../docsui.go"} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.Path = p
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotFound {
			t.Errorf("direct %s: status %d, want 404", p, rec.Code)
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	h := Handler("t", "/openapi.json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", rec.Code)
	}
}

func TestStripPrefixMount(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/reference/", http.StripPrefix("/reference", Handler("t", "/openapi.json")))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, body := get(t, srv.URL+"/reference/")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("page status %d", resp.StatusCode)
	}
	m := regexp.MustCompile(`src="([^"]*init\.js[^"]*)"`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no init.js reference in\n%s", body)
	}
	u, _ := resp.Request.URL.Parse(string(m[1]))
	if u.Path != "/reference/assets/init.js" {
		t.Fatalf("init.js resolves to %s", u.Path)
	}
	if resp, _ := get(t, u.String()); resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: status %d", u, resp.StatusCode)
	}
}

func TestPatternPath(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"/docs/":                 "/docs/",
		"GET /docs":              "/docs",
		"GET example.com/docs/":  "/docs/",
		"GET /docs/{rest...}":    "/docs/",
		"HEAD  /api/v1/docs/{$}": "/api/v1/docs/",
		"example.com":            "",
	} {
		if got := patternPath(in); got != want {
			t.Errorf("patternPath(%q) = %q, want %q", in, got, want)
		}
	}
}
