package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentplane/agentplane/internal/domain"
)

// maxBodyBytes bounds every JSON request body.
const maxBodyBytes = 1 << 20

type envelope struct {
	Data    any    `json:"data"`
	Message string `json:"message"`
}

// Pagination describes where a list page sits; total_pages and pages carry the same value.
type Pagination struct {
	Page  int `json:"page" doc:"The page's number (from the cursor when one was sent)."`
	Limit int `json:"limit"`
	Total int `json:"total" doc:"How many items the list holds, counted up to 1,000: past that, total_capped is true and total is a lower bound (1,001, or the items up to the end of this page when more), so a page costs the same however long the history behind it (counting every matching row on every page would make it cost in proportion to the history). The last page (not full) has the exact total."`
	// TotalCapped is documented on the field.
	TotalCapped bool `json:"total_capped" doc:"True when the list holds more than 1,000 items: total is then a lower bound, and total_pages counts only the pages of that many. Walk with next_cursor (given on every full page of such a list) to reach every item."`
	TotalPages  int  `json:"total_pages"`
	Pages       int  `json:"pages"`
	// NextCursor is documented on the field.
	NextCursor *string `json:"next_cursor" doc:"Opaque; send it as cursor (instead of page) to get the next page; null on the last page. Lists ordered newest first continue from the last item seen, so items created meanwhile neither repeat nor shift an item out of the walk, and a page deep in the list costs what the first costs."`
}

type listEnvelope struct {
	Data       any        `json:"data"`
	Message    string     `json:"message"`
	Pagination Pagination `json:"pagination"`
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"data":null,"error":"internal_error","message":"the response could not be encoded"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeData sends the success envelope around v.
func writeData(w http.ResponseWriter, status int, v any) {
	writeJSON(w, status, envelope{Data: v})
}

// writeList sends a list envelope with pagination.
func writeList[T any](w http.ResponseWriter, items []T, p domain.Page, total int) {
	pg := Pagination{Page: p.Page, Limit: p.Limit, Total: total, TotalCapped: total > domain.TotalCap}
	if p.Limit > 0 {
		pg.TotalPages = (total + p.Limit - 1) / p.Limit
	}
	pg.Pages = pg.TotalPages
	if n := len(items); n > 0 && n == p.Limit && (pg.TotalCapped || (p.Page-1)*p.Limit+n < total) {
		c := encodeCursor(p.Page+1, items[n-1])
		pg.NextCursor = &c
	}
	writeJSON(w, http.StatusOK, listEnvelope{Data: items, Pagination: pg})
}

// pageParams reads page, limit and cursor; anything but an integer in range, or a cursor that
// is not one the server gave, is a 400.
func pageParams(r *http.Request) (domain.Page, error) {
	p := domain.Page{Page: 1, Limit: 20}
	q := r.URL.Query()
	if v := q.Get("cursor"); v != "" {
		if q.Get("page") != "" {
			return p, badRequest("send either page or cursor, not both")
		}
		if err := decodeCursor(v, &p); err != nil {
			return p, err
		}
	}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			return p, badRequest("page must be an integer of at least 1, got %q", v)
		}
		p.Page = n
	}
	var err error
	p.Limit, err = limitParam(q, p.Limit)
	return p, err
}

// limitParam reads the limit query parameter: def when absent, else an integer from 1 to 100
// (400 otherwise).
func limitParam(q url.Values, def int) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 100 {
		return def, badRequest("limit must be an integer from 1 to 100, got %q", v)
	}
	return n, nil
}

// decode reads a JSON body into dst. A Content-Type other than application/json (charset
// absent or utf-8) is a 415; a body that is not UTF-8, malformed JSON, null, a wrong type or
// trailing data is a 400 naming the field; a string holding NUL (\u0000) anywhere is a 422
// naming its JSON path. An empty body decodes as {}. Unknown fields are ignored.
func decode(w http.ResponseWriter, r *http.Request, dst any) error {
	if err := checkContentType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	if b, ok := r.Body.(*readBody); ok {
		if body, ok := b.take(); ok {
			return decodeBytes(body, dst)
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errorf(http.StatusRequestEntityTooLarge, "request body exceeds %d bytes", maxBodyBytes)
		}
		return badRequest("could not read the request body")
	}
	return decodeBytes(body, dst)
}

