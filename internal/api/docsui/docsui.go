// Package docsui serves an offline, interactive API reference (Swagger UI)
// whose assets are embedded in the binary, so the page loads nothing from
// outside the process.
//
// assets/ holds swagger-ui-bundle.js, swagger-ui.css, favicon-32x32.png,
// LICENSE, NOTICE and swagger-ui-bundle.js.LICENSE.txt copied unchanged from
// the npm package swagger-ui-dist at the version in assets/VERSION (npm pack
// swagger-ui-dist@VERSION), plus this package's own init.js and docs.css. To
// upgrade, copy the same files from a newer release and update VERSION.
package docsui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"
)

// assetFS holds swagger-ui-dist's bundle, stylesheet, favicon and licence
// files (see assets/VERSION) plus this package's own init.js and docs.css.
//
//go:embed assets
var assetFS embed.FS

// contentSecurityPolicy is sent with the HTML page. Everything comes from
// 'self'; data: images are needed for the SVG icons inlined in
// swagger-ui.css.
const contentSecurityPolicy = "default-src 'none'; " +
	"script-src 'self'; " +
	"style-src 'self'; " +
	"img-src 'self' data:; " +
	"font-src 'self'; " +
	"connect-src 'self'; " +
	"manifest-src 'self'; " +
	"form-action 'self'; " +
	"base-uri 'none'; " +
	"frame-ancestors 'none'"

// assetCacheControl is sent with every asset. Asset URLs in the page carry a
// content hash (?v=...), so a new build never serves a stale cached file.
const assetCacheControl = "public, max-age=31536000, immutable"

// asset is one embedded file, ready to serve.
type asset struct {
	name        string
	data        []byte
	gz          []byte // gzip-compressed data, nil when not worth it
	contentType string
	hash        string // first 16 hex digits of the SHA-256 of data
}

var (
	loadOnce sync.Once
	assets   map[string]*asset
)

// loadAssets reads the embedded files once, hashing each one and
// pre-compressing the text ones.
func loadAssets() {
	entries, err := fs.ReadDir(assetFS, "assets")
	if err != nil {
		panic("docsui: embedded assets missing: " + err.Error())
	}
	m := make(map[string]*asset, len(entries))
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := assetFS.ReadFile("assets/" + e.Name())
		if err != nil {
			panic("docsui: reading embedded asset: " + err.Error())
		}
		sum := sha256.Sum256(data)
		a := &asset{
			name:        e.Name(),
			data:        data,
			contentType: contentTypeOf(e.Name()),
			hash:        hex.EncodeToString(sum[:8]),
		}
		if compressible(a.contentType) && len(data) > 1024 {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			_, _ = zw.Write(data)
			_ = zw.Close()
			if buf.Len() < len(data) {
				a.gz = buf.Bytes()
			}
		}
		m[e.Name()] = a
	}
	assets = m
}

// contentTypeOf maps the few extensions shipped in assets/ to a media type;
// anything else (LICENSE, NOTICE, VERSION) is plain text.
func contentTypeOf(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".png":
		return "image/png"
	default:
		return "text/plain; charset=utf-8"
	}
}

func compressible(contentType string) bool {
	return strings.HasPrefix(contentType, "text/")
}

