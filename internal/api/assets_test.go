package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/assets"
	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/blob"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/mcpclient"
	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// assetEnv is a server (not the emulator) whose asset blobs are files under a temporary
// directory, with a quota of quota bytes (0: unlimited); its runs go to the workspace's
// provider credentials and reach MCP servers.
func assetEnv(t *testing.T, quota int64) (*testEnv, *blob.Dir) {
	t.Helper()
	st, err := store.Open(context.Background(), "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mc := mcpclient.New(mcpclient.Options{})
	t.Cleanup(mc.Close)
	e := newTestEnv(t, onStore(st), asServer(), withRouter(func(st *store.Store, box *secretbox.Box) runtime.ModelRouter {
		return &runtime.CredentialRouter{Store: st, Secrets: box, Simulated: simulated.New()}
	}), withTools(func(st *store.Store, box *secretbox.Box) runtime.ToolServers {
		return &runtime.MCPServers{Store: st, Secrets: box, Client: mc}
	}), withEngine(func(c *runtime.Config) { c.Assets = assets.New(st, blobs, quota) }))
	return e, blobs
}

// rawGet sends a GET with the env's key and extra headers, and returns the whole answer;
// the answer is checked against the OpenAPI document (its status, and its body when JSON).
func (e *testEnv) rawGet(t *testing.T, path string, header map[string]string) (int, []byte, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.ts.URL+path, nil)
	req.Header.Set("X-API-Key", e.key)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if err := e.oapi.Validate(http.MethodGet, req.URL.Path, resp.StatusCode, raw); err != nil {
		t.Fatalf("response breaks the OpenAPI contract: %v", err)
	}
	covered.Store(http.MethodGet+" "+req.URL.Path, true)
	return resp.StatusCode, raw, resp.Header
}

// otherWorkspaceKey makes a second workspace and returns a "*" key of it.
func (e *testEnv) otherWorkspaceKey(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	w, err := e.store.WorkspaceCreate(ctx, &domain.Workspace{Name: "Other", Slug: "other"})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := auth.NewKey()
	if _, err := e.store.APIKeyCreate(ctx, &domain.APIKey{Name: "other", WorkspaceID: w.ID, KeyPrefix: auth.KeyPrefix(raw), Scopes: domain.Strings{"*"}}, auth.HashKey(raw)); err != nil {
		t.Fatal(err)
	}
	return raw
}

var testPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR fake image content for tests")

