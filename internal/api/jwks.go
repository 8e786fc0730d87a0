package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// jwksRefreshInterval is how often the identity provider's JWKS is fetched again.
const jwksRefreshInterval = 15 * time.Minute

// jwksMethods are the only algorithms accepted on a token verified against the JWKS.
var jwksMethods = []string{"RS256", "ES256"}

// jwksVerifier verifies tokens of an external identity provider against its JWKS, which
// keyfunc fetches and refreshes in the background until close.
type jwksVerifier struct {
	kf     keyfunc.Keyfunc
	cancel context.CancelFunc
}

func newJWKSVerifier(url string, log *slog.Logger) (*jwksVerifier, error) {
	ctx, cancel := context.WithCancel(context.Background())
	kf, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{url}, keyfunc.Override{
		HTTPTimeout:       10 * time.Second,
		RefreshInterval:   jwksRefreshInterval,
		RateLimitWaitMax:  time.Second,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(time.Minute), 1),
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(ctx context.Context, err error) {
				log.WarnContext(ctx, "refresh JWKS", "url", u, "error", err)
			}
		},
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("jwks %s: %w", url, err)
	}
	return &jwksVerifier{kf: kf, cancel: cancel}, nil
}

// close stops the background refresh.
func (v *jwksVerifier) close() {
	if v != nil {
		v.cancel()
	}
}

// jwksClaims are what a provider token must carry: an email and an expiry.
type jwksClaims struct {
	Email string `json:"email"`
	jwt.RegisteredClaims
}

// verify checks the token's signature (RS256 or ES256 only) against the JWKS and its expiry,
// and returns its email, lower-cased.
func (v *jwksVerifier) verify(ctx context.Context, raw string) (string, error) {
	var c jwksClaims
	_, err := jwt.ParseWithClaims(raw, &c, v.kf.KeyfuncCtx(ctx),
		jwt.WithValidMethods(jwksMethods), jwt.WithExpirationRequired())
	if err != nil {
		return "", err
	}
	email := strings.ToLower(strings.TrimSpace(c.Email))
	if email == "" {
		return "", errors.New("jwks: token has no email claim")
	}
	return email, nil
}
