package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Result is what a tool call returned, as the model reads it.
type Result struct {
	// Text is the result for the model: the text of the content items (an image, audio or
	// binary resource is a placeholder naming its type and size), or the structured content
	// as JSON (with the text beside it when the text says more than the JSON).
	Text string
	// IsError reports that the tool ran and failed; Text is its message.
	IsError bool
	// Media are the binary content items (images, audio, embedded resources with a blob),
	// in order; Text holds a placeholder for each (see TextWith).
	Media []Media

	parts      []string // the text of each content item
	mediaAt    []int    // the index in parts of each Media
	structured []byte   // the structured content as JSON, nil without
}

// Media is one binary content item of a tool result.
type Media struct {
	Kind     string // "image", "audio" or "resource"
	MimeType string
	Data     []byte
	Name     string // a resource's URI, "" for images and audio
}

// TextWith is Text with the placeholder of each Media replaced by notes[i] (a note that the
// item was stored, say); a missing or empty note keeps the placeholder.
func (r *Result) TextWith(notes []string) string {
	if len(r.mediaAt) == 0 {
		return r.Text
	}
	parts := append([]string(nil), r.parts...)
	for i, at := range r.mediaAt {
		if i < len(notes) && notes[i] != "" {
			parts[at] = notes[i]
		}
	}
	return render(parts, r.structured)
}

// resultOf turns a CallToolResult into the model's Result.
func resultOf(res *mcp.CallToolResult) *Result {
	out := &Result{IsError: res.IsError, parts: make([]string, 0, len(res.Content))}
	for _, c := range res.Content {
		if m, ok := mediaOf(c); ok {
			out.mediaAt = append(out.mediaAt, len(out.parts))
			out.Media = append(out.Media, m)
		}
		out.parts = append(out.parts, contentText(c))
	}
	if res.StructuredContent != nil {
		if structured, err := json.Marshal(res.StructuredContent); err == nil {
			out.structured = structured
		}
	}
	out.Text = render(out.parts, out.structured)
	return out
}

// render joins the parts' text, with the structured content when there is some.
func render(parts []string, structured []byte) string {
	text := strings.Join(parts, "\n")
	if structured != nil {
		text = withStructured(structured, parts, text)
	}
	return text
}

// mediaOf returns the binary payload of a content item, if it has one.
func mediaOf(c mcp.Content) (Media, bool) {
	switch c := c.(type) {
	case *mcp.ImageContent:
		return Media{Kind: "image", MimeType: c.MIMEType, Data: c.Data}, len(c.Data) > 0
	case *mcp.AudioContent:
		return Media{Kind: "audio", MimeType: c.MIMEType, Data: c.Data}, len(c.Data) > 0
	case *mcp.EmbeddedResource:
		if r := c.Resource; r != nil && r.Text == "" && len(r.Blob) > 0 {
			return Media{Kind: "resource", MimeType: r.MIMEType, Data: r.Blob, Name: r.URI}, true
		}
	}
	return Media{}, false
}

// withStructured is the text of a result with structured content: the JSON alone when the
// text content is empty or the same JSON (servers are asked to send both), else both.
func withStructured(structured []byte, parts []string, text string) string {
	if len(parts) == 0 || len(parts) == 1 && sameJSON(structured, []byte(parts[0])) {
		return string(structured)
	}
	both, _ := json.Marshal(struct {
		Structured json.RawMessage `json:"structured_content"`
		Content    string          `json:"content"`
	}{structured, text})
	return string(both)
}

// sameJSON reports whether a and b are the same JSON value up to white space.
func sameJSON(a, b []byte) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// contentText is one content item as text. Images and audio are not passed to the model
// (yet): a placeholder says what there was.
func contentText(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.ResourceLink:
		return fmt.Sprintf("[resource %s %s]", c.URI, c.Name)
	case *mcp.EmbeddedResource:
		if r := c.Resource; r != nil {
			if r.Text != "" || len(r.Blob) == 0 {
				return r.Text
			}
			return fmt.Sprintf("[resource %s %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob))
		}
	}
	raw, _ := c.MarshalJSON()
	return string(raw)
}
