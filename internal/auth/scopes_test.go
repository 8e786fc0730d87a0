package auth

import (
	"slices"
	"strings"
	"testing"
)

func TestRegisterScopes(t *testing.T) {
	t.Parallel()
	RegisterScopes("test_widgets:write", "test_widgets:read", "test_widgets:read")
	s := Scopes()
	t.Run("sorted, without duplicates, with the wildcard", func(t *testing.T) {
		if !slices.IsSorted(s) || len(slices.Compact(slices.Clone(s))) != len(s) {
			t.Errorf("Scopes() = %v", s)
		}
		if !IsScope(ScopeAll) || !IsScope("test_widgets:read") || !IsScope("test_widgets:write") {
			t.Errorf("registered scopes missing from %v", s)
		}
	})
	t.Run("callers get a copy", func(t *testing.T) {
		s[0] = "mutated"
		if Scopes()[0] != ScopeAll {
			t.Error("modifying the result of Scopes() changed the package's list")
		}
	})
}

func TestValidateScopes(t *testing.T) {
	t.Parallel()
	RegisterScopes("agents:read", "agents:write", "traces:write")
	tests := []struct {
		name    string
		scopes  []string
		wantErr string // substring; "" means valid
	}{
		{"all", []string{"*"}, ""},
		{"several", []string{"agents:read", "agents:write", "traces:write"}, ""},
		{"every scope", Scopes(), ""},
		{"nil", nil, "at least one"},
		{"empty", []string{}, "at least one"},
		{"unknown", []string{"agents:read", "agents:delete"}, `scopes[1]: unknown scope "agents:delete"`},
		{"empty string", []string{""}, `unknown scope ""`},
		{"case matters", []string{"Agents:Read"}, `"Agents:Read"`},
		{"spaces", []string{" agents:read"}, `" agents:read"`},
		{"wildcard family", []string{"agents:*"}, `"agents:*"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateScopes(tt.scopes)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("ValidateScopes(%q) = %v", tt.scopes, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("ValidateScopes(%q) = %v, want error containing %q", tt.scopes, err, tt.wantErr)
			}
		})
	}
}

func TestGrants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		granted []string
		needed  string
		want    bool
	}{
		{[]string{"*"}, "agents:write", true},
		{[]string{"*"}, "keys:admin", true},
		{[]string{"agents:read", "*"}, "traces:write", true},
		{[]string{"agents:read"}, "agents:read", true},
		{[]string{"agents:read"}, "agents:write", false},
		{[]string{"agents:write"}, "agents:read", false},
		{[]string{"agents:read"}, "agents", false},
		{[]string{"agents"}, "agents:read", false},
		{nil, "agents:read", false},
		{nil, "", true},
		{[]string{"agents:read"}, "", true},
		{[]string{""}, "agents:read", false},
	}
	for _, tt := range tests {
		if got := Grants(tt.granted, tt.needed); got != tt.want {
			t.Errorf("Grants(%q, %q) = %v, want %v", tt.granted, tt.needed, got, tt.want)
		}
	}
}
