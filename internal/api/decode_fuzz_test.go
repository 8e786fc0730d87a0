package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

// FuzzDecode feeds arbitrary bytes to the request decoder with every kind of request body:
// it must never panic, and every rejection must be a 400 (or 413/415) API error, or a 422 for
// a string holding NUL, never an internal one.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{}`, ``, `   `, `{"name":"a","type":"simple"}`, `{"name":5}`, `[]`, `null`, `{"config":{"model":"gpt-4o","temperature":"hot"}}`,
		`{"input":{"a":[1,2,{"b":null}]},"async":true}`, `{"name":"x"} {"name":"y"}`, `{"name":"\ud800"}`, `{"a":` + string(make([]byte, 64)) + `}`,
		`{"tags":[1,2]}`, `{"name":"a\u0000"}`, `{"metadata":{"k\u0000":1}}`, " null ", `{"value":"\udc80"}`, `{"value":"\ud83d\ude00"}`, `{"value":7}`, "{\"name\":\"\xff\"}", `{"metadata":"text"}`, `{"steps":[{"id":1}]}`, `{"expires_at":"tomorrow"}`, "\xff\xfe{}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, dst := range []any{
			&domain.AgentCreateRequest{}, &domain.AgentUpdateRequest{}, &agentVersionCreateRequest{}, &domain.AgentPreviewRequest{},
			&executeRequest{}, &playgroundRequest{}, &domain.ChatMessageRequest{}, &chatSessionCreateRequest{}, &approveRequest{},
			&domain.CredentialCreateRequest{}, &domain.CredentialUpdateRequest{},
		} {
			err := decodeBytes(body, dst)
			if err == nil {
				continue
			}
			ae := knownError(err)
			if ae == nil || ae.Message == "" {
				t.Fatalf("decode %q into %T: %v", body, dst, err)
			}
			// 422 only for what decoding itself must refuse: NUL, and a credential value the
			// decoder would silently change.
			refused := ae.Status == http.StatusUnprocessableEntity && (strings.Contains(ae.Message, "NUL") || strings.Contains(ae.Message, "surrogate"))
			if ae.Status != http.StatusBadRequest && ae.Status != http.StatusRequestEntityTooLarge && ae.Status != http.StatusUnsupportedMediaType && !refused {
				t.Fatalf("decode %q into %T: %v", body, dst, err)
			}
		}
	})
}
