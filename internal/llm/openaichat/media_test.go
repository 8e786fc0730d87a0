package openaichat_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/llm/openaichat"
)

// OpenRouter's image models send each image as a data: URL in delta.images; the provider
// decodes it into a media event and Response.Media.
func TestDeltaImages(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	png := []byte("\x89PNG\r\n\x1a\nfake image bytes")
	srv.Push(llmtest.Reply{Text: []string{"A cat:"}, Images: []llmtest.Image{{MimeType: "image/png", Data: png}}})
	var rec llmtest.Recorder
	resp, err := provider(srv, "openrouter", testKey).Complete(context.Background(), ask("google/gemini-2.5-flash-image", "draw a cat"), rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "A cat:" || len(resp.Media) != 1 || resp.Media[0].MimeType != "image/png" || !bytes.Equal(resp.Media[0].Data, png) {
		t.Fatalf("response = %+v", resp)
	}
	n := 0
	for _, ev := range rec.Events {
		if ev.Kind == llm.EventMedia {
			n++
			if !bytes.Equal(ev.Media.Data, png) {
				t.Errorf("media event %+v", ev.Media)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d media events", n)
	}
}

// A reply without images has no media.
func TestNoImagesNoMedia(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	srv.Push(llmtest.Reply{Text: []string{"plain"}})
	resp, err := openaichat.New(llm.Endpoint{Provider: "openai", BaseURL: srv.URL + "/v1", APIKey: testKey}).
		Complete(context.Background(), ask("gpt-4o", "hi"), func(llm.Event) error { return nil })
	if err != nil || resp.Media != nil {
		t.Fatalf("%+v %v", resp, err)
	}
}
