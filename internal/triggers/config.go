package triggers

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/triggers/platform"
)

// maxConfigValue bounds every string of a trigger's config, in bytes.
const maxConfigValue = 1000

// buildConfig checks a type's config (the whole of it, after any merge) against the type's
// declaration and splits it into the stored config and its secrets. prev holds the secrets
// stored so far: a secret sent back in the masked form a read shows (prevMasked) keeps its
// value.
func (s *Service) buildConfig(ctx context.Context, ws, typ string, in, prevMasked map[string]any, prev domain.TriggerSecrets) (domain.JSONObject, domain.TriggerSecrets, error) {
	spec, ok := platform.Lookup(typ)
	if !ok {
		return nil, nil, domain.Invalid("type", "must be one of %s, got %q", strings.Join(platform.Types(), ", "), typ)
	}
	if err := unknownKeys(spec, in); err != nil {
		return nil, nil, err
	}

	// Each declared field, checked on its own.
	config, secrets := domain.JSONObject{}, domain.TriggerSecrets{}
	for _, f := range spec.Fields {
		if f.Default != nil {
			config[f.Name] = f.Default
		}
	}
	for _, f := range spec.Fields {
		if err := s.readField(ctx, ws, typ, f, in[f.Name], config, secrets, prevMasked, prev); err != nil {
			return nil, nil, err
		}
	}

	// Then the type's rule over the whole config, secrets included.
	if spec.Validate != nil {
		if err := spec.Validate(allConfig(config, secrets)); err != nil {
			var fe *domain.FieldError
			if errors.As(err, &fe) {
				return nil, nil, domain.Invalid("config."+fe.Field, "%s", fe.Message)
			}
			return nil, nil, domain.Invalid("config", "%s", err.Error())
		}
	}
	return config, secrets, nil
}

// unknownKeys refuses the first key, in sorted order, that the type does not declare.
func unknownKeys(spec platform.Spec, in map[string]any) error {
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	names := spec.FieldNames()
	for _, k := range keys {
		if !slices.Contains(names, k) {
			return domain.Invalid("config."+k, "unknown field for a %s trigger; known fields: %s", spec.Type, strings.Join(names, ", "))
		}
	}
	return nil
}

// readField checks one field's value v and puts it in config or secrets.
func (s *Service) readField(ctx context.Context, ws, typ string, f platform.Field, v any, config domain.JSONObject, secrets domain.TriggerSecrets,
	prevMasked map[string]any, prev domain.TriggerSecrets) error {
	field := "config." + f.Name
	if v == nil {
		if f.Required {
			return domain.Invalid(field, "is required for a %s trigger", typ)
		}
		return nil
	}
	if f.Kind == platform.KindBool {
		b, isBool := v.(bool)
		if !isBool {
			return domain.Invalid(field, "must be true or false")
		}
		config[f.Name] = b
		return nil
	}

	// Every other kind is a non-empty string of bounded length.
	str, isStr := v.(string)
	if !isStr {
		return domain.Invalid(field, "must be a string")
	}
	if strings.TrimSpace(str) == "" {
		if f.Required {
			return domain.Invalid(field, "is required for a %s trigger and must not be empty", typ)
		}
		return nil
	}
	if len(str) > maxConfigValue {
		return domain.Invalid(field, "must be at most %d bytes", maxConfigValue)
	}
	if f.Kind == platform.KindSecret {
		if old, kept := prev[f.Name]; kept && prevMasked[f.Name] == str {
			secrets[f.Name] = old // sent back masked, as read: unchanged
			return nil
		}
	}

	// The kind's own rule, then the field's.
	switch f.Kind {
	case platform.KindEnum:
		if !slices.Contains(f.Enum, str) {
			return domain.Invalid(field, "must be one of %s, got %q", strings.Join(f.Enum, ", "), str)
		}
	case platform.KindCredential:
		if err := s.Store.CheckRefs(ctx, ws, domain.KindCredential, field, str); err != nil {
			return err
		}
	}
	if f.Check != nil {
		if err := f.Check(str); err != nil {
			return domain.Invalid(field, "%s", err.Error())
		}
	}
	if f.Kind == platform.KindSecret {
		secrets[f.Name] = str
	} else {
		config[f.Name] = str
	}
	return nil
}

// allConfig is the config with its secrets, as the platform sees it.
func allConfig(config domain.JSONObject, secrets domain.TriggerSecrets) platform.Config {
	all := platform.Config{}
	for k, v := range config {
		all[k] = v
	}
	for k, v := range secrets {
		all[k] = v
	}
	return all
}
