package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

// Error is an API failure with a stable code and a message safe to show to the caller.
type Error struct {
	Status  int
	Code    string
	Message string
	Header  http.Header // extra response headers, e.g. Retry-After
	// ExecutionID names the execution concerned; only the OpenAI-shaped error carries it.
	ExecutionID string
}

func (e *Error) Error() string { return e.Message }

var statusCodes = map[int]string{
	http.StatusBadRequest:                  "bad_request",
	http.StatusUnauthorized:                "unauthorized",
	http.StatusPaymentRequired:             "plan_limit_exceeded",
	http.StatusForbidden:                   "forbidden",
	http.StatusNotFound:                    "not_found",
	http.StatusMethodNotAllowed:            "method_not_allowed",
	http.StatusConflict:                    "conflict",
	http.StatusRequestEntityTooLarge:       "request_too_large",
	http.StatusUnsupportedMediaType:        "unsupported_media_type",
	http.StatusUnprocessableEntity:         "validation_error",
	http.StatusTooManyRequests:             "rate_limited",
	http.StatusRequestHeaderFieldsTooLarge: "request_headers_too_large",
	http.StatusInternalServerError:         "internal_error",
	http.StatusNotImplemented:              "not_implemented",
	http.StatusServiceUnavailable:          "unavailable",
	http.StatusBadGateway:                  "execution_failed",
}

func errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Code: statusCodes[status], Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *Error {
	return errorf(http.StatusBadRequest, format, args...)
}

func conflict(format string, args ...any) *Error { return errorf(http.StatusConflict, format, args...) }

func notFound(resource, id string) *Error {
	return errorf(http.StatusNotFound, "%s %s not found", resource, id)
}

// errorBody is the error envelope.
type errorBody struct {
	Data    *struct{} `json:"data"`
	Error   string    `json:"error"`
	Message string    `json:"message"`
}

// toAPIError maps any error to an *Error; errors it does not know become 500 with the
// request id, and their text goes only to the log.
func (s *Server) toAPIError(r *http.Request, err error) *Error {
	if ae := knownError(err); ae != nil {
		return ae
	}
	if errors.Is(err, r.Context().Err()) && r.Context().Err() != nil {
		return errorf(http.StatusServiceUnavailable, "the request was cancelled before it finished")
	}
	rid := requestID(r.Context())
	s.log.ErrorContext(r.Context(), "request failed", slog.String("request_id", rid),
		slog.String("method", r.Method), slog.String("path", logPath(r)), slog.Any("error", err))
	return errorf(http.StatusInternalServerError, "internal error; quote request id %s when reporting it", rid)
}

// knownError maps the errors whose meaning the API knows (its own, a field error, the store's
// and the runtime's typed errors) to an *Error; nil for any other.
func knownError(err error) *Error {
	var ae *Error
	var nf *store.NotFoundError
	var ce *store.ConflictError
	var re *store.ReferenceError
	var fe *domain.FieldError
	var te *store.TransitionError
	var me *runtime.ModelError
	var qe *store.QuotaError
	switch {
	case errors.As(err, &qe):
		return assetError(err).(*Error)
	case errors.As(err, &me):
		return errorf(http.StatusUnprocessableEntity, "%s", me.Message)
	case errors.As(err, &te):
		return errorf(http.StatusConflict, "%s", te.Error())
	case errors.As(err, &fe):
		return errorf(http.StatusUnprocessableEntity, "%s", fe.Error())
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &nf):
		return errorf(http.StatusNotFound, "%s", nf.Error())
	case errors.As(err, &ce):
		return errorf(http.StatusConflict, "%s", ce.Message)
	case errors.As(err, &re):
		return errorf(http.StatusUnprocessableEntity, "%s", re.Error())
	}
	return nil
}

// writeError sends the error envelope; under /api/v1/openai/ OpenAI's error shape instead.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if strings.HasPrefix(r.URL.Path, openAIBase+"/") {
		s.writeOpenAIError(w, r, err)
		return
	}
	ae := s.toAPIError(r, err)
	for k, vs := range ae.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if ae.Status == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(1))
	}
	writeJSON(w, ae.Status, errorBody{Error: ae.Code, Message: ae.Message})
}
