package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
)

// stdioServerEnv makes the test binary an MCP server on its stdio (the stdio transport's test).
const stdioServerEnv = "MCPCLIENT_TEST_STDIO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) == "1" {
		s := mcp.NewServer(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "The value of MCP_TEST_NAME."},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return mcptest.Text("I am " + os.Getenv("MCP_TEST_NAME") + os.Getenv("MCPCLIENT_TEST_SECRET")), nil, nil
			})
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func newClient(t *testing.T, o Options) *Client {
	c := New(o)
	t.Cleanup(c.Close)
	return c
}

func connect(t *testing.T, c *Client, s Server) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sess, err := c.Connect(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// TestTransports lists and calls tools over streamable HTTP and the older SSE transport,
// against a real server built with the same SDK: a result, an error result, structured
// content, an image, a protocol error for an unknown tool, and one session for all calls.
func TestTransports(t *testing.T) {
	for _, transport := range []string{StreamableHTTP, SSE} {
		t.Run(transport, func(t *testing.T) {
			srv := mcptest.New(transport)
			defer srv.Close()
			c := newClient(t, Options{})
			sess := connect(t, c, Server{Transport: transport, URL: srv.Endpoint})
			ctx := context.Background()

			tools, err := sess.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			if strings.Join(names, ",") != "chart,fail,lookup_order,slow,stats" {
				t.Fatalf("tools %v", names)
			}
			for _, tl := range tools {
				if tl.Name == "lookup_order" && (tl.Description != "Look up an order by id." || !strings.Contains(string(tl.InputSchema), `"order_id"`)) {
					t.Errorf("lookup_order listed as %+v (%s)", tl, tl.InputSchema)
				}
			}

			for _, c := range []struct {
				tool, args, text string
				isError          bool
			}{
				{"lookup_order", `{"order_id":"A-17"}`, "Order A-17 shipped on 2024-05-02 by DHL.", false},
				{"lookup_order", ``, "order_id is required", true},
				{"fail", `{}`, "the orders database is down", true},
				{"stats", `{}`, `{"open":3,"orders":42}`, false},
				{"chart", `{}`, "Orders per day\n[image image/png, 64 bytes]", false},
			} {
				res, err := sess.CallTool(ctx, c.tool, json.RawMessage(c.args))
				if err != nil {
					t.Fatalf("%s: %v", c.tool, err)
				}
				if res.Text != c.text || res.IsError != c.isError {
					t.Errorf("%s(%s): %+v, want %q (error %v)", c.tool, c.args, res, c.text, c.isError)
				}
			}
			if _, err := sess.CallTool(ctx, "nope", nil); err == nil || !strings.Contains(err.Error(), "nope") {
				t.Errorf("unknown tool: %v", err)
			}
			if _, err := sess.CallTool(ctx, "lookup_order", json.RawMessage(`{"order_id":`)); err == nil {
				t.Error("malformed arguments were sent")
			}
			if srv.Sessions() != 1 || srv.Calls() != 6 {
				t.Errorf("%d sessions, %d calls on the server", srv.Sessions(), srv.Calls())
			}
		})
	}
}

// TestTimeoutAndCancel: a call whose context ends returns at once with the context's error,
// and the server sees the call cancelled; the session stays usable.
func TestTimeoutAndCancel(t *testing.T) {
	for _, transport := range []string{StreamableHTTP, SSE} {
		t.Run(transport, func(t *testing.T) {
			srv := mcptest.New(transport)
			defer srv.Close()
			sess := connect(t, newClient(t, Options{}), Server{Transport: transport, URL: srv.Endpoint})

			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			start := time.Now()
			_, err := sess.CallTool(ctx, "slow", json.RawMessage(`{"ms":10000}`))
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
				t.Fatalf("slow call: %v after %v", err, time.Since(start))
			}

			ctx, cancel = context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			if _, err := sess.CallTool(ctx, "slow", json.RawMessage(`{"ms":10000}`)); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled call: %v", err)
			}
			waitFor(t, "the server to see both calls cancelled", func() bool { return srv.Cancelled() == 2 })

			res, err := sess.CallTool(context.Background(), "lookup_order", json.RawMessage(`{"order_id":"B-2"}`))
			if err != nil || res.IsError {
				t.Fatalf("call after the timeouts: %+v %v", res, err)
			}
		})
	}
}

