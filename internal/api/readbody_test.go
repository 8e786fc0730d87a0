package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// TestDecodeAfterCheckBody: the handler's decode takes the bytes checkBody read, as if it read
// the body itself; a body read in part since, or too large to keep, is read as it is.
func TestDecodeAfterCheckBody(t *testing.T) {
	t.Parallel()
	c := jsonschema.NewCompiler()
	if err := c.AddResource("body.json", map[string]any{"type": "object"}); err != nil {
		t.Fatal(err)
	}
	sch := c.MustCompile("body.json")
	checked := func(t *testing.T, body string) (*http.Request, *closeCounter) {
		t.Helper()
		orig := &closeCounter{Reader: strings.NewReader(body)}
		r := httptest.NewRequest("POST", "/", nil)
		r.Body = orig
		if err := checkBody(r, sch); err != nil {
			t.Fatalf("checkBody: %v", err)
		}
		return r, orig
	}

	t.Run("Whole", func(t *testing.T) {
		t.Parallel()
		r, orig := checked(t, `{"input":{"message":"hi"},"async":true}`)
		var req executeRequest
		if err := decode(httptest.NewRecorder(), r, &req); err != nil {
			t.Fatal(err)
		}
		if req.Input["message"] != "hi" || !req.Async {
			t.Fatalf("decoded %+v", req)
		}
		// Read once, like any body: a second decode finds it empty.
		if rest, _ := io.ReadAll(r.Body); len(rest) != 0 {
			t.Fatalf("body still holds %q after decode", rest)
		}
		if err := r.Body.Close(); err != nil || orig.closed != 1 {
			t.Fatalf("Close: %v, original closed %d times", err, orig.closed)
		}
	})

	t.Run("ReadInPart", func(t *testing.T) {
		t.Parallel()
		r, _ := checked(t, `{"input":{"message":"hi"}}`)
		if _, err := io.ReadFull(r.Body, make([]byte, 3)); err != nil {
			t.Fatal(err)
		}
		var req executeRequest
		err := decode(httptest.NewRecorder(), r, &req)
		if ae := knownError(err); ae == nil || ae.Status != http.StatusBadRequest {
			t.Fatalf("decoding the rest of a body = %v, want a 400", err)
		}
	})

	t.Run("TooLarge", func(t *testing.T) {
		t.Parallel()
		r, _ := checked(t, `{"input":{"message":"`+strings.Repeat("a", maxBodyBytes)+`"}}`)
		var req executeRequest
		err := decode(httptest.NewRecorder(), r, &req)
		if ae := knownError(err); ae == nil || ae.Status != http.StatusRequestEntityTooLarge {
			t.Fatalf("decoding an oversized body = %v, want a 413", err)
		}
	})
}
