package openaichat

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/agentplane/agentplane/internal/llm"
)

// maxErrorBody bounds how much of an error answer is read for its message.
const maxErrorBody = 64 << 10

// fail turns an SDK failure into the call's error: an HTTP error answer becomes
// llm.StatusError with the provider's own message, an error event inside the stream an
// *llm.Error too, and anything else (connection failures, a cut or malformed stream, an
// ended ctx) goes through llm.TransportError.
func (p *Provider) fail(ctx context.Context, err error, x *exchange) error {
	if ctx.Err() != nil {
		return llm.TransportError(ctx, p.ep, err)
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) && apiErr.Response != nil {
		return llm.StatusError(p.ep, apiErr.StatusCode, apiErr.Response.Header, answerMessage(apiErr.Message, apiErr.Response))
	}
	// The SDK returns a plain decoding error, not an *openai.Error, for an error answer
	// whose "error" is a string (Ollama's {"error": "…"}): the status is still the
	// provider's. (Bodies without "error" do decode, with an empty Message.)
	if res := x.res; res != nil && res.StatusCode >= 400 {
		return llm.StatusError(p.ep, res.StatusCode, res.Header, answerMessage("", res))
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return streamError(ctx, p.ep, se.Event.Data)
	}
	return llm.TransportError(ctx, p.ep, err)
}

// answerMessage is the message of an error answer: the one the SDK decoded, else the
// one found in the body (the SDK leaves the body it read in res.Body).
func answerMessage(decoded string, res *http.Response) string {
	if strings.TrimSpace(decoded) != "" || res.Body == nil {
		return decoded
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	return bodyMessage(body)
}

// bodyMessage finds the message in an error body of any of the shapes compatible
// servers use, falling back to the body's text.
func bodyMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return s
		case len(v.Detail) > 0:
			return string(v.Detail)
		}
	}
	const maxText = 512
	text := strings.TrimSpace(string(body))
	if len(text) > maxText {
		text = text[:maxText] + "…"
	}
	return text
}

// streamError is the *llm.Error of an error event sent inside a stream that had begun
// well ({"error": {"message", "code"}}). A numeric code (OpenRouter sends the HTTP
// status it would have answered) is kept as Status so that a 400 is not retried.
func streamError(ctx context.Context, ep llm.Endpoint, data []byte) error {
	var v struct {
		Error struct {
			Message string          `json:"message"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(data, &v)
	msg := v.Error.Message
	if msg == "" {
		msg = bodyMessage(data)
	}
	var status int
	if json.Unmarshal(v.Error.Code, &status) == nil && status >= 400 && status <= 599 {
		return llm.StatusError(ep, status, nil, msg)
	}
	return llm.TransportError(ctx, ep, errors.New("the stream reported an error: "+msg))
}