// checkContentType accepts a JSON request body's media type: no header at all, or exactly
// application/json with no charset or utf-8. Suffix types such as application/merge-patch+json
// name formats with their own semantics, which no route implements, so they are 415 too.
func checkContentType(ct string) error {
	if ct == "" || ct == "application/json" {
		return nil // the usual cases, without parsing (a map per call)
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return errorf(http.StatusUnsupportedMediaType, "Content-Type must be application/json, got %q", ct)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return errorf(http.StatusUnsupportedMediaType, "Content-Type charset must be utf-8 (or absent), got %q", cs)
	}
	return nil
}

func decodeBytes(body []byte, dst any) error {
	// encoding/json replaces invalid UTF-8 with U+FFFD without a word, which would store
	// something other than what was sent: refuse the body instead.
	if !utf8.Valid(body) {
		return badRequest("request body is not valid UTF-8")
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		body = []byte("{}")
	} else if string(trimmed) == "null" {
		return badRequest("request body must be a JSON object, got null")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		// A NUL is refused as such even where it also breaks a type (a key of a map of
		// numbers, say).
		if bytes.Contains(body, []byte(`\u0000`)) {
			if nerr := findNUL(body); nerr != nil {
				return nerr
			}
		}
		return jsonError(err)
	}
	if dec.More() {
		return badRequest("request body must hold a single JSON object, found more data after it")
	}
	// A raw NUL byte is not valid JSON, so a string can only hold one through the escape.
	if bytes.Contains(body, []byte(`\u0000`)) {
		return findNUL(body)
	}
	return nil
}

// findNUL answers a 422 naming the JSON path of the first string (value or object key) in
// body that holds U+0000: PostgreSQL cannot store it in text, and no field needs it. Every
// route decodes through here, so nested free-form objects (metadata, input) are covered too.
func findNUL(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil // not well-formed JSON: the decoder's own error says so
	}
	path, key, ok := nulPath(v, "")
	if !ok {
		return nil
	}
	if path == "" {
		path = "request body"
	}
	if key {
		return domain.Invalid(path, `keys must not contain NUL (\u0000)`)
	}
	return domain.Invalid(path, `must not contain NUL (\u0000)`)
}

// nulPath finds the first string holding NUL in v: its path ("config.tools[0]"), and whether
// it is an object key (then path names the object).
func nulPath(v any, path string) (string, bool, bool) {
	switch x := v.(type) {
	case string:
		return path, false, strings.IndexByte(x, 0) >= 0
	case []any:
		for i, e := range x {
			if p, key, ok := nulPath(e, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, key, true
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the same answer for the same body
		for _, k := range keys {
			if strings.IndexByte(k, 0) >= 0 {
				return path, true, true
			}
			if p, key, ok := nulPath(x[k], joinPath(path, k)); ok {
				return p, key, true
			}
		}
	}
	return "", false, false
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func jsonError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return badRequest("malformed JSON at byte %d: %s", se.Offset, se.Error())
	case errors.As(err, &te):
		if te.Field == "" {
			return badRequest("request body must be a JSON %s, got %s", jsonKind(te.Type.Kind().String()), te.Value)
		}
		return badRequest("%s: expected %s, got %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("malformed JSON: the body ends too early")
	}
	var ae *Error
	var fe *domain.FieldError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &fe):
		return fe
	}
	return badRequest("malformed JSON: %s", err.Error())
}

func jsonKind(goKind string) string {
	switch goKind {
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "float32", "float64":
		return "number"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "integer"
	}
	return goKind
}

// pathID reads a path wildcard.
func pathID(r *http.Request, name string) string { return r.PathValue(name) }

// maxQueryValue bounds every query parameter, in characters: free-text filters become LIKE
// patterns, and SQLite refuses long ones as too complex.
const maxQueryValue = 500

// pathIDNoun is a path wildcard of a route and the resource it names ("agent").
type pathIDNoun struct{ name, noun string }

