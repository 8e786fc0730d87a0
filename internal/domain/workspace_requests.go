package domain

import "regexp"

// LoginRequest is a user's login.
type LoginRequest struct {
	Email    string `json:"email" minLength:"1" pattern:"\\S" doc:"The user's email (case-insensitive)."`
	Password string `json:"password" minLength:"1" pattern:"\\S"`
}

// Validate holds a login's rule: an email and a password that are more than white space.
func (r *LoginRequest) Validate() error {
	return FirstErr(NotBlank("email", r.Email), NotBlank("password", r.Password))
}

// WorkspaceCreateRequest is a new workspace.
type WorkspaceCreateRequest struct {
	Name string `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Display name."`
	Slug string `json:"slug,omitempty" doc:"Unique URL-safe name (lower-case letters, digits and dashes); derived from name when omitted."`
}

// slugRe is the form of a workspace slug.
var slugRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Validate holds a new workspace's rules: a name that is more than white space and a slug of
// the URL-safe form (the caller derives one from the name when none is given).
func (r *WorkspaceCreateRequest) Validate() error {
	if err := NotBlank("name", r.Name); err != nil {
		return err
	}
	if !slugRe.MatchString(r.Slug) {
		return Invalid("slug", "must be 1 to 63 lower-case letters, digits and dashes, starting with a letter or digit; got %q", r.Slug)
	}
	return nil
}
