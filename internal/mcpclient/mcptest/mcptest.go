// Package mcptest runs real MCP servers, built with the official Go SDK, on httptest for
// tests and benchmarks: streamable HTTP or the older HTTP+SSE transport, a set of tools
// that answer, fail, take their time or return structured content and images, and counts
// of what the server saw.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handler answers one call of a tool with its raw JSON arguments.
type Handler func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error)

// Tool is a tool the server offers.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage // the input schema; default {"type":"object"}
	Handle      Handler
}

// Server is a running MCP server.
type Server struct {
	*httptest.Server
	// Endpoint is the URL clients connect to: the server's /mcp (streamable HTTP) or /sse.
	Endpoint string
	MCP      *mcp.Server

	// Header, when set before the first request, must be present with this value on every
	// request, else the server answers 401 (a credential check).
	Header, HeaderValue string

	busy      atomic.Int64 // ns spent answering POSTs (requests and notifications)
	calls     atomic.Int64 // tools/call requests
	cancelled atomic.Int64 // calls whose context ended before they finished
	mu        sync.Mutex
	args      []string                 // the arguments of every call, in order
	sessions  map[mcp.Session]struct{} // the sessions tool requests came in on
}

// Transports a Server can speak.
const (
	StreamableHTTP = "streamable_http"
	SSE            = "sse"
)

// New starts a server on transport offering tools (Standard() when none are given).
// Close it when done.
func New(transport string, tools ...Tool) *Server {
	if len(tools) == 0 {
		tools = Standard()
	}
	s := &Server{sessions: map[mcp.Session]struct{}{}, MCP: mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1.0.0"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})}
	s.MCP.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			// A session is counted by the tool requests it carries, not by its handshake:
			// the SDK's client probes with server/discover (SEP-2575; over streamable HTTP
			// on a session of its own) before initialize, and one SSE run in about 40 under
			// -race saw no initialize at all (TestTransports: "0 sessions, 6 calls").
			if strings.HasPrefix(method, "tools/") {
				s.mu.Lock()
				s.sessions[req.GetSession()] = struct{}{}
				s.mu.Unlock()
			}
			if method == "tools/call" {
				s.calls.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	for _, t := range tools {
		s.add(t)
	}
	get := func(*http.Request) *mcp.Server { return s.MCP }
	var h http.Handler
	path := "/mcp"
	switch transport {
	case StreamableHTTP:
		h = mcp.NewStreamableHTTPHandler(get, nil)
	case SSE:
		h, path = mcp.NewSSEHandler(get, nil), "/sse"
	default:
		panic("mcptest: unknown transport " + transport)
	}
	mux := http.NewServeMux()
	mux.Handle(path, s.auth(h))
	s.Server = httptest.NewServer(mux)
	s.Endpoint = s.URL + path
	return s
}

// add registers one tool, counting cancellations and recording arguments.
func (s *Server) add(t Tool) {
	schema := t.Schema
	if schema == nil {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	s.MCP.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.mu.Lock()
			s.args = append(s.args, string(req.Params.Arguments))
			s.mu.Unlock()
			res, err := t.Handle(ctx, req.Params.Arguments)
			if ctx.Err() != nil {
				s.cancelled.Add(1)
			}
			return res, err
		})
}

func (s *Server) auth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Header != "" && r.Header.Get(s.Header) != s.HeaderValue {
			http.Error(w, "missing or wrong "+s.Header, http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		h.ServeHTTP(w, r)
		s.busy.Add(int64(time.Since(start)))
	})
}

// Busy is the time the server spent answering POSTs. Over streamable HTTP, where a POST's
// response carries the answer, that is the server's own share of a client's calls.
func (s *Server) Busy() time.Duration { return time.Duration(s.busy.Load()) }

// Close ends the server's sessions (an SSE session is a request in flight) and stops the
// server.
func (s *Server) Close() {
	for ss := range s.MCP.Sessions() {
		ss.Close()
	}
	s.Server.Close()
}

// Sessions is how many sessions clients listed or called tools on.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Open is how many sessions are open on the server now.
func (s *Server) Open() int {
	n := 0
	for range s.MCP.Sessions() {
		n++
	}
	return n
}

// Calls is how many tool calls the server received.
func (s *Server) Calls() int { return int(s.calls.Load()) }

// Cancelled is how many tool calls ended because their context did (the client cancelled
// them or went away).
func (s *Server) Cancelled() int { return int(s.cancelled.Load()) }

// Args returns the raw arguments of every call so far, in order.
func (s *Server) Args() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.args...)
}

// Text is a result with one text item.
func Text(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// Standard returns the tools tests use:
//   - lookup_order {"order_id"}: "Order <id> shipped on 2024-05-02 by DHL."
//   - fail: an error result, "the orders database is down"
//   - slow {"ms"}: waits ms milliseconds (or until cancelled), then "done after <ms> ms"
//   - stats: structured content {"orders": 42, "open": 3} with its JSON as text
//   - chart: a text and a PNG image
func Standard() []Tool {
	object := func(props string, required ...string) json.RawMessage {
		req, _ := json.Marshal(required)
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `}`)
	}
	return []Tool{
		{Name: "lookup_order", Description: "Look up an order by id.", Schema: object(`"order_id":{"type":"string"}`, "order_id"),
			Handle: func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
				var a struct {
					OrderID string `json:"order_id"`
				}
				if err := json.Unmarshal(args, &a); err != nil || a.OrderID == "" {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "order_id is required"}}}, nil
				}
				return Text("Order " + a.OrderID + " shipped on 2024-05-02 by DHL."), nil
			}},
		{Name: "fail", Description: "Always fails.",
			Handle: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the orders database is down"}}}, nil
			}},
		{Name: "slow", Description: "Takes its time.", Schema: object(`"ms":{"type":"integer"}`),
			Handle: func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
				var a struct{ MS int }
				_ = json.Unmarshal(args, &a)
				select {
				case <-time.After(time.Duration(a.MS) * time.Millisecond):
					return Text(fmt.Sprintf("done after %d ms", a.MS)), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}},
		{Name: "stats", Description: "Order statistics.",
			Handle: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{StructuredContent: map[string]any{"orders": 42, "open": 3},
					Content: []mcp.Content{&mcp.TextContent{Text: `{"open":3,"orders":42}`}}}, nil
			}},
		{Name: "chart", Description: "A chart of orders.",
			Handle: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Orders per day"},
					&mcp.ImageContent{MIMEType: "image/png", Data: []byte(strings.Repeat("x", 64))}}}, nil
			}},
	}
}