func TestAssetRoutes(t *testing.T) {
	e, blobs := assetEnv(t, 0)
	data := base64.StdEncoding.EncodeToString(testPNG)
	other := e.otherWorkspaceKey(t)
	readOnly := e.newKey(&domain.APIKey{Name: "read", Scopes: domain.Strings{"assets:read"}})
	noAssets := e.newKey(&domain.APIKey{Name: "agents", Scopes: domain.Strings{"agents:read"}})
	var first, second, sum string
	e.run([]scenario{
		{name: "upload", method: "POST", path: "/api/v1/assets", body: `{"mime_type":"image/png","data":"` + data + `","name":"cat.png"}`, status: 201,
			fields: map[string]any{"data.type": "image", "data.mime_type": "image/png", "data.size": len(testPNG), "data.name": "cat.png",
				"data.source": "upload", "data.execution_id": nil, "data.sha256": blob.Sum(testPNG)},
			check: func(t *testing.T, b map[string]any) {
				first, sum = lookup(b, "data.id").(string), lookup(b, "data.sha256").(string)
			}},
		{name: "same bytes again", method: "POST", path: "/api/v1/assets", body: `{"mime_type":"image/png; charset=binary","data":"` + data + `"}`, status: 201,
			fields: map[string]any{"data.mime_type": "image/png", "data.sha256": blob.Sum(testPNG)},
			check:  func(t *testing.T, b map[string]any) { second = lookup(b, "data.id").(string) }},
		{name: "a file", method: "POST", path: "/api/v1/assets", body: `{"mime_type":"text/csv","data":"YSxiCjEsMgo="}`, status: 201,
			fields: map[string]any{"data.type": "file", "data.size": 8}},
		{name: "bad base64", method: "POST", path: "/api/v1/assets", body: `{"mime_type":"image/png","data":"***"}`, status: 422, message: "data"},
		{name: "no data", method: "POST", path: "/api/v1/assets", body: `{"mime_type":"image/png"}`, status: 422, message: "data"},
		{name: "bad mime", method: "POST", path: "/api/v1/assets", body: `{"mime_type":"png","data":"AA=="}`, status: 422, message: "mime_type"},
		{name: "long mime", method: "POST", path: "/api/v1/assets", body: `{"mime_type":"image/` + strings.Repeat("p", 300) + `","data":"AA=="}`, status: 422, message: "mime_type"},
		{name: "bad name", method: "POST", path: "/api/v1/assets", body: `{"mime_type":"image/png","data":"AA==","name":"../x"}`, status: 422, message: "name"},
		{name: "unknown execution", method: "POST", path: "/api/v1/assets", body: `{"mime_type":"image/png","data":"AA==","execution_id":"nope"}`, status: 422, message: "execution_id"},
		{name: "read-only key cannot upload", method: "POST", path: "/api/v1/assets", body: `{"mime_type":"image/png","data":"AA=="}`,
			header: map[string]string{"X-API-Key": readOnly}, status: 403, code: "forbidden"},
	})
	e.run([]scenario{
		{name: "list", method: "GET", path: "/api/v1/assets", status: 200, fields: map[string]any{"pagination.total": 3, "data.2.id": first}},
		{name: "list images", method: "GET", path: "/api/v1/assets?type=image&limit=1", status: 200,
			fields: map[string]any{"pagination.total": 2, "data.0.id": second}},
		{name: "list bad type", method: "GET", path: "/api/v1/assets?type=video", status: 400, message: "type"},
		{name: "list by execution", method: "GET", path: "/api/v1/assets?execution_id=none", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "get", method: "GET", path: "/api/v1/assets/" + first, status: 200, fields: map[string]any{"data.id": first, "data.name": "cat.png"}},
		{name: "get with read scope", method: "GET", path: "/api/v1/assets/" + first, header: map[string]string{"X-API-Key": readOnly}, status: 200},
		{name: "no assets scope", method: "GET", path: "/api/v1/assets", header: map[string]string{"X-API-Key": noAssets}, status: 403, code: "forbidden"},
		{name: "storage needs write", method: "GET", path: "/api/v1/assets/storage", header: map[string]string{"X-API-Key": readOnly}, status: 403},
		{name: "storage", method: "GET", path: "/api/v1/assets/storage", status: 200,
			fields: map[string]any{"data.count": 3, "data.blobs": 2, "data.bytes": len(testPNG) + 8, "data.asset_bytes": 2*len(testPNG) + 8, "data.quota_bytes": 0}},
		{name: "get missing", method: "GET", path: "/api/v1/assets/nope", status: 404, code: "not_found"},
		{name: "other workspace get", method: "GET", path: "/api/v1/assets/" + first, header: map[string]string{"X-API-Key": other}, status: 404},
		{name: "other workspace content", method: "GET", path: "/api/v1/assets/" + first + "/content", header: map[string]string{"X-API-Key": other}, status: 404},
		{name: "other workspace delete", method: "DELETE", path: "/api/v1/assets/" + first, header: map[string]string{"X-API-Key": other}, status: 404},
		{name: "other workspace list", method: "GET", path: "/api/v1/assets", header: map[string]string{"X-API-Key": other}, status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "read-only key cannot delete", method: "DELETE", path: "/api/v1/assets/" + first, header: map[string]string{"X-API-Key": readOnly}, status: 403},
	})

	t.Run("content", func(t *testing.T) {
		path := "/api/v1/assets/" + first + "/content"
		status, body, h := e.rawGet(t, path, nil)
		if status != 200 || !bytes.Equal(body, testPNG) || h.Get("Content-Type") != "image/png" || h.Get("ETag") != `"`+sum+`"` ||
			h.Get("Accept-Ranges") != "bytes" || h.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(h.Get("Content-Security-Policy"), "sandbox") ||
			h.Get("Content-Disposition") != `inline; filename=cat.png` {
			t.Fatalf("content: %d %q %v", status, body, h)
		}
		status, body, h = e.rawGet(t, path, map[string]string{"Range": "bytes=2-5"})
		if status != 206 || !bytes.Equal(body, testPNG[2:6]) || h.Get("Content-Range") != "bytes 2-5/"+itoa(len(testPNG)) {
			t.Fatalf("range: %d %q %v", status, body, h)
		}
		status, body, _ = e.rawGet(t, path, map[string]string{"Range": "bytes=-4"})
		if status != 206 || !bytes.Equal(body, testPNG[len(testPNG)-4:]) {
			t.Fatalf("suffix range: %d %q", status, body)
		}
		status, body, _ = e.rawGet(t, path, map[string]string{"If-None-Match": `"` + sum + `"`})
		if status != 304 || len(body) != 0 {
			t.Fatalf("if-none-match: %d %q", status, body)
		}
		status, body, _ = e.rawGet(t, path, map[string]string{"If-None-Match": `"other"`})
		if status != 200 || !bytes.Equal(body, testPNG) {
			t.Fatalf("other etag: %d", status)
		}
		// If-Range with a stale ETag: the whole content.
		status, body, _ = e.rawGet(t, path, map[string]string{"Range": "bytes=0-1", "If-Range": `"stale"`})
		if status != 200 || !bytes.Equal(body, testPNG) {
			t.Fatalf("if-range: %d", status)
		}
		status, body, h = e.rawGet(t, path, map[string]string{"Range": "bytes=1000-"})
		var env errorBody
		if status != 416 || json.Unmarshal(body, &env) != nil || env.Error != "range_not_satisfiable" || !strings.Contains(env.Message, first) ||
			!strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Fatalf("unsatisfiable: %d %s %v", status, body, h)
		}
		status, body, _ = e.rawGet(t, path, map[string]string{"If-Match": `"stale"`})
		if status != 412 || json.Unmarshal(body, &env) != nil || env.Error != "precondition_failed" {
			t.Fatalf("if-match: %d %s", status, body)
		}
		if status, _, _ := e.rawGet(t, "/api/v1/assets/nope/content", nil); status != 404 {
			t.Fatalf("missing content: %d", status)
		}
		// The SDK reads the same bytes.
		got, mt, err := e.c.AssetContent(context.Background(), first)
		if err != nil || !bytes.Equal(got, testPNG) || mt != "image/png" {
			t.Fatalf("sdk content: %v %q", err, mt)
		}
	})

	// Deleting one of two assets sharing a blob keeps it; deleting the last removes it.
	ctx := context.Background()
	e.run([]scenario{
		{name: "delete first", method: "DELETE", path: "/api/v1/assets/" + first, status: 200, fields: map[string]any{"data.id": first}},
		{name: "deleted", method: "GET", path: "/api/v1/assets/" + first, status: 404},
		{name: "delete again", method: "DELETE", path: "/api/v1/assets/" + first, status: 404},
	})
	if _, err := blobs.Stat(ctx, e.ws, sum); err != nil {
		t.Fatalf("shared blob removed with the first asset: %v", err)
	}
	if got, _, err := e.c.AssetContent(ctx, second); err != nil || !bytes.Equal(got, testPNG) {
		t.Fatalf("second asset content: %v", err)
	}
	if _, err := e.c.AssetDelete(ctx, second); err != nil {
		t.Fatal(err)
	}
	if _, err := blobs.Stat(ctx, e.ws, sum); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("blob kept after its last asset: %v", err)
	}
	if st, err := e.c.AssetStorage(ctx); err != nil || st.Count != 1 || st.Bytes != 8 || st.Blobs != 1 {
		t.Fatalf("storage after deletes: %+v %v", st, err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestAssetQuota: a new content past the quota is 402 quota_exceeded; content the workspace
// already holds costs nothing; a delete makes room.
func TestAssetQuota(t *testing.T) {
	e, _ := assetEnv(t, 100)
	ctx := context.Background()
	a80 := bytes.Repeat([]byte{1}, 80)
	a30 := bytes.Repeat([]byte{2}, 30)
	first, err := e.c.AssetUpload(ctx, client.AssetUploadRequest{MimeType: "application/octet-stream", Data: base64.StdEncoding.EncodeToString(a80)})
	if err != nil {
		t.Fatal(err)
	}
	e.run([]scenario{
		{name: "past the quota", method: "POST", path: "/api/v1/assets", body: `{"mime_type":"image/png","data":"` + base64.StdEncoding.EncodeToString(a30) + `"}`,
			status: 402, code: "quota_exceeded", message: "quota is 100 bytes and 80 are used"},
		{name: "same content fits", method: "POST", path: "/api/v1/assets", body: `{"mime_type":"image/png","data":"` + base64.StdEncoding.EncodeToString(a80) + `"}`,
			status: 201},
		{name: "storage", method: "GET", path: "/api/v1/assets/storage", status: 200, fields: map[string]any{"data.bytes": 80, "data.count": 2, "data.quota_bytes": 100}},
	})
	var ce *client.Error
	if _, err := e.c.AssetUpload(ctx, client.AssetUploadRequest{MimeType: "image/png", Data: base64.StdEncoding.EncodeToString(a30)}); !errors.As(err, &ce) || ce.Status != 402 {
		t.Fatalf("sdk upload past the quota: %v", err)
	}
	list, err := e.c.AssetList(ctx, client.ListAssetsParams{})
	if err != nil || list.Pagination.Total != 2 {
		t.Fatalf("list %+v %v", list, err)
	}
	for _, a := range list.Data {
		if _, err := e.c.AssetDelete(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.c.AssetUpload(ctx, client.AssetUploadRequest{MimeType: "image/png", Data: base64.StdEncoding.EncodeToString(a30)}); err != nil {
		t.Fatalf("upload after making room: %v (first was %s)", err, first.ID)
	}
}

// geminiAgent makes a credential pointing at the fake and an agent of type typ on it.
func geminiAgent(t *testing.T, e *testEnv, fake *llmtest.Server, typ string, tools []client.AgentConfig_Tools_Item) *client.Agent {
	t.Helper()
	ctx := context.Background()
	if list, _ := e.c.CredentialList(ctx, client.ListCredentialsParams{}); list == nil || len(list.Data) == 0 {
		if _, err := e.c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "gemini", Type: "api_key", Provider: "google",
			Value: "AIzaTESTgeminiKey000000000000000000wxyz", Metadata: map[string]any{"base_url": fake.URL}}); err != nil {
			t.Fatal(err)
		}
	}
	a, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Painter " + typ, Type: client.AgentCreateRequestType(typ), Config: client.AgentConfig{Model: "gemini-2.5-flash", Tools: tools}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// llmSpan returns the first span of kind of an execution's trace.
func spanOf(t *testing.T, e *testEnv, x *client.Execution, kind string) *client.SpanNode {
	t.Helper()
	tr, err := e.c.TraceGet(context.Background(), x.TraceID)
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range tr.AllSpans() {
		if string(sp.Kind) == kind {
			return sp
		}
	}
	t.Fatalf("no %s span in %+v", kind, tr.Spans)
	return nil
}

// TestAssetsFromModelReplies: a Gemini reply's inline image is stored as an asset of the
// execution; two runs drawing the same image share one blob, removed with the last asset.
func TestAssetsFromModelReplies(t *testing.T) {
	e, blobs := assetEnv(t, 0)
	ctx := context.Background()
	fake := llmtest.NewGemini()
	t.Cleanup(fake.Close)
	a := geminiAgent(t, e, fake, "simple", nil)
	var runs []*client.Execution
	for range 2 {
		fake.Push(llmtest.Reply{Text: []string{"Here is ", "a cat."}, Images: []llmtest.Image{{MimeType: "image/png", Data: testPNG}}})
		x, err := e.c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Draw a cat"}})
		if err != nil || x.Status != "completed" {
			t.Fatalf("execute: %+v %v", x, err)
		}
		runs = append(runs, x)
	}
	var ids []string
	for _, x := range runs {
		var out struct{ Content string }
		_ = json.Unmarshal(x.Output, &out)
		if out.Content != "Here is a cat." {
			t.Errorf("output %q", out.Content)
		}
		list, err := e.c.AssetList(ctx, client.ListAssetsParams{ExecutionID: x.ID})
		if err != nil || list.Pagination.Total != 1 {
			t.Fatalf("assets of %s: %+v %v", x.ID, list, err)
		}
		as := list.Data[0]
		if as.Type != "image" || as.MimeType != "image/png" || as.Source != "model" || *as.ExecutionID != x.ID || as.Metadata["model"] != "gemini-2.5-flash" {
			t.Errorf("asset %+v", as)
		}
		sp := spanOf(t, e, x, "llm")
		stored, _ := sp.Attributes["assets"].([]any)
		if len(stored) != 1 || stored[0].(map[string]any)["asset_id"] != as.ID {
			t.Errorf("span assets %v", sp.Attributes["assets"])
		}
		if got, mt, err := e.c.AssetContent(ctx, as.ID); err != nil || !bytes.Equal(got, testPNG) || mt != "image/png" {
			t.Errorf("content: %v %q", err, mt)
		}
		ids = append(ids, as.ID)
	}
	if st, err := e.c.AssetStorage(ctx); err != nil || st.Count != 2 || st.Blobs != 1 || st.Bytes != int64(len(testPNG)) {
		t.Fatalf("two runs, one image: %+v %v", st, err)
	}
	if _, err := e.c.AssetDelete(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := blobs.Stat(ctx, e.ws, blob.Sum(testPNG)); err != nil {
		t.Fatalf("blob gone with one of its assets: %v", err)
	}
	if _, err := e.c.AssetDelete(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := blobs.Stat(ctx, e.ws, blob.Sum(testPNG)); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("blob kept after its last asset: %v", err)
	}
}

// TestAssetQuotaRun: a run whose image does not fit the quota still completes with its text;
// the model call's span and a thinking frame note the skipped image.
func TestAssetQuotaRun(t *testing.T) {
	e, _ := assetEnv(t, 10)
	ctx := context.Background()
	fake := llmtest.NewGemini()
	t.Cleanup(fake.Close)
	a := geminiAgent(t, e, fake, "simple", nil)
	fake.Push(llmtest.Reply{Text: []string{"A cat."}, Images: []llmtest.Image{{MimeType: "image/png", Data: testPNG}}})
	x, err := e.c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Draw a cat"}})
	if err != nil || x.Status != "completed" || !strings.Contains(string(x.Output), "A cat.") {
		t.Fatalf("execute: %+v %v", x, err)
	}
	if list, _ := e.c.AssetList(ctx, client.ListAssetsParams{ExecutionID: x.ID}); list.Pagination.Total != 0 {
		t.Fatalf("an asset past the quota was stored: %+v", list)
	}
	sp := spanOf(t, e, x, "llm")
	skipped, _ := sp.Attributes["assets_skipped"].([]any)
	if len(skipped) != 1 || skipped[0].(map[string]any)["reason"] != "quota_exceeded" || skipped[0].(map[string]any)["size"] != float64(len(testPNG)) {
		t.Fatalf("span %v", sp.Attributes)
	}
	s, err := e.c.ExecutionStream(ctx, x.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.Collect()
	if err != nil {
		t.Fatal(err)
	}
	noted := false
	for _, ev := range evs {
		noted = noted || ev.Event == "thinking" && strings.Contains(ev.Data, "quota")
	}
	if !noted {
		t.Errorf("no thinking frame notes the skipped image: %+v", evs)
	}
}

// TestAssetsFromMCPTools: an MCP tool's image and embedded file are stored as assets of the
// run; the model reads notes naming them instead of the bytes.
func TestAssetsFromMCPTools(t *testing.T) {
	e, _ := assetEnv(t, 0)
	ctx := context.Background()
	csv := []byte("day,orders\nmon,3\n")
	srv := mcptest.New(mcptest.StreamableHTTP, mcptest.Tool{Name: "report", Description: "An orders report.",
		Handle: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "Orders per day"},
				&mcp.ImageContent{MIMEType: "image/png", Data: testPNG},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///exports/orders.csv", MIMEType: "text/csv", Blob: csv}},
			}}, nil
		}})
	t.Cleanup(srv.Close)
	tool, err := e.c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "Reports", Transport: "streamable_http", URL: srv.Endpoint,
		Tools: []client.MCPToolDef{{Name: "report", Description: "An orders report.", InputSchema: json.RawMessage(`{"type":"object"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewGemini()
	t.Cleanup(fake.Close)
	a := geminiAgent(t, e, fake, "agent", client.MCPTools(tool.ID))
	fake.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "report", Args: []string{`{}`}}}},
		llmtest.Reply{Text: []string{"Here is the report."}})
	x, err := e.c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Report on orders"}})
	if err != nil || x.Status != "completed" {
		t.Fatalf("execute: %+v %v", x, err)
	}
	list, err := e.c.AssetList(ctx, client.ListAssetsParams{ExecutionID: x.ID})
	if err != nil || list.Pagination.Total != 2 {
		t.Fatalf("assets: %+v %v", list, err)
	}
	var img, file *client.Asset
	for i := range list.Data {
		switch list.Data[i].Type {
		case "image":
			img = &list.Data[i]
		case "file":
			file = &list.Data[i]
		}
	}
	if img == nil || img.Source != "mcp" || img.Metadata["tool"] != "report" || img.Metadata["server"] != "Reports" {
		t.Fatalf("image asset %+v", img)
	}
	if file == nil || file.Source != "tool" || file.Name != "orders.csv" || file.MimeType != "text/csv" || file.Metadata["uri"] != "file:///exports/orders.csv" {
		t.Fatalf("file asset %+v", file)
	}
	if got, _, err := e.c.AssetContent(ctx, file.ID); err != nil || !bytes.Equal(got, csv) {
		t.Fatalf("file content: %q %v", got, err)
	}
	// The model's second request carries the tool result with the asset ids, not the bytes.
	reqs := fake.Requests()
	last := string(reqs[len(reqs)-1].Raw)
	if !strings.Contains(last, "stored as asset "+img.ID) || !strings.Contains(last, "stored as asset "+file.ID) ||
		strings.Contains(last, base64.StdEncoding.EncodeToString(testPNG)) {
		t.Fatalf("tool result sent to the model: %s", last)
	}
	sp := spanOf(t, e, x, "tool")
	if stored, _ := sp.Attributes["assets"].([]any); len(stored) != 2 {
		t.Fatalf("tool span %v", sp.Attributes)
	}
}
