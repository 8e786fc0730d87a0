package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/blob"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
)

// TestServeStoresAssets runs `serve` with real models and an asset quota: a Gemini reply's
// image and an OpenAI-compatible (OpenRouter) reply's image become assets of their runs,
// with their bytes under <data-dir>/assets on SQLite and in the database on PostgreSQL; an MCP
// tool's chart does too, and the model reads its asset id; an image past the quota is skipped
// while the run completes with its text.
func TestServeStoresAssets(t *testing.T) {
	t.Parallel()
	forEachServeDB(t, serveStoresAssets)
}

func serveStoresAssets(t *testing.T, env map[string]string) {
	dir := env["DATA_DIR"]
	delete(env, "MODELS")
	env["ASSETS_QUOTA_MB"] = "1"
	p := start(t, env, "serve")
	c := p.C
	ctx := context.Background()
	gem, oa := llmtest.NewGemini(), llmtest.NewOpenAI()
	t.Cleanup(gem.Close)
	t.Cleanup(oa.Close)
	for _, cr := range []client.CredentialCreateRequest{
		{Name: "gemini", Type: "api_key", Provider: "google", Value: "AIzaE2EASSETSsecret00000000000000000wxyz", Metadata: map[string]any{"base_url": gem.URL}},
		{Name: "openai", Type: "api_key", Provider: "openai", Value: "sk-proj-e2eASSETSsecret000000000000000wxyz", Metadata: map[string]any{"base_url": oa.URL + "/v1"}},
	} {
		if _, err := c.CredentialCreate(ctx, cr); err != nil {
			t.Fatal(err)
		}
	}
	png := []byte("\x89PNG\r\n\x1a\ne2e gemini image")
	jpg := []byte{0xff, 0xd8, 0xff, 0xe0, 'e', '2', 'e'}

	check := func(t *testing.T, x *client.Execution, data []byte, mime, source string) *client.Asset {
		t.Helper()
		list, err := c.AssetList(ctx, client.ListAssetsParams{ExecutionID: x.ID})
		if err != nil || list.Pagination.Total != 1 {
			t.Fatalf("assets of the run: %+v %v", list, err)
		}
		a := list.Data[0]
		if a.MimeType != mime || string(a.Source) != source || a.Size != int64(len(data)) || a.Sha256 != blob.Sum(data) {
			t.Fatalf("asset %+v", a)
		}
		got, ct, err := c.AssetContent(ctx, a.ID)
		if err != nil || !bytes.Equal(got, data) || ct != mime {
			t.Fatalf("content %q %q %v", got, ct, err)
		}
		file := filepath.Join(dir, "assets", a.WorkspaceID, a.Sha256[:2], a.Sha256)
		if pg := env["DATABASE_URL"]; pg != "" {
			if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a blob file on PostgreSQL: %v", err)
			}
			if stored := blobRow(t, pg, a.WorkspaceID, a.Sha256); !bytes.Equal(stored, data) {
				t.Fatalf("blob row: %d bytes", len(stored))
			}
			return &a
		}
		onDisk, err := os.ReadFile(file)
		if err != nil || !bytes.Equal(onDisk, data) {
			t.Fatalf("blob file: %v", err)
		}
		return &a
	}

	t.Run("gemini image", func(t *testing.T) {
		gem.Push(llmtest.Reply{Text: []string{"A cat."}, Images: []llmtest.Image{{MimeType: "image/png", Data: png}}})
		a := mustAgent(t, c, "simple", client.AgentConfig{Model: "gemini-2.5-flash"})
		x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Draw a cat"}})
		if err != nil || x.Status != "completed" || outputText(x) != "A cat." {
			t.Fatalf("execute %+v %v", x, err)
		}
		check(t, x, png, "image/png", "model")
		if notes := contentOf(frames(t, c, x.ID), "thinking"); !strings.Contains(strings.Join(notes, " "), "Stored image asset") {
			t.Errorf("thinking frames %q", notes)
		}
	})

	t.Run("openrouter image", func(t *testing.T) {
		oa.Push(llmtest.Reply{Text: []string{"A dog."}, Images: []llmtest.Image{{MimeType: "image/jpeg", Data: jpg}}})
		a := mustAgent(t, c, "simple", client.AgentConfig{Model: "gpt-4o-mini"})
		x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Draw a dog"}})
		if err != nil || x.Status != "completed" {
			t.Fatalf("execute %+v %v", x, err)
		}
		check(t, x, jpg, "image/jpeg", "model")
	})

	t.Run("mcp chart", func(t *testing.T) {
		orders := mcptest.New(mcptest.StreamableHTTP) // its chart tool answers a text and a 64-byte PNG
		defer orders.Close()
		tool, err := c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "Orders", Transport: "http", URL: orders.Endpoint,
			Tools: []client.MCPToolDef{{Name: "chart", Description: "A chart of orders.", InputSchema: json.RawMessage(`{"type":"object"}`)}}})
		if err != nil {
			t.Fatal(err)
		}
		gem.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "chart", Args: []string{`{}`}}}},
			llmtest.Reply{Text: []string{"Here is the chart."}})
		a := mustAgent(t, c, "agent", client.AgentConfig{Model: "gemini-2.5-flash", Tools: client.MCPTools(tool.ID)})
		before := len(gem.Requests())
		x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Chart my orders"}})
		if err != nil || x.Status != "completed" {
			t.Fatalf("execute %+v %v", x, err)
		}
		as := check(t, x, bytes.Repeat([]byte("x"), 64), "image/png", "mcp")
		reqs := gem.Requests()[before:]
		if len(reqs) != 2 || !strings.Contains(string(reqs[1].Raw), "stored as asset "+as.ID) {
			t.Fatalf("tool result sent to the model: %d requests", len(reqs))
		}
	})

	t.Run("past the quota", func(t *testing.T) {
		big := bytes.Repeat([]byte{7}, 1<<20) // with the images above, more than 1 MiB
		gem.Push(llmtest.Reply{Text: []string{"A huge cat."}, Images: []llmtest.Image{{MimeType: "image/png", Data: big}}})
		a := mustAgent(t, c, "simple", client.AgentConfig{Model: "gemini-2.5-flash"})
		x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Draw a huge cat"}})
		if err != nil || x.Status != "completed" || outputText(x) != "A huge cat." {
			t.Fatalf("execute %+v %v", x, err)
		}
		if list, _ := c.AssetList(ctx, client.ListAssetsParams{ExecutionID: x.ID}); list.Pagination.Total != 0 {
			t.Fatalf("stored past the quota: %+v", list.Data)
		}
		if notes := contentOf(frames(t, c, x.ID), "thinking"); !strings.Contains(strings.Join(notes, " "), "quota") {
			t.Errorf("no note of the skipped image: %q", notes)
		}
		// A request carries at most 1 MiB: two uploads of 600 KiB, the second past the quota.
		if _, err := c.AssetUpload(ctx, client.AssetUploadRequest{MimeType: "image/png", Data: base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{8}, 600<<10))}); err != nil {
			t.Fatal(err)
		}
		_, err = c.AssetUpload(ctx, client.AssetUploadRequest{MimeType: "image/png", Data: base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 600<<10))})
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 402 || ce.Code != "quota_exceeded" {
			t.Fatalf("upload past the quota: %v", err)
		}
		st, err := c.AssetStorage(ctx)
		if err != nil || st.QuotaBytes != 1<<20 || st.Count != 4 {
			t.Fatalf("storage %+v %v", st, err)
		}
	})
}