var pageTemplate = template.Must(template.New("docs").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}}</title>
<link rel="icon" type="image/png" sizes="32x32" href="{{.Favicon}}">
<link rel="stylesheet" href="{{.SwaggerCSS}}">
<link rel="stylesheet" href="{{.DocsCSS}}">
</head>
<body data-spec-url="{{.SpecURL}}">
<noscript><p class="docsui-noscript">{{.Title}}: this interactive API reference needs JavaScript. The raw OpenAPI document is at <a href="{{.SpecURL}}">{{.SpecURL}}</a>.</p></noscript>
<div id="swagger-ui"></div>
<script src="{{.Bundle}}"></script>
<script src="{{.Init}}"></script>
</body>
</html>
`))

// pageData is what pageTemplate renders.
type pageData struct {
	Title, SpecURL                             string
	Favicon, SwaggerCSS, DocsCSS, Bundle, Init string
}

// handler serves the page and the assets; see Handler.
type handler struct {
	title   string
	specURL string
}

// Handler returns an http.Handler for an interactive API reference titled
// title that renders the OpenAPI document at specURL. Mount it on both the
// page path and its subtree, e.g. "GET /docs" and "GET /docs/": it serves the
// page at the mount path (with or without the trailing slash), embedded
// assets under <mount>/assets/<file>, and 404 for anything else.
func Handler(title, specURL string) http.Handler {
	// Assets are hashed and compressed on the first request, not here: start-up stays fast
	// and a server whose docs are never opened never holds the compressed copies.
	return &handler{title: title, specURL: specURL}
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	loadOnce.Do(loadAssets)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	rel := relativePath(r)
	switch {
	case rel == "":
		h.servePage(w, r)
	case strings.HasPrefix(rel, "assets/"):
		a, ok := assets[strings.TrimPrefix(rel, "assets/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		serveAsset(w, r, a)
	default:
		http.NotFound(w, r)
	}
}

// relativePath returns the request path relative to where the handler is
// mounted. The mount point is taken from the ServeMux pattern that matched
// (r.Pattern); without one (or when a StripPrefix already removed it) the
// path is taken relative to "/".
func relativePath(r *http.Request) string {
	p := r.URL.Path
	if mount := patternPath(r.Pattern); mount != "" && strings.HasPrefix(p, mount) {
		return strings.TrimPrefix(p[len(mount):], "/")
	}
	return strings.TrimPrefix(p, "/")
}

// patternPath extracts the literal path prefix of a ServeMux pattern such as
// "GET example.com/docs/{rest...}", giving "/docs/".
func patternPath(pattern string) string {
	if pattern == "" {
		return ""
	}
	if i := strings.IndexAny(pattern, " \t"); i >= 0 {
		pattern = strings.TrimLeft(pattern[i:], " \t")
	}
	i := strings.IndexByte(pattern, '/')
	if i < 0 {
		return ""
	}
	pattern = pattern[i:]
	if j := strings.IndexByte(pattern, '{'); j >= 0 {
		pattern = pattern[:j]
	}
	return pattern
}

// assetBase returns the relative URL prefix, as seen from the page, of the
// directory that holds assets/. The page lives at the mount path, which the
// browser may have requested as ".../docs" or ".../docs/"; the path the client
// sent (r.RequestURI) is used so that an http.StripPrefix in front of the
// handler does not matter.
func assetBase(r *http.Request) string {
	p := r.URL.EscapedPath()
	if r.RequestURI != "" {
		if u, err := url.ParseRequestURI(r.RequestURI); err == nil && u.EscapedPath() != "" {
			p = u.EscapedPath()
		}
	}
	if p == "" || strings.HasSuffix(p, "/") {
		return "./"
	}
	return "./" + p[strings.LastIndexByte(p, '/')+1:] + "/"
}

func (h *handler) servePage(w http.ResponseWriter, r *http.Request) {
	base := assetBase(r)
	ref := func(name string) string {
		return base + "assets/" + name + "?v=" + assets[name].hash
	}
	var buf bytes.Buffer
	err := pageTemplate.Execute(&buf, pageData{
		Title:      h.title,
		SpecURL:    h.specURL,
		Favicon:    ref("favicon-32x32.png"),
		SwaggerCSS: ref("swagger-ui.css"),
		DocsCSS:    ref("docs.css"),
		Bundle:     ref("swagger-ui-bundle.js"),
		Init:       ref("init.js"),
	})
	if err != nil {
		http.Error(w, "rendering API reference page failed", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-cache")
	_, _ = w.Write(buf.Bytes())
}

// serveAsset writes one embedded file, gzip-compressed when the client
// accepts it, honouring conditional and range requests.
func serveAsset(w http.ResponseWriter, r *http.Request, a *asset) {
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("Cache-Control", assetCacheControl)
	hd.Set("X-Content-Type-Options", "nosniff")
	data, etag := a.data, `"`+a.hash+`"`
	if a.gz != nil {
		hd.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			data, etag = a.gz, `"`+a.hash+`-gz"`
			hd.Set("Content-Encoding", "gzip")
		}
	}
	hd.Set("ETag", etag)
	http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(data))
}

// acceptsGzip reports whether the Accept-Encoding header allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		params = strings.ReplaceAll(params, " ", "")
		return params != "q=0" && params != "q=0.0" && params != "q=0.00" && params != "q=0.000"
	}
	return false
}
