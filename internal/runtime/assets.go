package runtime

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/agentplane/agentplane/internal/assets"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/mcpclient"
	"github.com/agentplane/agentplane/internal/store"
)

// producedMedia is one piece of media a run produced, to store as an asset.
type producedMedia struct {
	mimeType string
	data     []byte
	name     string
	source   string
	meta     domain.JSONObject
}

// modelMedia are the media of a model's reply.
func modelMedia(ms []llm.Media, model, provider string) []producedMedia {
	out := make([]producedMedia, len(ms))
	for i, m := range ms {
		out[i] = producedMedia{mimeType: m.MimeType, data: m.Data, source: domain.AssetSourceModel,
			meta: domain.JSONObject{"model": model, "provider": provider}}
	}
	return out
}

// toolMedia are the media of an MCP tool's result: images and audio (source mcp) and
// embedded files (source tool, named after their URI).
func toolMedia(ms []mcpclient.Media, sp *domain.Span) []producedMedia {
	meta := domain.JSONObject{}
	for _, k := range []string{"mcp_tool_id", "server", "tool"} {
		if v, ok := sp.Attributes[k]; ok {
			meta[k] = v
		}
	}
	out := make([]producedMedia, len(ms))
	for i, m := range ms {
		p := producedMedia{mimeType: m.MimeType, data: m.Data, source: domain.AssetSourceMCP, meta: meta}
		if m.Kind == "resource" {
			p.source = domain.AssetSourceTool
			p.meta = domain.JSONObject{"uri": m.Name}
			for k, v := range meta {
				p.meta[k] = v
			}
			p.name = fileName(m.Name)
		}
		out[i] = p
	}
	return out
}

// fileName is the last path element of a resource URI ("" when it has none).
func fileName(uri string) string {
	if i := strings.IndexAny(uri, "?#"); i >= 0 {
		uri = uri[:i]
	}
	base := path.Base(uri)
	if base == "." || base == "/" || strings.HasSuffix(uri, "/") || strings.Contains(base, ":") {
		return ""
	}
	return base[:min(len(base), 255)]
}

// storeMedia stores each item as an asset of the execution. The span records what was stored
// (attribute "assets") and what was skipped and why ("assets_skipped": past the quota, too
// large, or the store failed); a thinking frame tells the stream either way. A skipped item
// never fails the run. It returns, for each item, the note the model reads in its place.
func (r *run) storeMedia(ctx context.Context, sp *domain.Span, items []producedMedia) []string {
	notes := make([]string, len(items))
	var stored, skipped []any
	for i, m := range items {
		mt := assets.NormalizeMIME(m.mimeType)
		kind := assets.TypeOf(mt)
		a, err := r.e.assets.Create(ctx, assets.Input{WorkspaceID: r.x.WorkspaceID, ExecutionID: r.x.ID, MimeType: mt,
			Name: m.name, Source: m.source, Metadata: m.meta}, m.data)
		if err != nil {
			reason, why := skipReason(err)
			if reason == "store_failed" {
				r.e.log.Error("store asset", "execution_id", r.x.ID, "error", err)
			}
			skipped = append(skipped, map[string]any{"type": kind, "mime_type": mt, "size": len(m.data), "source": m.source, "reason": reason})
			notes[i] = fmt.Sprintf("[%s %s, %d bytes, not stored: %s]", kind, mt, len(m.data), why)
			r.emitText("thinking", fmt.Sprintf("Skipped %s content (%s, %d bytes): %s.", kind, mt, len(m.data), why))
			continue
		}
		stored = append(stored, map[string]any{"asset_id": a.ID, "type": a.Type, "mime_type": a.MimeType, "size": a.Size, "sha256": a.SHA256, "source": a.Source})
		notes[i] = fmt.Sprintf("[%s %s, %d bytes, stored as asset %s]", a.Type, a.MimeType, a.Size, a.ID)
		r.emitText("thinking", fmt.Sprintf("Stored %s asset %s (%s, %d bytes).", a.Type, a.ID, a.MimeType, a.Size))
	}
	if len(stored) > 0 {
		sp.Attributes["assets"] = stored
	}
	if len(skipped) > 0 {
		sp.Attributes["assets_skipped"] = skipped
	}
	return notes
}

// skipReason is why an asset was not stored: a code for the span and words for the model.
func skipReason(err error) (code, why string) {
	var qe *store.QuotaError
	switch {
	case errors.As(err, &qe):
		return "quota_exceeded", fmt.Sprintf("the workspace's asset quota (%d bytes, %d used) would be exceeded", qe.Quota, qe.Used)
	case errors.Is(err, assets.ErrTooLarge):
		return "too_large", err.Error()
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "cancelled", "the run ended first"
	}
	return "store_failed", "the asset store failed"
}
