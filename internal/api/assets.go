package api

import (
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/agentplane/agentplane/internal/assets"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

func (s *Server) assetRoutes() []route {
	const tag = "Assets"
	return []route{
		{method: "GET", path: v1 + "/assets", op: "listAssets", tag: tag, scope: "assets:read", summary: "List assets",
			list: true,
			params: []param{{name: "execution_id", typ: "string", desc: "Only the assets of this execution."},
				{name: "type", typ: "string", desc: "Only assets of this type.", enum: []string{domain.AssetImage, domain.AssetAudio, domain.AssetFile}}},
			resp: domain.Asset{}, h: s.listAssets},
		{method: "POST", path: v1 + "/assets", op: "uploadAsset", tag: tag, scope: "assets:write", summary: "Upload an asset",
			body: domain.AssetUploadRequest{}, resp: domain.Asset{}, status: http.StatusCreated, creates: true, errs: []int{http.StatusPaymentRequired}, h: s.uploadAsset},
		{method: "GET", path: v1 + "/assets/storage", op: "getAssetStorage", tag: tag, scope: "assets:write", summary: "Asset storage of the workspace",
			resp: domain.AssetStorage{}, h: s.assetStorage},
		{method: "GET", path: v1 + "/assets/{id}", op: "getAsset", tag: tag, scope: "assets:read", summary: "Get an asset",
			resp: domain.Asset{}, h: byID(s, s.store.AssetGet)},
		{method: "GET", path: v1 + "/assets/{id}/content", op: "getAssetContent", tag: tag, scope: "assets:read", summary: "Download an asset's content",
			raw: true, content: true, errs: []int{http.StatusPreconditionFailed, http.StatusRequestedRangeNotSatisfiable}, h: s.assetContent},
		{method: "DELETE", path: v1 + "/assets/{id}", op: "deleteAsset", tag: tag, scope: "assets:write", summary: "Delete an asset",
			resp: domain.Asset{}, h: s.deleteAsset},
	}
}

func (s *Server) assets() *assets.Service { return s.engine.Assets() }

func (s *Server) listAssets(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := domain.AssetFilter{ExecutionID: q.Get("execution_id"), Type: q.Get("type")}
	switch f.Type {
	case "", domain.AssetImage, domain.AssetAudio, domain.AssetFile:
	default:
		return badRequest("type must be image, audio or file, got %q", f.Type)
	}
	items, total, err := s.store.AssetList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) uploadAsset(w http.ResponseWriter, r *http.Request) error {
	var req domain.AssetUploadRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ws := s.workspace(r)
	if err := req.Validate(); err != nil {
		return err
	}
	// data is at least one character (the document says so); it must decode.
	data, err := base64.StdEncoding.DecodeString(req.Data)
	if err != nil {
		return domain.Invalid("data", "is not valid base64 (standard alphabet, padded): %v", err)
	}
	in := assets.Input{WorkspaceID: ws, MimeType: req.MimeType, Name: req.Name, Source: domain.AssetSourceUpload}
	if req.ExecutionID != nil && *req.ExecutionID != "" {
		if _, err := s.store.ExecutionGet(r.Context(), ws, *req.ExecutionID); store.IsNotFound(err) {
			return &store.ReferenceError{Field: "execution_id", Resource: "execution", ID: *req.ExecutionID}
		} else if err != nil {
			return err
		}
		in.ExecutionID = *req.ExecutionID
	}
	a, err := s.assets().Create(r.Context(), in, data)
	if err != nil {
		return assetError(err)
	}
	writeData(w, http.StatusCreated, a)
	return nil
}

// assetError words the asset service's refusals for the API.
func assetError(err error) error {
	var qe *store.QuotaError
	switch {
	case errors.As(err, &qe):
		return &Error{Status: http.StatusPaymentRequired, Code: "quota_exceeded", Message: fmt.Sprintf(
			"the workspace's asset quota is %d bytes and %d are used: %d more bytes do not fit; delete assets (DELETE /api/v1/assets/{id}) to make room",
			qe.Quota, qe.Used, qe.Size)}
	case errors.Is(err, assets.ErrTooLarge):
		return errorf(http.StatusRequestEntityTooLarge, "%s", err.Error())
	}
	return err
}

func (s *Server) assetStorage(w http.ResponseWriter, r *http.Request) error {
	st, err := s.assets().Storage(r.Context(), s.workspace(r))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, st)
	return nil
}

func (s *Server) deleteAsset(w http.ResponseWriter, r *http.Request) error {
	a, err := s.assets().Delete(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, a)
	return nil
}

// assetContent serves an asset's bytes with http.ServeContent, which answers conditional and
// range requests; its own error answers (416, 412) are replaced by the error envelope.
func (s *Server) assetContent(w http.ResponseWriter, r *http.Request) error {
	a, f, err := s.assets().Open(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", a.MimeType)
	h.Set("ETag", `"`+a.SHA256+`"`)
	h.Set("Cache-Control", "private, max-age=3600")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'")
	if a.Name != "" {
		h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": a.Name}))
	}
	http.ServeContent(&contentWriter{ResponseWriter: w, s: s, r: r, a: a}, r, "", a.CreatedAt.Time, f)
	return nil
}

// contentWriter turns http.ServeContent's plain-text error answers into the error envelope.
type contentWriter struct {
	http.ResponseWriter
	s      *Server
	r      *http.Request
	a      *domain.Asset
	failed bool
}

func (w *contentWriter) WriteHeader(code int) {
	if code < 400 {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.failed = true
	h := w.Header()
	for _, k := range []string{"ETag", "Cache-Control", "Content-Disposition", "Last-Modified", "Content-Length"} {
		h.Del(k)
	}
	var e *Error
	switch code {
	case http.StatusRequestedRangeNotSatisfiable:
		e = &Error{Status: code, Code: "range_not_satisfiable", Message: fmt.Sprintf("range %q is not satisfiable: asset %s has %d bytes", w.r.Header.Get("Range"), w.a.ID, w.a.Size)}
	case http.StatusPreconditionFailed:
		e = &Error{Status: code, Code: "precondition_failed", Message: fmt.Sprintf("a precondition failed: asset %s has ETag \"%s\"", w.a.ID, w.a.SHA256)}
	default:
		e = errorf(code, "the content of asset %s cannot be served", w.a.ID)
	}
	w.s.writeError(w.ResponseWriter, w.r, e)
}

func (w *contentWriter) Write(b []byte) (int, error) {
	if w.failed {
		return len(b), nil // ServeContent's plain-text message; the envelope is written
	}
	return w.ResponseWriter.Write(b)
}

func (w *contentWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
