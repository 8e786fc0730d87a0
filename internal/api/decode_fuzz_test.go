package api

import (
	"errors"
	"net/http"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the request decoder with every kind of request body:
// it must never panic, and every rejection must be a 400 (or 413/415) API error, never an
// internal one.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{}`, ``, `   `, `{"name":"a","type":"simple"}`, `{"name":5}`, `[]`, `null`, `{"config":{"model":"gpt-4o","temperature":"hot"}}`,
		`{"input":{"a":[1,2,{"b":null}]},"async":true}`, `{"name":"x"} {"name":"y"}`, `{"name":"\ud800"}`, `{"a":` + string(make([]byte, 64)) + `}`,
		`{"tags":[1,2]}`, `{"metadata":"text"}`, `{"steps":[{"id":1}]}`, `{"expires_at":"tomorrow"}`, "\xff\xfe{}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, dst := range []any{
			&agentCreateRequest{}, &agentUpdateRequest{}, &agentVersionCreateRequest{}, &agentPreviewRequest{},
			&executeRequest{}, &playgroundRequest{}, &chatMessageRequest{}, &chatSessionCreateRequest{}, &approveRequest{},
		} {
			err := decodeBytes(body, dst)
			if err == nil {
				continue
			}
			var ae *Error
			if !errors.As(err, &ae) || (ae.Status != http.StatusBadRequest && ae.Status != http.StatusRequestEntityTooLarge &&
				ae.Status != http.StatusUnsupportedMediaType) || ae.Message == "" {
				t.Fatalf("decode %q into %T: %v", body, dst, err)
			}
		}
	})
}
