// Package client is the Go SDK of the agentplane API. It covers every route, decodes the
// response envelope, and returns *Error for API failures.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls one agentplane server or emulator.
type Client struct {
	base      string
	http      *http.Client
	apiKey    string
	bearer    string
	workspace string
	userAgent string
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sends X-API-Key on every request.
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithBearer sends Authorization: Bearer <token> (a JWT from Login) on every request.
func WithBearer(token string) Option { return func(c *Client) { c.bearer = token } }

// WithWorkspace sends X-Workspace-ID on every request.
func WithWorkspace(id string) Option { return func(c *Client) { c.workspace = id } }

// WithUserAgent sends User-Agent on every request, naming the program that calls (the CLI
// sends agentplane-cli/VERSION).
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithHTTPClient replaces the default HTTP client (which has a 5-minute timeout).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// New returns a client for the server at baseURL, e.g. "http://localhost:8080".
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), http: &http.Client{Timeout: 5 * time.Minute}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Error is an API failure: the HTTP status and the envelope's error code and message.
type Error struct {
	Status    int
	Code      string
	Message   string
	RequestID string
	Header    http.Header
}

func (e *Error) Error() string {
	return fmt.Sprintf("agentplane: %d %s: %s (request %s)", e.Status, e.Code, e.Message, e.RequestID)
}

// List is one page of a list endpoint.
type List[T any] struct {
	Data       []T        `json:"data"`
	Pagination Pagination `json:"pagination"`
}

// All yields every item of a list, page after page, following each page's next cursor: each
// page costs the server what the first does, and items created during the walk neither repeat
// nor push others out of it. page fetches the page at cursor ("" for the first), e.g.
//
//	for x, err := range client.All(func(cursor string) (*client.List[client.Execution], error) {
//		return c.ExecutionList(ctx, client.ListExecutionsParams{Status: "failed", Limit: 100, Cursor: cursor})
//	}) { … }
//
// A failed page ends the walk after yielding its error.
func All[T any](page func(cursor string) (*List[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		cursor := ""
		for {
			l, err := page(cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range l.Data {
				if !yield(item, nil) {
					return
				}
			}
			if l.Pagination.NextCursor == nil || *l.Pagination.NextCursor == "" {
				return
			}
			cursor = *l.Pagination.NextCursor
		}
	}
}

// RequestOption adjusts one request, e.g. with an Idempotency-Key.
type RequestOption func(*http.Request)

// WithIdempotencyKey makes a creating POST safe to retry.
func WithIdempotencyKey(key string) RequestOption {
	return func(r *http.Request) { r.Header.Set("Idempotency-Key", key) }
}

// WithLastEventID resumes a stream after frame id: a retried ChatStream (with the same
// Idempotency-Key) sends only the frames after it.
func WithLastEventID(id int) RequestOption {
	return func(r *http.Request) { r.Header.Set("Last-Event-ID", strconv.Itoa(id)) }
}

// WithHeader sets any header on one request.
func WithHeader(name, value string) RequestOption {
	return func(r *http.Request) { r.Header.Set(name, value) }
}

// newRequest builds a request with the client's credentials.
func (c *Client) newRequest(ctx context.Context, method, path string, query url.Values, body any) (*http.Request, error) {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		req.Header.Set("X-API-Key", c.apiKey)
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	if c.workspace != "" {
		req.Header.Set("X-Workspace-ID", c.workspace)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	return req, nil
}

// do sends a request and decodes the envelope's data into out (which may be nil).
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any, opts ...RequestOption) error {
	req, err := c.newRequest(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode >= 400 {
		return decodeError(resp, raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode response of %s %s: %w", method, path, err)
	}
	return nil
}

func decodeError(resp *http.Response, raw []byte) error {
	e := &Error{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Request-ID"), Header: resp.Header}
	var env struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	var openai OpenAIErrorBody
	switch {
	case json.Unmarshal(raw, &env) == nil && env.Error != "":
		e.Code, e.Message = env.Error, env.Message
	case json.Unmarshal(raw, &openai) == nil && openai.Error.Code != "":
		// The OpenAI-compatible endpoint's error object.
		e.Code, e.Message = openai.Error.Code, openai.Error.Message
	default:
		e.Code, e.Message = "http_"+strconv.Itoa(resp.StatusCode), strings.TrimSpace(string(raw))
	}
	return e
}

// get, send and list are the typed shapes of do.
func get[T any](ctx context.Context, c *Client, path string, query url.Values) (*T, error) {
	var env struct {
		Data *T `json:"data"`
	}
	if err := c.do(ctx, http.MethodGet, path, query, nil, &env); err != nil {
		return nil, err
	}
	return env.Data, nil
}

func send[T any](ctx context.Context, c *Client, method, path string, body any, opts ...RequestOption) (*T, error) {
	var env struct {
		Data *T `json:"data"`
	}
	if err := c.do(ctx, method, path, nil, body, &env, opts...); err != nil {
		return nil, err
	}
	return env.Data, nil
}

func list[T any](ctx context.Context, c *Client, path string, query url.Values) (*List[T], error) {
	var l List[T]
	if err := c.do(ctx, http.MethodGet, path, query, nil, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// Raw sends any request and returns the status and body as they are; for endpoints the SDK
// has no method for, and for tests.
func (c *Client) Raw(ctx context.Context, method, path string, body []byte, header http.Header) (int, []byte, http.Header, error) {
	req, err := c.newRequest(ctx, method, path, nil, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, resp.Header, err
}

// Health checks the server.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	return get[Health](ctx, c, "/health", nil)
}

// StoreStats returns the emulator's row count per resource.
func (c *Client) StoreStats(ctx context.Context) (map[string]int, error) {
	m, err := get[map[string]int](ctx, c, "/admin/store/stats", nil)
	if err != nil {
		return nil, err
	}
	return *m, nil
}

// Reset clears the emulator and reloads its seed and fixtures; it returns the new counts.
func (c *Client) Reset(ctx context.Context) (map[string]int, error) {
	m, err := send[map[string]int](ctx, c, http.MethodPost, "/admin/reset", nil)
	if err != nil {
		return nil, err
	}
	return *m, nil
}

func pathEscape(id string) string { return url.PathEscape(id) }
