package auth

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ScopeAll grants every scope.
const ScopeAll = "*"

// scopes is the sorted set of scopes a key may hold. Each scope is declared where it is used:
// the API registers every scope its route table requires (RegisterScopes), so a new resource's
// routes bring their scopes with them.
var scopes = struct {
	sync.RWMutex
	names []string
}{names: []string{ScopeAll}}

// RegisterScopes adds scope names a key may hold; registering a name twice is harmless.
func RegisterScopes(names ...string) {
	scopes.Lock()
	defer scopes.Unlock()
	for _, n := range names {
		if i, found := slices.BinarySearch(scopes.names, n); !found {
			scopes.names = slices.Insert(scopes.names, i, n)
		}
	}
}

// Scopes returns the sorted list of every valid scope name, including ScopeAll. Each call returns
// a new slice, so callers may modify it freely.
func Scopes() []string {
	scopes.RLock()
	defer scopes.RUnlock()
	return slices.Clone(scopes.names)
}

// IsScope reports whether s is a valid scope name.
func IsScope(s string) bool {
	scopes.RLock()
	defer scopes.RUnlock()
	_, found := slices.BinarySearch(scopes.names, s)
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
