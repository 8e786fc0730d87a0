package domain

import (
	"mime"
	"strings"
	"unicode"
)

// AssetUploadRequest is a file uploaded as base64 JSON.
type AssetUploadRequest struct {
	MimeType    string  `json:"mime_type" minLength:"1" pattern:"\\S" maxLength:"255" doc:"The media type of the content, e.g. image/png; it decides the asset's type (image/*, audio/*, else file)."`
	Data        string  `json:"data" minLength:"1" doc:"The content, base64 (standard alphabet, padded). The whole request is at most 1 MiB, so about 750 KiB of content."`
	Name        string  `json:"name,omitempty" maxLength:"255" doc:"A file name to serve it under."`
	ExecutionID *string `json:"execution_id,omitempty" doc:"An execution of the workspace to link the asset to."`
}

// Validate holds an upload's rules: a media type that parses (type/subtype) and a file name
// without control characters or slashes. Data is checked as it is decoded.
func (r *AssetUploadRequest) Validate() error {
	if err := NotBlank("mime_type", r.MimeType); err != nil {
		return err
	}
	if t, _, err := mime.ParseMediaType(r.MimeType); err != nil || !strings.Contains(t, "/") {
		return Invalid("mime_type", "must be a media type such as image/png, got %q", r.MimeType)
	}
	if strings.ContainsFunc(r.Name, func(c rune) bool { return unicode.IsControl(c) || c == '/' || c == '\\' }) {
		return Invalid("name", "must not contain control characters or slashes")
	}
	return nil
}
