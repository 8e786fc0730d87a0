// Package studio serves Studio, agentplane's web console, at /studio. It is a static,
// embedded single-page app (plain HTML, CSS and a vanilla ES-module script, no build step)
// that talks to the public /api/v1 with the user's API key or login token: the server only
// hands out these files, so Studio can do nothing a client of the API could not.
package studio

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
)

// assetFS holds the page shell and the app's script and stylesheet.
//
//go:embed assets
var assetFS embed.FS

// contentSecurityPolicy lets the page load only its own files and call only its own origin.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// asset is one embedded file, ready to serve.
type asset struct {
	data, gz    []byte // gz is nil when compression does not pay
	contentType string
	etag        string
}

// Handler serves Studio. Mount it on "GET /studio" and "GET /studio/": the page is at
// /studio (and /studio/), its files under /studio/assets/, anything else is a 404.
type Handler struct {
	once   sync.Once
	assets map[string]*asset
	page   *asset
}

// New returns Studio's handler; files are read and compressed on the first request.
func New() *Handler { return &Handler{} }

func (h *Handler) load() {
	h.assets = map[string]*asset{}
	entries, err := fs.ReadDir(assetFS, "assets")
	if err != nil {
		panic("studio: embedded assets missing: " + err.Error())
	}
	hashes := map[string]string{}
	for _, e := range entries {
		data, err := assetFS.ReadFile("assets/" + e.Name())
		if err != nil {
			panic("studio: read embedded asset: " + err.Error())
		}
		a := newAsset(e.Name(), data)
		h.assets[e.Name()] = a
		hashes[e.Name()] = a.etag
	}
	// The page names each file with its content hash, so browsers may cache files for good
	// and a new binary is never served stale ones.
	shell := string(h.assets["index.html"].data)
	for name, hash := range hashes {
		shell = strings.ReplaceAll(shell, "assets/"+name+"\"", "assets/"+name+"?v="+hash+"\"")
	}
	h.page = newAsset("index.html", []byte(shell))
	delete(h.assets, "index.html")
}

func newAsset(name string, data []byte) *asset {
	sum := sha256.Sum256(data)
	a := &asset{data: data, contentType: contentType(name), etag: hex.EncodeToString(sum[:8])}
	if len(data) > 1024 {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(data)
		_ = zw.Close()
		if buf.Len() < len(data) {
			a.gz = buf.Bytes()
		}
	}
	return a
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "text/plain; charset=utf-8"
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.once.Do(h.load)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/studio"), "/")
	switch {
	case rel == "":
		w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-cache")
		serve(w, r, h.page)
	case strings.HasPrefix(rel, "assets/"):
		a, ok := h.assets[strings.TrimPrefix(rel, "assets/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.URL.Query().Get("v") == a.etag {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		serve(w, r, a)
	default:
		http.NotFound(w, r)
	}
}

func serve(w http.ResponseWriter, r *http.Request, a *asset) {
	etag := `"` + a.etag + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Add("Vary", "Accept-Encoding")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.data
	if a.gz != nil && acceptsGzip(r) {
		w.Header().Set("Content-Encoding", "gzip")
		body = a.gz
	}
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}
