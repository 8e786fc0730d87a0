// Package mcpclient is agentplane's client of MCP servers, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): it opens a session over streamable HTTP, the
// older HTTP+SSE transport or, when allowed, a local command's stdio, lists the server's
// tools and calls them, and turns a tool's result into the text a model reads.
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The transports an MCP server is reached over.
const (
	// StreamableHTTP is the current HTTP transport (MCP 2025-03-26 and later): JSON-RPC
	// requests POSTed to one endpoint, answered with JSON or an event stream.
	StreamableHTTP = "streamable_http"
	// SSE is the older HTTP+SSE transport (MCP 2024-11-05): an event stream opened with GET
	// that names the endpoint to POST requests to.
	SSE = "sse"
	// Stdio starts a local command and speaks JSON-RPC over its stdin and stdout.
	Stdio = "stdio"
)

// Transports lists the transports, the default first.
var Transports = []string{StreamableHTTP, SSE, Stdio}

// ErrStdioDisabled is the error of connecting to a stdio server when Options.AllowStdio is
// off: a stdio server is a command run on the host, so an operator has to allow it.
var ErrStdioDisabled = errors.New("stdio MCP servers are disabled on this server; start it with --allow-stdio-mcp (ALLOW_STDIO_MCP=true) to run them")

// Server says how to reach one MCP server.
type Server struct {
	Transport string // StreamableHTTP, SSE or Stdio
	// URL is the endpoint of the HTTP transports.
	URL string
	// Header is sent with every HTTP request (the credential: Authorization or a custom header).
	Header http.Header
	// Command and Args start a stdio server, with Env ("NAME=value") beside the few
	// variables it inherits from this process (PATH, HOME …).
	Command string
	Args    []string
	Env     []string
}

// Options configure a Client.
type Options struct {
	// AllowStdio lets the client start stdio servers (serve --allow-stdio-mcp).
	AllowStdio bool
	// CheckDial, when set, is called with the network and the resolved address
	// ("10.1.2.3:443") of every connection the client is about to open; an error refuses the
	// connection. It is where an egress policy (refusing private addresses, say) plugs in.
	CheckDial func(ctx context.Context, network, address string) error
	// Version is the client version sent to servers in the initialize handshake.
	Version string
}

// Client opens sessions with MCP servers. It is safe for concurrent use; its HTTP
// connections are pooled across sessions.
type Client struct {
	opts      Options
	sdk       *mcp.Client
	transport *http.Transport
	closing   sync.WaitGroup // sessions ending in the background
}

// dialTimeout bounds the opening of one TCP connection; the caller's context bounds the rest.
const dialTimeout = 10 * time.Second

// New returns a client.
func New(o Options) *Client {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	if check := o.CheckDial; check != nil {
		d.ControlContext = func(ctx context.Context, network, address string, _ syscall.RawConn) error {
			return check(ctx, network, address)
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = d.DialContext
	tr.MaxIdleConnsPerHost = 32
	if o.Version == "" {
		o.Version = "dev"
	}
	// No capabilities: agentplane offers servers no roots, sampling or elicitation.
	sdk := mcp.NewClient(&mcp.Implementation{Name: "agentplane", Version: o.Version},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	return &Client{opts: o, sdk: sdk, transport: tr}
}

// Close waits for the sessions already closed to finish ending, then closes the idle HTTP
// connections. Call it once the sessions' owners are done.
func (c *Client) Close() {
	c.closing.Wait()
	c.transport.CloseIdleConnections()
}

// Connect opens a session with the server: the transport's connection and the MCP
// initialize handshake, bounded by ctx. The session outlives ctx: it lasts until Close.
func (c *Client) Connect(ctx context.Context, s Server) (*Session, error) {
	t, err := c.transportFor(s)
	if err != nil {
		return nil, err
	}
	// A transport keeps the context it connects with for the connection's life (the SSE
	// transport's event stream is a request made with it), so it gets one that ends with the
	// session, or with ctx while the handshake is under way.
	life, end := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, end)
	cs, err := c.sdk.Connect(ctx, connectWith{t, life}, nil)
	if !stop() && err == nil { // ctx ended just as the handshake finished
		cs.Close()
		err = context.Cause(ctx)
	}
	if err != nil {
		end()
		return nil, fmt.Errorf("connect to %s: %w", s.where(), err)
	}
	return &Session{cs: cs, end: end, c: c}, nil
}

// connectWith connects a transport with the session's context rather than the
// handshake's.
type connectWith struct {
	mcp.Transport
	ctx context.Context
}

func (t connectWith) Connect(context.Context) (mcp.Connection, error) {
	return t.Transport.Connect(t.ctx)
}

// transportFor builds the SDK transport of s, without connecting.
func (c *Client) transportFor(s Server) (mcp.Transport, error) {
	switch s.Transport {
	case StreamableHTTP, "":
		return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: c.httpClient(s.Header),
			// Only request and response: no standing GET stream per session for
			// server-initiated messages agentplane does not handle, and no reconnection
			// attempts that would outlast a tool call's timeout.
			DisableStandaloneSSE: true, MaxRetries: -1}, nil
	case SSE:
		return &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: c.httpClient(s.Header)}, nil
	case Stdio:
		if !c.opts.AllowStdio {
			return nil, ErrStdioDisabled
		}
		cmd := exec.Command(s.Command, s.Args...)
		cmd.Env = append(inheritedEnv(), s.Env...)
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
	}
	return nil, fmt.Errorf("unknown MCP transport %q", s.Transport)
}

