package datasource

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// An http data source's query is a path relative to config.base_url, with an optional query
// string. The request is config.method (GET by default) with config.headers and the
// credential's header; for GET, an object of params adds query parameters, for POST params
// are the JSON body. The response must be JSON of at most max_bytes, and is shaped like a SQL
// result:
//   - an array of objects: one row per object, one column per key (in the order keys first
//     appear);
//   - an object holding such an array under data, items, results, records or rows: that array;
//   - any other object: one row, one column per key;
//   - an array of other values, or a single value: one column named value.
// Column types are the JSON types: string, integer, number, boolean, object, array (null
// until a value says otherwise). Redirects are not followed.

// envelopeKeys are where APIs commonly wrap a list of records.
var envelopeKeys = []string{"data", "items", "results", "records", "rows"}

// CheckPath accepts the query of an HTTP data source: a path relative to the source's
// base_url with an optional query string ("/products?category=tea").
func CheckPath(query string) (*url.URL, error) {
	q := strings.TrimSpace(query)
	switch {
	case q == "":
		return nil, domain.Invalid("query", "is required: give a path such as /items?limit=10")
	case len(q) > 2048:
		return nil, domain.Invalid("query", "must be at most 2048 characters")
	case !strings.HasPrefix(q, "/") || strings.HasPrefix(q, "//"):
		return nil, domain.Invalid("query", "must be a path starting with / relative to the data source's base_url, e.g. /items?limit=10")
	case strings.ContainsAny(q, "\\\x00\r\n\t "):
		return nil, domain.Invalid("query", "must not contain spaces, backslashes or control characters")
	}
	u, err := url.Parse(q)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return nil, domain.Invalid("query", "must be a path relative to the data source's base_url")
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == ".." || seg == "." {
			return nil, domain.Invalid("query", "must not contain . or .. path segments")
		}
	}
	return u, nil
}

// queryHTTP sends the request of an http data source and shapes its JSON answer.
func (l *Live) queryHTTP(ctx context.Context, ds *domain.DataSource, cfg *Config, req Request, bound int) (*Result, error) {
	if cfg.BaseURL == "" {
		return nil, sourceErr("data source %s has no config.base_url; create and promote a version that sets it", ds.ID)
	}
	path, err := CheckPath(req.Query)
	if err != nil {
		return nil, err
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, sourceErr("data source %s has an invalid config.base_url", ds.ID)
	}
	target := *base
	target.Path, target.RawPath = strings.TrimRight(base.Path, "/")+path.Path, ""
	q := base.Query()
	for k, v := range cfg.QueryParams {
		q.Set(k, v)
	}
	for k, vs := range path.Query() {
		q[k] = vs
	}
	var body io.Reader
	switch p := req.Params.(type) {
	case nil:
	case map[string]any:
		if cfg.Method == http.MethodGet {
			for k, v := range p {
				q.Set(k, ParamText(v))
			}
			break
		}
		b, _ := json.Marshal(p)
		body = bytes.NewReader(b)
	case []any:
		if cfg.Method == http.MethodGet {
			return nil, domain.Invalid("params", "must be an object (query parameters) for a GET http data source")
		}
		b, _ := json.Marshal(p)
		body = bytes.NewReader(b)
	default:
		return nil, domain.Invalid("params", "must be an array or an object")
	}
	target.RawQuery = q.Encode()

	ctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.Timeout())*time.Millisecond)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, cfg.Method, target.String(), body)
	if err != nil {
		return nil, domain.Invalid("query", "does not make a valid request: %v", err)
	}
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", "agentplane-data-source")
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	for k, v := range cfg.Headers {
		hreq.Header.Set(k, v)
	}
	if err := l.authorize(ctx, ds, hreq); err != nil {
		return nil, err
	}
	resp, err := l.http.Do(hreq)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, &QueryError{Message: fmt.Sprintf("timed out after %d ms (config.timeout_ms)", cfg.Timeout()), Timeout: true}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, unreachable(ds, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, int64(cfg.MaxBytes)+1))
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, &QueryError{Message: fmt.Sprintf("timed out after %d ms (config.timeout_ms)", cfg.Timeout()), Timeout: true}
		}
		return nil, unreachable(ds, err)
	}
	what := cfg.Method + " " + path.Path
	switch {
	case resp.StatusCode >= 500:
		return nil, &SourceError{Message: fmt.Sprintf("data source %s answered %s %s: %s", ds.ID, what, resp.Status, snippet(raw)), Unreachable: true}
	case resp.StatusCode >= 300:
		return nil, &QueryError{Message: fmt.Sprintf("%s answered %s: %s", what, resp.Status, snippet(raw))}
	case len(raw) > cfg.MaxBytes:
		return nil, &QueryError{Message: fmt.Sprintf("%s answered more than config.max_bytes (%d bytes)", what, cfg.MaxBytes)}
	}
	res, err := shapeJSON(raw, bound)
	if err != nil {
		return nil, &QueryError{Message: fmt.Sprintf("%s did not answer JSON: %v", what, err)}
	}
	return res, nil
}

