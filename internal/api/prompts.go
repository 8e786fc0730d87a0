package api

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/prompttmpl"
)

// maxTagLen bounds a prompt tag, in characters (documented by tagItems).
const maxTagLen = 100

type promptPreviewRequest struct {
	Variables map[string]any `json:"variables,omitempty" doc:"Values of the template's variables; defaults to {}."`
	VersionID string         `json:"version_id,omitempty" doc:"Render this version instead of the active one."`
	Strict    bool           `json:"strict,omitempty" doc:"Fail with 422 when any variable the template uses is missing."`
}

// PromptPreview is a prompt version rendered with the caller's variables.
type PromptPreview struct {
	PromptID  string   `json:"prompt_id"`
	VersionID string   `json:"version_id" doc:"The version rendered."`
	Version   int      `json:"version"`
	Rendered  string   `json:"rendered"`
	Variables []string `json:"variables" doc:"Top-level variables the template uses, in order of first use."`
	Missing   []string `json:"missing" doc:"Of those, the ones the request does not supply."`
}

func (s *Server) promptRoutes() []route {
	const tag = "Prompts"
	return []route{
		{method: "GET", path: v1 + "/prompts", op: "listPrompts", tag: tag, scope: "prompts:read", summary: "List prompts", list: true,
			params: []param{{name: "q", typ: "string", desc: "Case-insensitive substring of the name or description."},
				{name: "tag", typ: "string", desc: "Only prompts with this tag (case-insensitive)."}},
			resp: domain.Prompt{}, h: s.listPrompts},
		{method: "POST", path: v1 + "/prompts", op: "createPrompt", tag: tag, scope: "prompts:write", summary: "Create a prompt (and its version 1)",
			desc: description("createPrompt") + " " + description("_template-language"),
			body: domain.PromptCreateRequest{}, resp: domain.Prompt{}, status: http.StatusCreated, creates: true, h: s.createPrompt},
		{method: "GET", path: v1 + "/prompts/{id}", op: "getPrompt", tag: tag, scope: "prompts:read", summary: "Get a prompt",
			resp: domain.Prompt{}, h: byID(s, s.store.PromptGet)},
		{method: "PATCH", path: v1 + "/prompts/{id}", op: "updatePrompt", tag: tag, scope: "prompts:write", summary: "Update a prompt's name, description, tags or metadata",
			body: domain.PromptUpdateRequest{}, resp: domain.Prompt{}, h: s.updatePrompt},
		{method: "DELETE", path: v1 + "/prompts/{id}", op: "deletePrompt", tag: tag, scope: "prompts:write", summary: "Delete a prompt and its versions",
			resp: domain.Prompt{}, errs: []int{http.StatusConflict}, h: byID(s, s.store.PromptDelete)},
		{method: "GET", path: v1 + "/prompts/{id}/versions", op: "listPromptVersions", tag: tag, scope: "prompts:read", summary: "List a prompt's versions, newest first",
			list: true, resp: domain.PromptVersion{}, h: childList(s, s.store.PromptVersionList)},
		{method: "POST", path: v1 + "/prompts/{id}/versions", op: "createPromptVersion", tag: tag, scope: "prompts:write", summary: "Create a version",
			desc: description("createPromptVersion") + " " + description("_template-language"),
			body: domain.PromptVersionCreateRequest{}, resp: domain.PromptVersion{}, status: http.StatusCreated, creates: true, h: s.createPromptVersion},
		{method: "GET", path: v1 + "/prompts/{id}/versions/{version_id}", op: "getPromptVersion", tag: tag, scope: "prompts:read", summary: "Get a version",
			resp: domain.PromptVersion{}, h: versionByID(s, s.store.PromptVersionGet)},
		{method: "POST", path: v1 + "/prompts/{id}/versions/{version_id}/promote", op: "promotePromptVersion", tag: tag, scope: "prompts:write",
			summary: "Make a version the active one", resp: domain.Prompt{}, h: promoteVersion(s, s.store.PromptVersionPromote, s.store.PromptGet)},
		{method: "POST", path: v1 + "/prompts/{id}/preview", op: "previewPrompt", tag: tag, scope: "prompts:execute",
			summary: "Render a version with variables",
			desc:    description("previewPrompt") + " " + description("_template-language"),
			body:    promptPreviewRequest{}, resp: PromptPreview{}, errs: []int{http.StatusConflict}, h: s.previewPrompt},
	}
}

