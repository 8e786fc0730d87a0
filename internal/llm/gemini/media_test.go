package gemini_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

// An image model's reply carries its images as inlineData parts beside the text: each is a
// media event and ends up in Response.Media, bytes and media type intact.
func TestInlineDataImages(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	png := []byte("\x89PNG\r\n\x1a\nfake image")
	jpg := []byte{0xff, 0xd8, 0xff, 0xe0, 0, 1, 2}
	srv.Push(llmtest.Reply{Text: []string{"Here is your cat."}, Images: []llmtest.Image{{MimeType: "image/png", Data: png}, {MimeType: "image/jpeg", Data: jpg}}})
	var rec llmtest.Recorder
	resp, err := p.Complete(context.Background(), ask("draw a cat"), rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Here is your cat." || resp.StopReason != llm.StopEnd {
		t.Errorf("response = %+v", resp)
	}
	if len(resp.Media) != 2 || resp.Media[0].MimeType != "image/png" || !bytes.Equal(resp.Media[0].Data, png) ||
		resp.Media[1].MimeType != "image/jpeg" || !bytes.Equal(resp.Media[1].Data, jpg) {
		t.Fatalf("media = %+v", resp.Media)
	}
	var media []*llm.Media
	for _, ev := range rec.Events {
		if ev.Kind == llm.EventMedia {
			media = append(media, ev.Media)
		}
	}
	if len(media) != 2 || !bytes.Equal(media[0].Data, png) || media[1].MimeType != "image/jpeg" {
		t.Fatalf("media events = %+v", media)
	}
	if got := rec.Texts(llm.EventContent); len(got) != 1 {
		t.Errorf("content events = %q", got)
	}
}
