package seed

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/prompttmpl"
)

// promptEntry is one object of prompts.json. Templates arrive in prompt_versions.json.
type promptEntry struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Tags        []string       `json:"tags"`
	Metadata    map[string]any `json:"metadata"`
}

func (l *loader) prompt(ctx context.Context, e json.RawMessage) error {
	var p promptEntry
	if err := strict(e, &p); err != nil {
		return err
	}
	if strings.TrimSpace(p.Name) == "" {
		return fmt.Errorf("name is required")
	}
	for i, t := range p.Tags {
		if strings.TrimSpace(t) == "" {
			return fmt.Errorf("tags[%d] must not be empty", i)
		}
	}
	_, err := l.st.PromptCreate(ctx, &domain.Prompt{ID: p.ID, WorkspaceID: l.ws, Name: p.Name, Description: p.Description,
		Tags: p.Tags, Metadata: p.Metadata}, nil)
	return err
}

// promptVersionEntry is one object of prompt_versions.json.
type promptVersionEntry struct {
	ID       string         `json:"id"`
	PromptID string         `json:"prompt_id"`
	Version  int            `json:"version"`
	Template string         `json:"template"`
	Notes    string         `json:"notes"`
	Active   bool           `json:"active"`
	Config   map[string]any `json:"config"`
}

func (l *loader) promptVersion(ctx context.Context, e json.RawMessage) error {
	var v promptVersionEntry
	if err := strict(e, &v); err != nil {
		return err
	}
	if v.PromptID == "" {
		return fmt.Errorf("prompt_id is required")
	}
	if v.Version < 0 {
		return fmt.Errorf("version must not be negative")
	}
	p, err := l.st.PromptGet(ctx, l.ws, v.PromptID)
	if err != nil {
		return fmt.Errorf("prompt_id: %w", err)
	}
	if _, err := prompttmpl.Parse(v.Template); err != nil {
		return fmt.Errorf("template: %w", err)
	}
	created, err := l.st.PromptVersionCreate(ctx, &domain.PromptVersion{ID: v.ID, WorkspaceID: l.ws, PromptID: p.ID,
		Version: v.Version, Template: v.Template, Config: v.Config, Notes: v.Notes})
	if err != nil {
		return err
	}
	if v.Active {
		return l.st.PromptVersionPromote(ctx, l.ws, p.ID, created.ID)
	}
	return nil
}

// finishPrompts gives every prompt that received versions but none marked active its latest
// version (the highest number) as the active one. The state it needs is in the store, so the
// loader keeps none: an active version is never unset, so a prompt still without one at the end
// is exactly a prompt whose entries marked none active.
func (l *loader) finishPrompts(ctx context.Context) error {
	var pending []*domain.Prompt
	for page := 1; ; page++ {
		items, total, err := l.st.PromptList(ctx, l.ws, domain.PromptFilter{}, domain.Page{Page: page, Limit: 100})
		if err != nil {
			return fmt.Errorf("list prompts: %w", err)
		}
		for _, p := range items {
			if p.ActiveVersionID == nil && p.VersionCount > 0 {
				pending = append(pending, p)
			}
		}
		if page*100 >= total {
			break
		}
	}
	for _, p := range pending {
		latest, _, err := l.st.PromptVersionList(ctx, l.ws, p.ID, domain.Page{Page: 1, Limit: 1})
		if err != nil {
			return fmt.Errorf("latest version of prompt %s: %w", p.ID, err)
		}
		if len(latest) == 0 {
			continue
		}
		if err := l.st.PromptVersionPromote(ctx, l.ws, p.ID, latest[0].ID); err != nil {
			return fmt.Errorf("activate latest version of prompt %s: %w", p.ID, err)
		}
	}
	return nil
}