// pathIDNouns lists the wildcards of a route path with the noun of the segment before each:
// /api/v1/data-sources/{id} gives {id, "data source"}.
func pathIDNouns(path string) []pathIDNoun {
	var out []pathIDNoun
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if !strings.HasPrefix(seg, "{") || i == 0 {
			continue
		}
		noun := strings.ReplaceAll(segs[i-1], "-", " ")
		switch {
		case strings.HasSuffix(noun, "ies"):
			noun = strings.TrimSuffix(noun, "ies") + "y"
		case strings.HasSuffix(noun, "s"):
			noun = strings.TrimSuffix(noun, "s")
		}
		if i > 1 && segs[i-2] == "chat" {
			noun = "chat " + noun
		}
		out = append(out, pathIDNoun{name: strings.Trim(seg, "{}"), noun: noun})
	}
	return out
}

// checkPathIDs answers 404 for a path id that no resource can have: net/http has already
// decoded %00 or %FF, and such bytes would reach the database (PostgreSQL refuses them with
// an error). The message names the resource only, never the bytes.
func checkPathIDs(r *http.Request, ids []pathIDNoun) error {
	for _, id := range ids {
		if v := r.PathValue(id.name); !utf8.ValidString(v) || hasControl(v) {
			return errorf(http.StatusNotFound, "%s not found", id.noun)
		}
	}
	return nil
}

// checkQuery refuses query parameters no filter can use: over maxQueryValue characters,
// invalid UTF-8 or holding NUL; 400 naming the parameter.
func checkQuery(r *http.Request) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	for name, vs := range r.URL.Query() {
		for _, v := range vs {
			switch {
			case !utf8.ValidString(name) || strings.IndexByte(name, 0) >= 0:
				return badRequest("query parameter names must be UTF-8 text without NUL")
			case !utf8.ValidString(v):
				return badRequest("query parameter %s is not valid UTF-8", name)
			case strings.IndexByte(v, 0) >= 0:
				return badRequest(`query parameter %s must not contain NUL (\u0000)`, name)
			case utf8.RuneCountInString(v) > maxQueryValue:
				return badRequest("query parameter %s must be at most %d characters", name, maxQueryValue)
			}
		}
	}
	return nil
}

// checkParams refuses what the route documents of its query parameters: one required and
// missing, one outside its enum, a negative last_event_id; 400 naming it. The route's params
// are the one source of both the document and this check.
func checkParams(r *http.Request, params []param) error {
	if len(params) == 0 {
		return nil // most routes: no query to parse
	}
	q := r.URL.Query()
	for _, p := range params {
		v := q.Get(p.name)
		switch {
		case v == "" && p.required:
			return badRequest("%s is required", p.name)
		case v == "":
		case len(p.enum) > 0 && !slices.Contains(p.enum, v):
			return badRequest("%s must be one of %s, got %q", p.name, strings.Join(p.enum, ", "), v)
		case p.name == lastEventIDParam:
			if n, err := strconv.Atoi(v); err != nil || n < 0 {
				return badRequest("%s must be a non-negative integer, got %q", p.name, v)
			}
		}
	}
	return nil
}

// hasControl reports whether s holds an ASCII control character (NUL, newline, DEL …).
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// byID answers with the one resource fn finds (or removes) by the path's {id} in the
// caller's workspace: the whole of every plain get and delete handler.
func byID[T any](s *Server, fn func(ctx context.Context, ws, id string) (T, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		v, err := fn(r.Context(), s.workspace(r), pathID(r, "id"))
		if err != nil {
			return err
		}
		writeData(w, http.StatusOK, v)
		return nil
	}
}

// versionByID answers with one version ({version_id}) of a versioned resource ({id}).
func versionByID[T any](s *Server, fn func(ctx context.Context, ws, id, versionID string) (T, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		v, err := fn(r.Context(), s.workspace(r), pathID(r, "id"), pathID(r, "version_id"))
		if err != nil {
			return err
		}
		writeData(w, http.StatusOK, v)
		return nil
	}
}

// promoteVersion makes {version_id} the active version of {id} and answers with {id}.
func promoteVersion[T any](s *Server, promote func(ctx context.Context, ws, id, versionID string) error,
	get func(ctx context.Context, ws, id string) (T, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ws, id := s.workspace(r), pathID(r, "id")
		if err := promote(r.Context(), ws, id, pathID(r, "version_id")); err != nil {
			return err
		}
		v, err := get(r.Context(), ws, id)
		if err != nil {
			return err
		}
		writeData(w, http.StatusOK, v)
		return nil
	}
}