func (s *Server) listPrompts(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	items, total, err := s.store.PromptList(r.Context(), s.workspace(r), domain.PromptFilter{Query: q.Get("q"), Tag: strings.TrimSpace(q.Get("tag"))}, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

// tagItems documents each tag as domain's Validate and trimTags take it: not blank, at most
// maxTagLen characters.
func tagItems(s *huma.Schema) *huma.Schema {
	if p := s.Properties["tags"]; p != nil && p.Items != nil {
		p.Items.MinLength, p.Items.Pattern, p.Items.MaxLength = ptr(1), `\S`, ptr(maxTagLen)
	}
	return s
}

func trimTags(tags []string) domain.Strings {
	out := make(domain.Strings, len(tags))
	for i, t := range tags {
		out[i] = strings.TrimSpace(t)
	}
	return out
}

func (s *Server) createPrompt(w http.ResponseWriter, r *http.Request) error {
	var req domain.PromptCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	ws := s.workspace(r)
	p, err := s.store.PromptCreate(r.Context(), &domain.Prompt{
		WorkspaceID: ws, Name: strings.TrimSpace(req.Name), Description: req.Description,
		Tags: trimTags(req.Tags), Metadata: domain.JSONObject(req.Metadata),
	}, &domain.PromptVersion{Template: req.Template, Config: domain.JSONObject(req.Config), Notes: req.Notes})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, p)
	return nil
}

func (s *Server) updatePrompt(w http.ResponseWriter, r *http.Request) error {
	var req domain.PromptUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	var p domain.PromptPatch
	p.Name = trimmed(req.Name) // Validate has checked it
	p.Description = req.Description
	if req.Tags != nil {
		p.Tags = ptr(trimTags(*req.Tags))
	}
	if req.Metadata != nil {
		p.Metadata = ptr(domain.JSONObject(*req.Metadata))
	}
	out, err := s.store.PromptUpdate(r.Context(), s.workspace(r), pathID(r, "id"), p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, out)
	return nil
}

func (s *Server) createPromptVersion(w http.ResponseWriter, r *http.Request) error {
	var req domain.PromptVersionCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ws, id := s.workspace(r), pathID(r, "id")
	if _, err := s.store.PromptGet(r.Context(), ws, id); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	v, err := s.store.PromptVersionCreate(r.Context(), &domain.PromptVersion{WorkspaceID: ws, PromptID: id,
		Template: req.Template, Config: domain.JSONObject(req.Config), Notes: req.Notes})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, v)
	return nil
}

func (s *Server) previewPrompt(w http.ResponseWriter, r *http.Request) error {
	var req promptPreviewRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ws, id := s.workspace(r), pathID(r, "id")
	p, err := s.store.PromptGet(r.Context(), ws, id)
	if err != nil {
		return err
	}
	versionID := req.VersionID
	if versionID == "" {
		if p.ActiveVersionID == nil {
			return conflict("prompt %s has no active version; give version_id or promote a version", id)
		}
		versionID = *p.ActiveVersionID
	}
	v, err := s.store.PromptVersionGet(r.Context(), ws, id, versionID)
	if err != nil {
		return err
	}
	tmpl, err := prompttmpl.Parse(v.Template)
	if err != nil {
		return fmt.Errorf("parse stored template of prompt version %s: %w", v.ID, err)
	}
	if req.Variables == nil {
		req.Variables = map[string]any{}
	}
	missing := tmpl.Missing(req.Variables)
	if req.Strict && len(missing) > 0 {
		return domain.Invalid("variables", "missing %s (strict mode renders only when every variable the template uses is given)", strings.Join(missing, ", "))
	}
	rendered, err := tmpl.Render(req.Variables)
	if err != nil {
		return domain.Invalid("variables", "%s", err.Error())
	}
	writeData(w, http.StatusOK, PromptPreview{PromptID: id, VersionID: v.ID, Version: v.Version, Rendered: rendered,
		Variables: v.Variables, Missing: missing})
	return nil
}