// TestServerGone: calls on a session whose server went away fail (they do not hang), and a
// new connection is refused.
func TestServerGone(t *testing.T) {
	for _, transport := range []string{StreamableHTTP, SSE} {
		t.Run(transport, func(t *testing.T) {
			srv := mcptest.New(transport)
			c := newClient(t, Options{})
			sess := connect(t, c, Server{Transport: transport, URL: srv.Endpoint})
			srv.CloseClientConnections()
			srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := sess.CallTool(ctx, "lookup_order", json.RawMessage(`{"order_id":"A"}`)); err == nil || ctx.Err() != nil {
				t.Fatalf("call on a gone server: %v (context: %v)", err, ctx.Err())
			}
			if _, err := c.Connect(ctx, Server{Transport: transport, URL: srv.Endpoint}); err == nil || ctx.Err() != nil {
				t.Fatalf("connect to a gone server: %v", err)
			}
		})
	}
}

// TestHeader: the server's header (its credential) goes with every request.
func TestHeader(t *testing.T) {
	srv := mcptest.New(StreamableHTTP)
	defer srv.Close()
	srv.Header, srv.HeaderValue = "Authorization", "Bearer tok-123"
	c := newClient(t, Options{})
	ctx := context.Background()
	if _, err := c.Connect(ctx, Server{URL: srv.Endpoint}); err == nil {
		t.Fatal("connected without the credential")
	}
	sess := connect(t, c, Server{URL: srv.Endpoint, Header: http.Header{"Authorization": {"Bearer tok-123"}}})
	if _, err := sess.CallTool(ctx, "lookup_order", json.RawMessage(`{"order_id":"A"}`)); err != nil {
		t.Fatal(err)
	}
}

// TestCheckDial: the dial hook sees the resolved address of every connection and can
// refuse it (the egress policy's seam).
func TestCheckDial(t *testing.T) {
	srv := mcptest.New(StreamableHTTP)
	defer srv.Close()
	var seen []string
	refuse := errors.New("refused by policy")
	c := newClient(t, Options{CheckDial: func(_ context.Context, network, address string) error {
		seen = append(seen, network+" "+address)
		return refuse
	}})
	_, err := c.Connect(context.Background(), Server{URL: srv.Endpoint})
	if !errors.Is(err, refuse) {
		t.Fatalf("connect: %v", err)
	}
	if len(seen) == 0 || seen[0] != "tcp4 "+srv.Listener.Addr().String() {
		t.Fatalf("dial hook saw %q", seen)
	}
}

// TestStdio: a stdio server starts only when allowed, gets the extra environment but not
// this process's, and stops when the session closes.
func TestStdio(t *testing.T) {
	t.Setenv("MCPCLIENT_TEST_SECRET", " and I know your secret")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := Server{Transport: Stdio, Command: self, Env: []string{stdioServerEnv + "=1", "MCP_TEST_NAME=stdio"}}
	if _, err := newClient(t, Options{}).Connect(context.Background(), s); !errors.Is(err, ErrStdioDisabled) {
		t.Fatalf("stdio without AllowStdio: %v", err)
	}
	sess := connect(t, newClient(t, Options{AllowStdio: true}), s)
	res, err := sess.CallTool(context.Background(), "whoami", nil)
	if err != nil || res.Text != "I am stdio" {
		t.Fatalf("whoami: %+v %v", res, err)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTransportFor: every transport builds its SDK transport without connecting.
func TestTransportFor(t *testing.T) {
	c := newClient(t, Options{AllowStdio: true})
	for _, s := range []Server{{Transport: StreamableHTTP, URL: "https://x.example/mcp"}, {Transport: SSE, URL: "https://x.example/sse"},
		{Transport: Stdio, Command: "npx", Args: []string{"-y", "pkg"}}} {
		if _, err := c.transportFor(s); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	if _, err := c.transportFor(Server{Transport: "grpc"}); err == nil {
		t.Error("unknown transport accepted")
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
