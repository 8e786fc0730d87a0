package api

import (
	"net/http"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/guardrail"
	"github.com/agentplane/agentplane/internal/store"
)

type guardrailCreateRequest struct {
	Name        string                    `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Display name."`
	Description string                    `json:"description,omitempty" maxLength:"2000"`
	AppliesTo   string                    `json:"applies_to,omitempty" enum:"input,output,both" doc:"Defaults to both."`
	Action      string                    `json:"action,omitempty" enum:"block,warn,redact" doc:"Defaults to block."`
	Enabled     *bool                     `json:"enabled,omitempty" doc:"Defaults to true."`
	Scanners    []domain.GuardrailScanner `json:"scanners" minItems:"1" doc:"At least one; see GET /api/v1/guardrails/scanners for types and options."`
}

type guardrailUpdateRequest struct {
	Name        *string                    `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Description *string                    `json:"description,omitempty" maxLength:"2000"`
	AppliesTo   *string                    `json:"applies_to,omitempty" enum:"input,output,both"`
	Action      *string                    `json:"action,omitempty" enum:"block,warn,redact"`
	Enabled     *bool                      `json:"enabled,omitempty"`
	Scanners    *[]domain.GuardrailScanner `json:"scanners,omitempty" doc:"Replaces the whole list."`
}

type guardrailTestRequest struct {
	Text  *string `json:"text" required:"true" nullable:"false" doc:"The text to check (may be empty)."`
	Stage string  `json:"stage,omitempty" enum:"input,output" doc:"Defaults to input, or to output for a guardrail that applies only to output."`
}

func (s *Server) guardrailRoutes() []route {
	const tag = "Guardrails"
	return []route{
		{method: "GET", path: v1 + "/guardrails", op: "listGuardrails", tag: tag, scope: "agents:read", summary: "List guardrails", list: true,
			params: []param{{name: "enabled", typ: "boolean", desc: "true or false."},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the name or description."}},
			resp: domain.Guardrail{}, h: s.listGuardrails},
		{method: "POST", path: v1 + "/guardrails", op: "createGuardrail", tag: tag, scope: "agents:write", summary: "Create a guardrail",
			body: guardrailCreateRequest{}, resp: domain.Guardrail{}, status: http.StatusCreated, creates: true, h: s.createGuardrail},
		{method: "GET", path: v1 + "/guardrails/scanners", op: "listGuardrailScanners", tag: tag, scope: "agents:read", list: true,
			summary: "List the scanner types",
			resp:    guardrail.ScannerType{}, h: s.listGuardrailScanners},
		{method: "GET", path: v1 + "/guardrails/{id}", op: "getGuardrail", tag: tag, scope: "agents:read", summary: "Get a guardrail", resp: domain.Guardrail{}, h: byID(s, s.store.GuardrailGet)},
		{method: "PATCH", path: v1 + "/guardrails/{id}", op: "updateGuardrail", tag: tag, scope: "agents:write", summary: "Update a guardrail",
			body: guardrailUpdateRequest{}, resp: domain.Guardrail{}, h: s.updateGuardrail},
		{method: "DELETE", path: v1 + "/guardrails/{id}", op: "deleteGuardrail", tag: tag, scope: "agents:write", summary: "Delete a guardrail",
			resp: domain.Guardrail{}, errs: []int{http.StatusConflict}, h: byID(s, s.store.GuardrailDelete)},
		{method: "POST", path: v1 + "/guardrails/{id}/test", op: "testGuardrail", tag: tag, scope: "agents:read",
			summary: "Check a text against a guardrail",
			body:    guardrailTestRequest{}, resp: guardrail.Outcome{}, h: s.testGuardrail},
	}
}

func (s *Server) listGuardrails(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	f := domain.GuardrailFilter{Query: r.URL.Query().Get("q")}
	if f.Enabled, err = boolParam(r, "enabled"); err != nil {
		return err
	}
	items, total, err := s.store.GuardrailList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) createGuardrail(w http.ResponseWriter, r *http.Request) error {
	var req guardrailCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	g := &domain.Guardrail{WorkspaceID: s.workspace(r), Name: strings.TrimSpace(req.Name), Description: req.Description,
		AppliesTo: req.AppliesTo, Action: req.Action, Enabled: true, Scanners: withConfigs(req.Scanners)}
	if g.AppliesTo == "" {
		g.AppliesTo = "both"
	}
	if g.Action == "" {
		g.Action = guardrail.ActionBlock
	}
	if req.Enabled != nil {
		g.Enabled = *req.Enabled
	}
	if err := guardrail.Validate(g); err != nil {
		return err
	}
	created, err := s.store.GuardrailCreate(r.Context(), g)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, created)
	return nil
}

func (s *Server) updateGuardrail(w http.ResponseWriter, r *http.Request) error {
	var req guardrailUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ws, id := s.workspace(r), pathID(r, "id")
	p := domain.GuardrailPatch{Name: req.Name, Description: req.Description, AppliesTo: req.AppliesTo, Action: req.Action, Enabled: req.Enabled}
	if req.Name != nil {
		p.Name = ptr(strings.TrimSpace(*req.Name))
	}
	if req.Scanners != nil {
		p.Scanners = ptr(withConfigs(*req.Scanners))
	}
	var updated *domain.Guardrail
	err := s.store.InTx(r.Context(), func(tx *store.Store) error {
		cur, err := tx.GuardrailGet(r.Context(), ws, id)
		if err != nil {
			return err
		}
		merged := *cur
		setIfPresent(&merged.Name, p.Name)
		setIfPresent(&merged.Description, p.Description)
		setIfPresent(&merged.AppliesTo, p.AppliesTo)
		setIfPresent(&merged.Action, p.Action)
		setIfPresent(&merged.Scanners, p.Scanners)
		if err := guardrail.Validate(&merged); err != nil {
			return err
		}
		updated, err = tx.GuardrailUpdate(r.Context(), ws, id, p)
		return err
	})
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, updated)
	return nil
}

func (s *Server) listGuardrailScanners(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	all := guardrail.Catalog()
	writeList(w, pageOf(all, p), p, len(all))
	return nil
}

func (s *Server) testGuardrail(w http.ResponseWriter, r *http.Request) error {
	var req guardrailTestRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	g, err := s.store.GuardrailGet(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	// text is given (not null) and stage is input or output: the document says so.
	stage := guardrail.Stage(req.Stage)
	switch {
	case req.Stage == "" && g.AppliesTo == "output":
		stage = guardrail.StageOutput
	case req.Stage == "":
		stage = guardrail.StageInput
	}
	out, err := guardrail.Check(g, stage, *req.Text)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, out)
	return nil
}

// withConfigs stores a missing scanner config as {}.
func withConfigs(scanners []domain.GuardrailScanner) []domain.GuardrailScanner {
	for i := range scanners {
		if scanners[i].Config == nil {
			scanners[i].Config = domain.JSONObject{}
		}
	}
	return scanners
}
