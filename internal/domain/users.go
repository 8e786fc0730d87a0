package domain

// User is a person who logs in with an email and a password and acts in the workspaces they
// are a member of. The password hash is never part of this type's JSON.
type User struct {
	ID           string `json:"id"`
	Email        string `json:"email"`
	PasswordHash string `json:"-"`
	CreatedAt    Time   `json:"created_at"`
}

// The roles a member can hold in a workspace.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// ValidRole reports whether role is one of owner, admin and member.
func ValidRole(role string) bool {
	return role == RoleOwner || role == RoleAdmin || role == RoleMember
}

// Membership is a workspace a user belongs to, with their role there.
type Membership struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	Name string `json:"name"`
	Role string `json:"role" enum:"owner,admin,member"`
}
