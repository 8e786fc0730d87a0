package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/agentplane/agentplane/internal/store"
)

// maxBodyBytes bounds every JSON request body.
const maxBodyBytes = 1 << 20

type envelope struct {
	Data    any    `json:"data"`
	Message string `json:"message"`
}

// Pagination describes where a list page sits; total_pages and pages carry the same value.
type Pagination struct {
	Page       int `json:"page"`
	Limit      int `json:"limit"`
	Total      int `json:"total"`
	TotalPages int `json:"total_pages"`
	Pages      int `json:"pages"`
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
func writeList[T any](w http.ResponseWriter, items []T, p store.Page, total int) {
	pages := 0
	if p.Limit > 0 {
		pages = (total + p.Limit - 1) / p.Limit
	}
	writeJSON(w, http.StatusOK, listEnvelope{Data: items, Pagination: Pagination{
		Page: p.Page, Limit: p.Limit, Total: total, TotalPages: pages, Pages: pages,
	}})
}

// pageParams reads page and limit; anything but an integer in range is a 400.
func pageParams(r *http.Request) (store.Page, error) {
	p := store.Page{Page: 1, Limit: 20}
	q := r.URL.Query()
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			return p, badRequest("page must be an integer of at least 1, got %q", v)
		}
		p.Page = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return p, badRequest("limit must be an integer from 1 to 100, got %q", v)
		}
		p.Limit = n
	}
	return p, nil
}

// decode reads a JSON body into dst. Malformed JSON, a wrong type or trailing data is a 400
// naming the field; an empty body decodes as {}. Unknown fields are ignored.
func decode(w http.ResponseWriter, r *http.Request, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return errorf(http.StatusUnsupportedMediaType, "Content-Type must be application/json, got %q", ct)
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

func decodeBytes(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return badRequest("request body must hold a single JSON object, found more data after it")
	}
	return nil
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
	if errors.As(err, &ae) {
		return ae
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

// required checks that a string field is present and not blank.
func required(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return invalid(field, "is required and must not be empty")
	}
	return nil
}

// maxLen checks a string's length in characters.
func maxLen(field, v string, n int) error {
	if len([]rune(v)) > n {
		return invalid(field, "must be at most %d characters", n)
	}
	return nil
}

// oneOf checks an enum value.
func oneOf(field, v string, allowed []string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return invalid(field, "must be one of %s, got %q", strings.Join(allowed, ", "), v)
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// pathID reads a path wildcard.
func pathID(r *http.Request, name string) string { return r.PathValue(name) }

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
func childList[T any](s *Server, fn func(ctx context.Context, ws, id string, p store.Page) ([]T, int, error)) handlerFunc {
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

// patchName checks a new name of a PATCH (not blank, at most 200 characters) and returns it
// trimmed; nil (not being changed) stays nil.
func patchName(name *string) (*string, error) {
	if name == nil {
		return nil, nil
	}
	if err := firstErr(required("name", *name), maxLen("name", *name, 200)); err != nil {
		return nil, err
	}
	return ptr(strings.TrimSpace(*name)), nil
}

// patchDescription checks a new description of a PATCH (at most 2000 characters); nil stays nil.
func patchDescription(d *string) (*string, error) {
	if d != nil {
		if err := maxLen("description", *d, 2000); err != nil {
			return nil, err
		}
	}
	return d, nil
}