// authorize adds the credential: bearer_token and oauth2 as Authorization: Bearer; api_key
// in metadata.header (default X-API-Key), after metadata.scheme when set ("Bearer");
// basic_auth ("user:password") as Authorization: Basic.
func (l *Live) authorize(ctx context.Context, ds *domain.DataSource, r *http.Request) error {
	if ds.CredentialID == nil {
		return nil
	}
	c, v, err := l.secret(ctx, ds)
	if err != nil {
		return err
	}
	switch c.Type {
	case "bearer_token", "oauth2":
		r.Header.Set("Authorization", "Bearer "+v)
	case "api_key":
		header, _ := c.Metadata["header"].(string)
		if header == "" || !validHeaderName(header) {
			header = "X-API-Key"
		}
		if scheme, _ := c.Metadata["scheme"].(string); scheme != "" {
			v = scheme + " " + v
		}
		r.Header.Set(header, v)
	case "basic_auth":
		r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(v)))
	default:
		return sourceErr("the credential %s of data source %s is a %s credential; an http data source takes a bearer_token, oauth2, api_key or basic_auth credential", c.ID, ds.ID, c.Type)
	}
	return nil
}

// ParamText writes a params value as a query parameter.
func ParamText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case map[string]any, []any:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return fmt.Sprint(v)
}

// snippet is the start of a response body, for error messages.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}

// shapeJSON turns a JSON document into a result (see the package's http notes).
func shapeJSON(raw []byte, bound int) (*Result, error) {
	raw = bytes.TrimSpace(raw)
	if !json.Valid(raw) {
		return nil, errors.New("the body is not valid JSON")
	}
	var items []json.RawMessage
	switch raw[0] {
	case '[':
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, err
		}
		items = []json.RawMessage{raw}
		for _, k := range envelopeKeys {
			if v, ok := obj[k]; ok && allObjects(v) {
				items = nil
				_ = json.Unmarshal(v, &items)
				break
			}
		}
	default:
		items = []json.RawMessage{raw}
	}
	res := &Result{Rows: [][]any{}}
	if len(items) > bound {
		items, res.Truncated = items[:bound], true
	}
	if !allObjectsList(items) {
		res.Columns = []Column{{Name: "value", Type: "null"}}
		for _, it := range items {
			v, err := decodeValue(it)
			if err != nil {
				return nil, err
			}
			res.Rows = append(res.Rows, []any{v})
			if res.Columns[0].Type == "null" {
				res.Columns[0].Type = jsonType(v)
			}
		}
		return res, nil
	}
	index := map[string]int{}
	var objs []map[string]any
	for _, it := range items {
		keys, err := objectKeys(it)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if _, ok := index[k]; !ok {
				index[k] = len(res.Columns)
				res.Columns = append(res.Columns, Column{Name: k, Type: "null"})
			}
		}
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(it))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			return nil, err
		}
		objs = append(objs, m)
	}
	for _, m := range objs {
		row := make([]any, len(res.Columns))
		for k, v := range m {
			i := index[k]
			row[i] = v
			if res.Columns[i].Type == "null" {
				res.Columns[i].Type = jsonType(v)
			}
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

func decodeValue(raw json.RawMessage) (any, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	err := d.Decode(&v)
	return v, err
}

func allObjects(raw json.RawMessage) bool {
	var items []json.RawMessage
	return json.Unmarshal(raw, &items) == nil && allObjectsList(items)
}

func allObjectsList(items []json.RawMessage) bool {
	if len(items) == 0 {
		return false
	}
	for _, it := range items {
		if len(it) == 0 || it[0] != '{' {
			return false
		}
	}
	return true
}

// objectKeys lists an object's keys in document order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	if _, err := d.Token(); err != nil { // {
		return nil, err
	}
	var keys []string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "string"
}
