package anthropicmsg

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/agentplane/agentplane/internal/llm"
)

// errMalformed marks a stream whose events contradict each other (a delta for a block that
// never started): a broken stream, reported like a cut connection.
var errMalformed = errors.New("malformed stream")

// eventStatus gives an error event that arrives inside a 200 stream the HTTP status the
// same error has as an answer, so that llm.Call retries overloaded, rate-limited and
// server errors exactly as it would the HTTP answer.
var eventStatus = map[anthropic.ErrorType]int{
	anthropic.ErrorTypeInvalidRequestError: http.StatusBadRequest,
	anthropic.ErrorTypeAuthenticationError: http.StatusUnauthorized,
	anthropic.ErrorTypeBillingError:        http.StatusPaymentRequired,
	anthropic.ErrorTypePermissionError:     http.StatusForbidden,
	anthropic.ErrorTypeNotFoundError:       http.StatusNotFound,
	"request_too_large":                    http.StatusRequestEntityTooLarge,
	anthropic.ErrorTypeRateLimitError:      http.StatusTooManyRequests,
	anthropic.ErrorTypeAPIError:            http.StatusInternalServerError,
	anthropic.ErrorTypeTimeoutError:        http.StatusGatewayTimeout,
	anthropic.ErrorTypeOverloadedError:     529,
}

// maxRawMessage bounds how much of an error body that is not Anthropic's JSON (a proxy's
// HTML page, say) becomes the message.
const maxRawMessage = 512

// callError turns what the SDK returned into the call's error: an *anthropic.Error (an
// HTTP error answer, or an error event mid-stream) becomes a status *llm.Error with the
// provider's own message, anything else a transport *llm.Error, and an ended ctx its error.
func (p *Provider) callError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var aerr *anthropic.Error
	if !errors.As(err, &aerr) {
		return llm.TransportError(ctx, p.ep, err)
	}
	var header http.Header
	if aerr.Response != nil {
		header = aerr.Response.Header
	}
	status := aerr.StatusCode
	typ, msg := errorBody(aerr.RawJSON())
	if status < http.StatusBadRequest {
		// The SDK gives an error event the stream's own status (200).
		var ok bool
		if status, ok = eventStatus[typ]; !ok {
			status = http.StatusInternalServerError
		}
		header = nil
	}
	return llm.StatusError(p.ep, status, header, msg)
}

// errorBody reads Anthropic's {"type":"error","error":{"type","message"}}; a body that is
// not in that shape is its own message (shortened).
func errorBody(raw string) (anthropic.ErrorType, string) {
	var body struct {
		Error struct {
			Type    anthropic.ErrorType `json:"type"`
			Message string              `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) == nil && body.Error.Message != "" {
		return body.Error.Type, body.Error.Message
	}
	raw = strings.TrimSpace(raw)
	if len(raw) > maxRawMessage {
		raw = strings.ToValidUTF8(raw[:maxRawMessage], "") + "…"
	}
	return body.Error.Type, raw
}