// inheritedVars are the variables of this process a stdio server gets, as the reference
// SDKs do: enough to find and run its command (npx and uvx need HOME and PATH), and none of
// this server's own secrets (SECRET_KEY, DATABASE_URL …).
var inheritedVars = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG"}

func inheritedEnv() []string {
	var env []string
	for _, k := range inheritedVars {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func (c *Client) httpClient(h http.Header) *http.Client {
	if len(h) == 0 {
		return &http.Client{Transport: c.transport}
	}
	return &http.Client{Transport: headerTransport{base: c.transport, header: h}}
}

// where names the server in errors: its URL, or its command.
func (s Server) where() string {
	if s.Transport == Stdio {
		return "command " + s.Command
	}
	return s.URL
}

// headerTransport adds the server's headers (its credential) to every request.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.header {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// Tool is one tool a server offers, as its tools/list reports it.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage // a JSON Schema of the arguments; nil when the server sent none
}

// Session is one open session with an MCP server. Close it when done.
type Session struct {
	cs  *mcp.ClientSession
	end context.CancelFunc // ends the connection's context
	c   *Client
	// cancelled is when a call last ended with its context (Unix ns; 0: never).
	cancelled atomic.Int64
}

// ListTools lists every tool of the server, following its pages.
func (s *Session) ListTools(ctx context.Context) ([]Tool, error) {
	var out []Tool
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		var schema json.RawMessage
		if t.InputSchema != nil {
			if schema, err = json.Marshal(t.InputSchema); err != nil {
				return nil, fmt.Errorf("list tools: input schema of %s: %w", t.Name, err)
			}
		}
		out = append(out, Tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return out, nil
}

// CallTool calls a tool with args (a JSON object; empty means {}). An error is a call that
// did not get a result: the session is closed, ctx ended, the server answered with a
// protocol error (an unknown tool, say). A tool that ran and failed is a Result with
// IsError.
func (s *Session) CallTool(ctx context.Context, name string, args json.RawMessage) (*Result, error) {
	var a any = map[string]any{}
	if len(args) > 0 {
		if !json.Valid(args) {
			return nil, fmt.Errorf("the arguments are not valid JSON")
		}
		a = args
	}
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: a})
	if err != nil {
		if ctx.Err() != nil {
			s.cancelled.Store(time.Now().UnixNano())
		}
		return nil, err
	}
	return resultOf(res), nil
}

// cancelGrace is how long a session that just had a call cancelled lives on before it is
// closed: the SDK tells the server of the cancellation (notifications/cancelled) from a
// goroutine of its own, and drops the notification once the session is closing, so the
// server would run the call to its end (and hold up the session's end while it does).
const cancelGrace = 200 * time.Millisecond

// Close ends the session: for streamable HTTP, telling the server so; for stdio, stopping
// the command. It returns at once; the rest happens in the background, and Client.Close
// waits for it.
func (s *Session) Close() error {
	s.c.closing.Go(func() {
		defer s.end()
		if at := s.cancelled.Load(); at != 0 {
			time.Sleep(cancelGrace - time.Since(time.Unix(0, at)))
		}
		_ = s.cs.Close() // the server may be gone; nothing is left to do about it
	})
	return nil
}
