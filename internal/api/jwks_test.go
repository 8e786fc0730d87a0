package api

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentplane/agentplane/internal/domain"
)

const testKID = "test-key-1"

// jwksServer serves a JWKS holding the public half of key.
func jwksServer(t *testing.T, key *rsa.PrivateKey) *httptest.Server {
	t.Helper()
	b64 := base64.RawURLEncoding.EncodeToString
	set := map[string]any{"keys": []map[string]any{{
		"kty": "RSA", "kid": testKID, "use": "sig", "alg": "RS256",
		"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
	}}}
	raw, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(raw)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func rsaToken(t *testing.T, key *rsa.PrivateKey, email string, exp time.Time) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"email": email, "sub": "idp|123", "exp": exp.Unix(), "iat": time.Now().Unix()})
	tok.Header["kid"] = testKID
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJWKSBearerAuth(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	idp := jwksServer(t, key)
	e := newServerEnvWith(t, func(c *Config) { c.JWKSURL = idp.URL + "/.well-known/jwks.json" })
	newUser(t, e, "sso@example.com", "", e.ws, domain.RoleMember)
	newUser(t, e, "outsider@example.com", "", "", "")

	hour := time.Now().Add(time.Hour)
	good := rsaToken(t, key, "SSO@Example.com", hour)
	forged := rsaToken(t, other, "sso@example.com", hour)
	expired := rsaToken(t, key, "sso@example.com", time.Now().Add(-time.Hour))
	unknown := rsaToken(t, key, "ghost@example.com", hour)
	outsider := rsaToken(t, key, "outsider@example.com", hour)
	noExp, err := func() (string, error) {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"email": "sso@example.com"})
		tok.Header["kid"] = testKID
		return tok.SignedString(key)
	}()
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	confusion := func(secret []byte) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"email": "sso@example.com", "exp": hour.Unix()})
		tok.Header["kid"] = testKID
		s, err := tok.SignedString(secret)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	const agents = "/api/v1/agents"
	e.run([]scenario{
		{name: "idp token accepted", method: "GET", path: agents, header: bearer(good, e.ws), status: 200},
		{name: "idp token writes", method: "POST", path: agents, header: bearer(good, e.ws), body: `{"name":"by sso","type":"simple"}`,
			status: 201, fields: map[string]any{"data.workspace_id": e.ws}},
		{name: "idp token lacks *", method: "GET", path: "/api/v1/api-keys", header: bearer(good, e.ws), status: 403, code: "forbidden"},
		{name: "idp token without workspace", method: "GET", path: agents, header: bearer(good, ""), status: 400, message: "X-Workspace-ID"},
		{name: "idp non-member", method: "GET", path: agents, header: bearer(outsider, e.ws), status: 403, message: "not a member"},
		{name: "other rsa key", method: "GET", path: agents, header: bearer(forged, e.ws), status: 401, code: "unauthorized"},
		{name: "hs256 with public key pem", method: "GET", path: agents, header: bearer(confusion(pemKey), e.ws), status: 401, code: "unauthorized"},
		{name: "hs256 with public key der", method: "GET", path: agents, header: bearer(confusion(der), e.ws), status: 401, code: "unauthorized"},
		{name: "expired", method: "GET", path: agents, header: bearer(expired, e.ws), status: 401, code: "unauthorized"},
		{name: "no expiry", method: "GET", path: agents, header: bearer(noExp, e.ws), status: 401, code: "unauthorized"},
		{name: "unknown email", method: "GET", path: agents, header: bearer(unknown, e.ws), status: 401, code: "unauthorized"},
		{name: "login token still accepted", method: "GET", path: agents, header: bearer(token(t, mustUser(t, e, "sso@example.com")), e.ws), status: 200},
	})
}

func mustUser(t *testing.T, e *testEnv, email string) *domain.User {
	t.Helper()
	u, err := e.store.UserByEmail(t.Context(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
