package openaichat

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestEndWatchFindsTheMarkerLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body string
		want bool
	}{
		{"data: {\"choices\":[]}\n\ndata: [DONE]\n\n", true},
		{"data: [DONE]\n\n", true},
		{"data:[DONE]\r\n\r\n", true},
		{"data: {}\n\ndata: [DONE]", true}, // the last line without its newline
		{"data: {\"content\":\"data: [DONE]\"}\n\n", false},
		{"data: {}\n\n", false},
		{": data: [DONE]\n\n", false},
	}
	for _, tc := range cases {
		// One byte per read: the marker is always split across reads.
		w := &endWatch{ReadCloser: io.NopCloser(iotest.OneByteReader(strings.NewReader(tc.body)))}
		if _, err := io.ReadAll(w); err != nil {
			t.Fatal(err)
		}
		if w.seen != tc.want {
			t.Errorf("%q: seen = %v, want %v", tc.body, w.seen, tc.want)
		}
	}
}
