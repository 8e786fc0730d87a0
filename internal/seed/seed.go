// Package seed loads the emulator's built-in seed data (embedded JSON) and user fixtures
// (the same file formats, from a directory) into a store, through the store's own methods
// and the same validation rules as the API.
package seed

import (
	"reflect"

	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentplane/agentplane/internal/jsonfields"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentplane/agentplane/internal/secretbox"
)

//go:embed data/*.json
var data embed.FS

// Options say what Load loads.
type Options struct {
	WorkspaceID string
	Seed        bool   // load the built-in seed data
	FixturesDir string // also load fixture files from this directory ("" for none)
	Secrets     *secretbox.Box
}

// Files lists the fixture files in the order they are loaded (references point backwards).
var Files = []string{
	"llm_models.json", "credentials.json", "mcp_tools.json", "guardrails.json", "data_sources.json",
	"prompts.json", "prompt_versions.json", "agents.json", "agent_versions.json",
}

// source is one set of files: the embedded seed or a fixtures directory.
type source struct {
	name string // shown in errors: "seed" or the directory
	fsys fs.FS
}

// Load loads the seed and/or fixtures. A malformed file or an entry that references a missing
// resource stops it with an error naming the file and the entry.
func Load(ctx context.Context, st Store, o Options) error {
	var sources []source
	if o.Seed {
		sub, _ := fs.Sub(data, "data")
		sources = append(sources, source{name: "seed", fsys: sub})
	}
	if o.FixturesDir != "" {
		info, err := os.Stat(o.FixturesDir)
		if err != nil || !info.IsDir() {
			return fmt.Errorf("fixtures directory %s: not a readable directory", o.FixturesDir)
		}
		sources = append(sources, source{name: o.FixturesDir, fsys: os.DirFS(o.FixturesDir)})
	}
	l := &loader{st: st, ws: o.WorkspaceID, box: o.Secrets}
	for _, src := range sources {
		for _, file := range Files {
			raw, err := fs.ReadFile(src.fsys, file)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			path := filepath.Join(src.name, file)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			entries, err := splitEntries(file, raw)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			for i, e := range entries {
				if err := l.load(ctx, file, e); err != nil {
					return fmt.Errorf("%s: entry %d%s: %w", path, i, entryID(e), err)
				}
			}
		}
	}
	return l.finish(ctx)
}

// splitEntries reads a file's JSON array; llm_models.json may also be an object with a
// "models" array (the seed states its price date that way).
func splitEntries(file string, raw []byte) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if file == "llm_models.json" && len(raw) > 0 && raw[0] == '{' {
		var wrapper struct {
			Models []json.RawMessage `json:"models"`
		}
		if err := json.Unmarshal(raw, &wrapper); err != nil {
			return nil, fmt.Errorf("malformed JSON: %w", err)
		}
		return wrapper.Models, nil
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("malformed JSON (want an array of objects): %w", err)
	}
	return entries, nil
}

func entryID(e json.RawMessage) string {
	var v struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(e, &v) == nil && v.ID != "" {
		return fmt.Sprintf(" (id %s)", v.ID)
	}
	return ""
}

// strict decodes one entry, rejecting unknown fields so typos in fixtures are caught: the
// error names the field's path and the likely intended one (config.temprature: unknown
// field; did you mean temperature?).
func strict(e json.RawMessage, dst any) error {
	if err := jsonfields.Unknown(e, reflect.TypeOf(dst), ""); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(e))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("malformed entry: %w", err)
	}
	return nil
}

// LoadCatalog loads (or refreshes) only the built-in LLM model catalog: the server does this
// on every start so prices stay current with the binary.
func LoadCatalog(ctx context.Context, st Store) error {
	raw, err := data.ReadFile("data/llm_models.json")
	if err != nil {
		return err
	}
	entries, err := splitEntries("llm_models.json", raw)
	if err != nil {
		return fmt.Errorf("seed llm_models.json: %w", err)
	}
	l := &loader{st: st}
	for i, e := range entries {
		if err := l.llmModel(ctx, e); err != nil {
			return fmt.Errorf("seed llm_models.json: entry %d%s: %w", i, entryID(e), err)
		}
	}
	return nil
}
