package domain

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/auth"
)

// APIKeyCreateRequest is a new API key as a client asks for it. The document checks its shape
// (and that every scope is known); Validate holds the rest.
type APIKeyCreateRequest struct {
	Name           string   `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Display name."`
	Scopes         []string `json:"scopes" required:"true" doc:"Scopes the key grants; \"*\" grants all, including managing keys."`
	AllowedIPs     []string `json:"allowed_ips,omitempty" doc:"Addresses and CIDR ranges (IPv4 or IPv6) the key may be used from; empty allows any."`
	AllowedOrigins []string `json:"allowed_origins,omitempty" doc:"Origins (scheme://host[:port]) a browser may use the key from; empty allows any."`
	ExpiresAt      *string  `json:"expires_at,omitempty" format:"date-time" doc:"When the key stops working (RFC 3339, in the future); omit for never."`
}

// Validate holds a new key's rules: a name that is more than white space, allow-lists whose
// every entry auth can use, and an expiry that is an RFC 3339 time in the future.
func (r *APIKeyCreateRequest) Validate() error {
	if err := NotBlank("name", r.Name); err != nil {
		return err
	}
	for i, entry := range r.AllowedIPs {
		if _, err := auth.ParseIPRule(strings.TrimSpace(entry)); err != nil {
			return Invalid(fmt.Sprintf("allowed_ips[%d]", i), "%q: %v", entry, err)
		}
	}
	for i, entry := range r.AllowedOrigins {
		if _, err := auth.NormalizeOrigin(strings.TrimSpace(entry)); err != nil {
			return Invalid(fmt.Sprintf("allowed_origins[%d]", i), "%q: %v", entry, err)
		}
	}
	if r.ExpiresAt == nil {
		return nil
	}
	t, err := time.Parse(time.RFC3339, *r.ExpiresAt)
	if err != nil {
		return Invalid("expires_at", "must be an RFC 3339 time such as 2030-01-02T15:04:05Z, got %q", *r.ExpiresAt)
	}
	if !t.After(time.Now()) {
		return Invalid("expires_at", "must be in the future, got %s", *r.ExpiresAt)
	}
	return nil
}

// APIKey is the key of workspace ws the request describes, its name and allow-list entries
// trimmed, its origins normalised and its expiry in UTC to the millisecond; prefix and hash
// are the caller's. It assumes Validate has passed.
func (r *APIKeyCreateRequest) APIKey(ws string) *APIKey {
	k := &APIKey{WorkspaceID: ws, Name: strings.TrimSpace(r.Name), Scopes: r.Scopes,
		AllowedIPs: make(Strings, len(r.AllowedIPs))}
	for i, ip := range r.AllowedIPs {
		k.AllowedIPs[i] = strings.TrimSpace(ip)
	}
	// Validate has checked every origin: normalising them cannot fail.
	k.AllowedOrigins, _ = auth.ParseOrigins(r.AllowedOrigins)
	if r.ExpiresAt != nil {
		t, _ := time.Parse(time.RFC3339, *r.ExpiresAt)
		k.ExpiresAt = &Time{Time: t.UTC().Truncate(time.Millisecond)}
	}
	return k
}
