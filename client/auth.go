package client

import (
	"context"
	"net/http"
)

// Login signs a user in with their email and password (serve only). A wrong email or
// password is an *Error with status 401; too many failed logins one with status 429.
func (c *Client) Login(ctx context.Context, email, password string) (*LoginToken, error) {
	return send[LoginToken](ctx, c, http.MethodPost, "/api/v1/auth/login", map[string]string{"email": email, "password": password})
}
