package store

import (
	"encoding/json"

	"github.com/agentplane/agentplane/internal/domain"
)

// jsonValue stores any value as JSON text.
func jsonValue(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// jsonCol adapts a pointer to any JSON-shaped value for Scan.
type jsonCol struct{ dst any }

func (c jsonCol) Scan(src any) error { return domain.ScanJSON(src, c.dst) }

func pageOffset(p domain.Page) int { return (p.Page - 1) * p.Limit }
