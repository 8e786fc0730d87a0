package client

import (
	"context"
	"net/http"
	"time"
)

// LoginToken is a signed-in user's token (a JWT, valid 12 hours) and the workspaces they
// may act in. Send it with WithBearer, and WithWorkspace naming one of the workspaces.
type LoginToken struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	User      struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	} `json:"user"`
	Workspaces []Membership `json:"workspaces"`
}

// Membership is a workspace of the user and their role in it (owner, admin or member).
type Membership struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	Name string `json:"name"`
	Role string `json:"role"`
}

// Login signs a user in with their email and password (serve only). A wrong email or
// password is an *Error with status 401; too many failed logins one with status 429.
func (c *Client) Login(ctx context.Context, email, password string) (*LoginToken, error) {
	return send[LoginToken](ctx, c, http.MethodPost, "/api/v1/auth/login", map[string]string{"email": email, "password": password})
}
