package llmtest

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAnswered: a request is Answered once its whole reply reached a client still connected;
// a reply cut (CutAfter) is not, nor one whose client left while the Fallback held it (the
// request's context tells the Fallback).
func TestAnswered(t *testing.T) {
	s := NewOpenAI()
	left := make(chan error, 1)
	s.Fallback = func(req Request) Reply {
		select {
		case <-req.Context().Done():
			left <- req.Context().Err()
		case <-time.After(10 * time.Second):
			left <- errors.New("the client's leaving was not noticed")
		}
		return Reply{Text: []string{"too late"}}
	}
	s.Push(Reply{Text: []string{"Hello"}}, Reply{Text: []string{"a", "b", "c"}, CutAfter: 1})
	post := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"Hi"}]}`))
		req.Header.Set("Authorization", "Bearer sk-test")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		_, err = io.ReadAll(resp.Body)
		return err
	}

	if err := post(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = post(context.Background()) // cut after its first chunk
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := post(ctx); err == nil {
		t.Fatal("the held request was answered before its client left")
	}
	if err := <-left; err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("held request's context: %v", err)
	}
	// A client that closes its connection as soon as it read the whole reply was answered.
	const quick = 20
	for range quick {
		s.Push(Reply{Text: []string{"Hi"}})
		if err := readToDone(s.URL); err != nil {
			t.Fatal(err)
		}
	}
	s.Close() // waits for the handlers to return
	rs := s.Requests()
	if len(rs) != 3+quick || !rs[0].Answered || rs[1].Answered || rs[2].Answered {
		t.Fatalf("answered: %v", answeredOf(rs))
	}
	for _, r := range rs[3:] {
		if !r.Answered {
			t.Fatalf("a reply read whole is not answered: %v", answeredOf(rs))
		}
	}
}

func answeredOf(rs []Request) []bool {
	out := make([]bool, len(rs))
	for i, r := range rs {
		out[i] = r.Answered
	}
	return out
}

// readToDone posts a streamed chat completion, reads it up to its end marker and closes the
// connection at once, before the server's handler returns, as a streaming client does.
func readToDone(url string) error {
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"Hi"}]}`))
	req.Header.Set("Authorization", "Bearer sk-test")
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if sc.Text() == "data: [DONE]" {
			return nil
		}
	}
	return errors.New("no end marker")
}