// blobRow returns the bytes of a blob that serve keeps in the PostgreSQL database at pg.
func blobRow(t *testing.T, pg, ws, sum string) []byte {
	t.Helper()
	db, err := sql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var data []byte
	if err := db.QueryRow("SELECT data FROM blob_data WHERE workspace_id = $1 AND sha256 = $2", ws, sum).Scan(&data); err != nil {
		t.Fatalf("blob %s: %v", sum, err)
	}
	return data
}

// TestServeNodesShareAssets: two `serve` nodes on one PostgreSQL database, each with a data
// directory of its own, serve each other's assets (the bytes are in the database); one
// deleted through a node is gone on the other. Assets an earlier version kept under <data-dir>/assets are imported into the
// database at start, and the directory is kept as <data-dir>/assets.imported.
func TestServeNodesShareAssets(t *testing.T) {
	t.Parallel()
	pg := postgresURL(t)
	if pg == "" {
		t.Skip("TEST_DATABASE_URL is not set")
	}
	ctx := context.Background()
	envA, envB := serveEnv(t.TempDir()), serveEnv(t.TempDir())
	envA["DATABASE_URL"], envB["DATABASE_URL"] = pg, pg
	// The first start keeps its blobs in a directory (--assets-dir, as before on PostgreSQL).
	legacy := filepath.Join(envA["DATA_DIR"], "assets")
	envA["ASSETS_DIR"] = legacy
	a := start(t, envA, "serve")
	old, err := a.C.AssetUpload(ctx, client.AssetUploadRequest{MimeType: "image/png", Data: base64.StdEncoding.EncodeToString([]byte("\x89PNG kept in a directory"))})
	if err != nil {
		t.Fatal(err)
	}
	a.stop(t)
	if _, err := os.Stat(filepath.Join(legacy, old.WorkspaceID, old.Sha256[:2], old.Sha256)); err != nil {
		t.Fatal(err)
	}

	delete(envA, "ASSETS_DIR")
	a = start(t, envA, "serve")
	if _, err := os.Stat(legacy + ".imported"); err != nil {
		t.Fatalf("directory not kept after the import: %v", err)
	}
	if _, err := os.Stat(legacy); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("directory still in place: %v", err)
	}
	b := start(t, envB, "serve")
	cb := client.New(b.URL, client.WithAPIKey(a.Key))
	if got, _, err := cb.AssetContent(ctx, old.ID); err != nil || string(got) != "\x89PNG kept in a directory" {
		t.Fatalf("imported asset on the other node: %q %v", got, err)
	}

	data := bytes.Repeat([]byte("0123456789abcdef"), 600<<6) // 600 KiB, about what a request carries
	up, err := a.C.AssetUpload(ctx, client.AssetUploadRequest{MimeType: "application/octet-stream", Data: base64.StdEncoding.EncodeToString(data)})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := cb.AssetContent(ctx, up.ID); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("content on the other node: %d bytes, %v", len(got), err)
	}
	if _, err := cb.AssetDelete(ctx, up.ID); err != nil {
		t.Fatal(err)
	}
	var ce *client.Error
	if _, _, err := a.C.AssetContent(ctx, up.ID); !errors.As(err, &ce) || ce.Status != 404 {
		t.Fatalf("deleted on B, read on A: %v", err)
	}
	if _, err := os.Stat(filepath.Join(envA["DATA_DIR"], "assets")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("blobs written to a directory on PostgreSQL: %v", err)
	}
}

