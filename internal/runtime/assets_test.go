package runtime

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentplane/agentplane/internal/assets"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/mcpclient"
	"github.com/agentplane/agentplane/internal/store"
)

func TestFileName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"file:///exports/orders.csv":         "orders.csv",
		"https://x.example/a/b/report.pdf?x": "report.pdf",
		"file:///exports/":                   "",
		"urn:uuid:1234":                      "",
		"":                                   "",
		"s3://bucket/key/photo.png#frag":     "photo.png",
	} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestToolMedia(t *testing.T) {
	t.Parallel()
	sp := &domain.Span{Attributes: domain.JSONObject{"mcp_tool_id": "t1", "server": "Reports", "tool": "report"}}
	got := toolMedia([]mcpclient.Media{
		{Kind: "image", MimeType: "image/png", Data: []byte("p")},
		{Kind: "resource", MimeType: "text/csv", Data: []byte("c"), Name: "file:///x/orders.csv"},
	}, sp)
	if got[0].source != domain.AssetSourceMCP || got[0].name != "" || got[0].meta["tool"] != "report" {
		t.Errorf("image %+v", got[0])
	}
	if got[1].source != domain.AssetSourceTool || got[1].name != "orders.csv" || got[1].meta["uri"] != "file:///x/orders.csv" || got[1].meta["server"] != "Reports" {
		t.Errorf("file %+v", got[1])
	}
	if _, ok := got[0].meta["uri"]; ok {
		t.Error("the file's metadata leaked into the image's")
	}
}

func TestSkipReason(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		code string
	}{
		{fmt.Errorf("x: %w", &store.QuotaError{Quota: 10, Used: 5, Size: 6}), "quota_exceeded"},
		{assets.ErrTooLarge, "too_large"},
		{errors.New("disk full"), "store_failed"},
	} {
		if code, why := skipReason(c.err); code != c.code || why == "" {
			t.Errorf("%v: %s %q", c.err, code, why)
		}
	}
}
