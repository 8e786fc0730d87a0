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
}

// resultOf turns a CallToolResult into the model's Result.
func resultOf(res *mcp.CallToolResult) *Result {
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		parts = append(parts, contentText(c))
	}
	text := strings.Join(parts, "\n")
	if res.StructuredContent != nil {
		structured, err := json.Marshal(res.StructuredContent)
		if err == nil {
			text = withStructured(structured, parts, text)
		}
	}
	return &Result{Text: text, IsError: res.IsError}
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
