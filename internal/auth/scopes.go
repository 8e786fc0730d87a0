package auth

import (
	"errors"
	"fmt"
	"slices"
)

// ScopeAll grants every scope.
const ScopeAll = "*"

// scopeList is the sorted set of scopes a key may hold (API.md section 3). It is an array, not a
// slice, so Scopes can hand out copies and no caller can change what is valid.
var scopeList = [...]string{
	"*",
	"agent_triggers:read",
	"agent_triggers:write",
	"agents:execute",
	"agents:read",
	"agents:write",
	"assets:read",
	"assets:write",
	"chat:write",
	"credentials:read",
	"credentials:write",
	"data_sources:execute",
	"data_sources:read",
	"data_sources:write",
	"datasets:read",
	"datasets:write",
	"executions:read",
	"keys:admin",
	"prompts:execute",
	"prompts:read",
	"prompts:write",
	"scores:read",
	"scores:write",
	"sessions:read",
	"traces:read",
	"traces:write",
}

// Scopes returns the sorted list of every valid scope name, including ScopeAll. Each call returns
// a new slice, so callers may modify it freely.
func Scopes() []string {
	return slices.Clone(scopeList[:])
}

// IsScope reports whether s is a valid scope name.
func IsScope(s string) bool {
	_, found := slices.BinarySearch(scopeList[:], s)
	return found
}

// ValidateScopes checks the scopes requested for a key: the list must be non-empty and every
// entry a known scope. The error names the first unknown scope and its position.
func ValidateScopes(scopes []string) error {
	if len(scopes) == 0 {
		return errors.New("scopes: at least one scope is required")
	}
	for i, s := range scopes {
		if !IsScope(s) {
			return fmt.Errorf("scopes[%d]: unknown scope %q", i, s)
		}
	}
	return nil
}

// Grants reports whether a key holding granted may perform an action needing the scope needed.
// ScopeAll grants everything; otherwise the match is exact (a write scope does not imply read).
// An empty needed means the action needs no scope.
func Grants(granted []string, needed string) bool {
	if needed == "" {
		return true
	}
	for _, g := range granted {
		if g == ScopeAll || g == needed {
			return true
		}
	}
	return false
}
