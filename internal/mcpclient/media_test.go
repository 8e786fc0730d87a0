package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
)

// Binary content of a result (an image, audio, an embedded file) is returned as Media, with
// a placeholder in Text that TextWith replaces, each in its place; text and structured
// content are kept.
func TestResultMedia(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nchart")
	csv := []byte("day,orders\nmon,3\n")
	srv := mcptest.New(mcptest.StreamableHTTP, mcptest.Tool{Name: "report", Description: "A report.",
		Handle: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "Report"},
				&mcp.ImageContent{MIMEType: "image/png", Data: png},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///orders.csv", MIMEType: "text/csv", Blob: csv}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "inline text"}},
			}}, nil
		}})
	defer srv.Close()
	sess := connect(t, newClient(t, Options{}), Server{Transport: StreamableHTTP, URL: srv.Endpoint})
	res, err := sess.CallTool(context.Background(), "report", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Media) != 2 {
		t.Fatalf("media %+v", res.Media)
	}
	if m := res.Media[0]; m.Kind != "image" || m.MimeType != "image/png" || !bytes.Equal(m.Data, png) {
		t.Errorf("image %+v", m)
	}
	if m := res.Media[1]; m.Kind != "resource" || m.MimeType != "text/csv" || m.Name != "file:///orders.csv" || !bytes.Equal(m.Data, csv) {
		t.Errorf("file %+v", m)
	}
	want := "Report\n[image image/png, 13 bytes]\n[resource file:///orders.csv text/csv, 17 bytes]\ninline text"
	if res.Text != want {
		t.Errorf("text %q", res.Text)
	}
	if got := res.TextWith([]string{"[image stored as asset A1]", ""}); got != "Report\n[image stored as asset A1]\n[resource file:///orders.csv text/csv, 17 bytes]\ninline text" {
		t.Errorf("TextWith %q", got)
	}
	if res.Text != want {
		t.Error("TextWith changed Text")
	}
	// A result without media is its Text whatever the notes.
	plain := &Result{Text: "x"}
	if plain.TextWith([]string{"y"}) != "x" {
		t.Error("plain result changed")
	}
}