// TestEmulatorAssets: the emulator serves the asset routes over blobs in memory, deduplicated
// like serve's, and a reset drops them with the rest of its data.
func TestEmulatorAssets(t *testing.T) {
	t.Parallel()
	p := start(t, emulatorEnv(nil), "emulator")
	c := p.C
	ctx := context.Background()
	img := []byte("\x89PNG emulator image")
	var ids []string
	for range 2 {
		a, err := c.AssetUpload(ctx, client.AssetUploadRequest{MimeType: "image/png", Data: base64.StdEncoding.EncodeToString(img), Name: "e.png"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	if st, err := c.AssetStorage(ctx); err != nil || st.Count != 2 || st.Blobs != 1 || st.Bytes != int64(len(img)) {
		t.Fatalf("storage %+v %v", st, err)
	}
	if got, ct, err := c.AssetContent(ctx, ids[1]); err != nil || !bytes.Equal(got, img) || ct != "image/png" {
		t.Fatalf("content %q %q %v", got, ct, err)
	}
	stats, err := c.StoreStats(ctx)
	if err != nil || stats["assets"] != 2 || stats["asset_blobs"] != 1 {
		t.Fatalf("stats %v %v", stats, err)
	}
	if _, err := c.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := c.AssetStorage(ctx); err != nil || st.Count != 0 || st.Bytes != 0 {
		t.Fatalf("storage after reset %+v %v", st, err)
	}
	var ce *client.Error
	if _, _, err := c.AssetContent(ctx, ids[0]); !errors.As(err, &ce) || ce.Status != 404 {
		t.Fatalf("content after reset: %v", err)
	}
}
