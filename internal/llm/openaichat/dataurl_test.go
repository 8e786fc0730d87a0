package openaichat

import (
	"bytes"
	"testing"
)

func TestParseDataURL(t *testing.T) {
	for _, c := range []struct {
		in   string
		ok   bool
		mime string
		data []byte
	}{
		{"data:image/png;base64,iVBORw==", true, "image/png", []byte{0x89, 0x50, 0x4e, 0x47}},
		{"data:image/webp;base64,iVBORw", true, "image/webp", []byte{0x89, 0x50, 0x4e, 0x47}}, // unpadded
		{"data:;base64,AAE=", true, "application/octet-stream", []byte{0, 1}},
		{"https://example.com/cat.png", false, "", nil}, // a remote URL is never fetched
		{"data:image/png,rawtext", false, "", nil},      // not base64
		{"data:image/png;base64,!!!", false, "", nil},
		{"data:image/png;base64", false, "", nil},
	} {
		m, ok := parseDataURL(c.in)
		if ok != c.ok || (ok && (m.MimeType != c.mime || !bytes.Equal(m.Data, c.data))) {
			t.Errorf("parseDataURL(%q) = %+v %v", c.in, m, ok)
		}
	}
}