// childList answers with one page of the items under {id} (versions, messages).
func childList[T any](s *Server, fn func(ctx context.Context, ws, id string, p domain.Page) ([]T, int, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := pageParams(r)
		if err != nil {
			return err
		}
		items, total, err := fn(r.Context(), s.workspace(r), pathID(r, "id"), p)
		if err != nil {
			return err
		}
		writeList(w, items, p, total)
		return nil
	}
}

// childListByStatus answers with one page of the items under {id} that are in the ?status
// state, or in any when it is empty. The route documents status as an enum, so the route
// table checks its value.
func childListByStatus[T any](s *Server, fn func(ctx context.Context, ws, id, status string, p domain.Page) ([]T, int, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := pageParams(r)
		if err != nil {
			return err
		}
		items, total, err := fn(r.Context(), s.workspace(r), pathID(r, "id"), r.URL.Query().Get("status"), p)
		if err != nil {
			return err
		}
		writeList(w, items, p, total)
		return nil
	}
}

// patchName checks a new name of a PATCH (not blank; the document bounds its length) and
// returns it trimmed; nil (not being changed) stays nil.
func patchName(name *string) (*string, error) {
	if err := domain.NotBlankIfSet("name", name); err != nil {
		return nil, err
	}
	return trimmed(name), nil
}

// trimmed is a PATCH's new text without surrounding white space; nil (not being changed)
// stays nil.
func trimmed(v *string) *string {
	if v == nil {
		return nil
	}
	return ptr(strings.TrimSpace(*v))
}

// namedPatch is a decoded PATCH body of a resource with a name and a description: the raw body
// (for fields sent as null) and the checked new name and description (nil: unchanged).
type namedPatch struct {
	body       []byte
	name, desc *string
}

// decodeNamedPatch decodes a PATCH body into dst and checks the name and description it
// carries (name and desc point into dst), as patchName does (the document bounds the description).
func decodeNamedPatch(w http.ResponseWriter, r *http.Request, dst any, name, desc **string) (namedPatch, error) {
	var np namedPatch
	var err error
	if np.body, err = decodeKeep(w, r, dst); err != nil {
		return np, err
	}
	if np.name, err = patchName(*name); err != nil {
		return np, err
	}
	np.desc = *desc
	return np, nil
}

// timeParams are the query parameters createdRange reads, documented as date-time.
var timeParams = []string{"created_after", "created_before"}

// createdRange reads the created_after and created_before query parameters (RFC 3339) into
// after and before; a malformed one is a 400 naming it.
func createdRange(q url.Values, after, before *domain.Time) error {
	for name, dst := range map[string]*domain.Time{timeParams[0]: after, timeParams[1]: before} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return badRequest("%s must be an RFC 3339 time such as 2026-01-02T15:04:05Z, got %q", name, v)
			}
			*dst = domain.Time{Time: t.UTC()}
		}
	}
	return nil
}

// numberRange reads an optional inclusive range of non-negative numbers from two query
// parameters (minName, maxName): a value that is not a number is a 400; a negative one, or a
// minimum above the maximum, a 422.
func numberRange[T int64 | float64](q url.Values, minName, maxName string, parse func(string) (T, error)) (lo, hi *T, err error) {
	read := func(name string) (*T, error) {
		v := q.Get(name)
		if v == "" {
			return nil, nil
		}
		n, err := parse(v)
		if err != nil {
			return nil, badRequest("%s must be a number, got %q", name, v)
		}
		if n < 0 {
			return nil, domain.Invalid(name, "must be at least 0, got %s", v)
		}
		return &n, nil
	}
	if lo, err = read(minName); err != nil {
		return nil, nil, err
	}
	if hi, err = read(maxName); err != nil {
		return nil, nil, err
	}
	if lo != nil && hi != nil && *lo > *hi {
		return nil, nil, domain.Invalid(minName, "is above %s (%v > %v)", maxName, *lo, *hi)
	}
	return lo, hi, nil
}

// parseFinite parses a finite decimal number (NaN and infinities are not numbers here).
func parseFinite(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
		err = errors.New("not finite")
	}
	return f, err
}

// parseInt64 parses a base-10 integer.
func parseInt64(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) }
