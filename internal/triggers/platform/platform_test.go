package platform

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// post builds an inbound call with the given headers.
func post(body string, headers ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/hooks/tok", strings.NewReader(body))
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	return r
}

// captured is one request a fake platform API received.
type captured struct {
	Method, Path, Auth, ContentType string
	Body                            map[string]any
}

// fakeAPI is an httptest server standing in for a platform API: it records each request and
// answers with the status and body answer returns.
type fakeAPI struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []captured
}

func newFakeAPI(t *testing.T, answer func(n int) (int, string)) *fakeAPI {
	t.Helper()
	f := &fakeAPI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("fake API got a non-JSON body %q", raw)
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, captured{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), body})
		n := len(f.reqs)
		f.mu.Unlock()
		status, resp := answer(n)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, resp)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPI) requests() []captured {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]captured(nil), f.reqs...)
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFor(t *testing.T) {
	t.Parallel()
	for typ, sync := range map[string]bool{"webhook": false, "slack": false, "telegram": false, "whatsapp": false, "teams": true} {
		p, ok := For(typ)
		if !ok || p == nil {
			t.Fatalf("For(%q) = %v, %v", typ, p, ok)
		}
		if p.Sync() != sync {
			t.Errorf("%s Sync() = %v, want %v", typ, p.Sync(), sync)
		}
	}
	for _, typ := range []string{"schedule", "", "Slack", "discord"} {
		if p, ok := For(typ); ok || p != nil {
			t.Errorf("For(%q) = %v, %v; want nil, false", typ, p, ok)
		}
	}
}

func TestFieldChecks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		typ, field, value string
		want              string // substring of the error; "" means valid
	}{
		{"webhook", "signing_secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", ""},
		{"webhook", "signing_secret", "whsec_not base64!", "whsec_"},
		{"webhook", "signing_secret", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "Standard Webhooks"},
		{"telegram", "secret_token", "abc_DEF-123", ""},
		{"telegram", "secret_token", "has space", "must be 1 to 256"},
		{"telegram", "secret_token", strings.Repeat("a", 257), "must be 1 to 256"},
		{"teams", "hmac_secret", "vqF0En+Z0ucuRTM/01o2GuhMH3hKKk/N2bOmlM31zaA=", ""},
		{"teams", "hmac_secret", "not-base64!", "base64 security token"},
	}
	for _, c := range cases {
		t.Run(c.typ+"/"+c.value, func(t *testing.T) {
			s, ok := Lookup(c.typ)
			if !ok {
				t.Fatalf("type %s not registered", c.typ)
			}
			f, ok := s.Field(c.field)
			if !ok || f.Check == nil {
				t.Fatalf("%s.%s has no check", c.typ, c.field)
			}
			err := f.Check(c.value)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("check(%q) = %v, want nil", c.value, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("check(%q) = %v, want error containing %q", c.value, err, c.want)
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	t.Run("every platform is registered with its fields", func(t *testing.T) {
		want := map[string][]string{
			"webhook":  {"signing_secret", "respond"},
			"slack":    {"signing_secret", "bot_credential_id", "bot_user_id"},
			"telegram": {"secret_token", "bot_credential_id"},
			"whatsapp": {"verify_token", "app_secret", "phone_number_id", "credential_id"},
			"teams":    {"hmac_secret"},
		}
		for typ, fields := range want {
			s, ok := Lookup(typ)
			if !ok {
				t.Fatalf("%s not registered", typ)
			}
			if got := s.FieldNames(); !slices.Equal(got, fields) {
				t.Errorf("%s fields = %v, want %v", typ, got, fields)
			}
		}
	})
	t.Run("a chat platform names its reply credential", func(t *testing.T) {
		for _, s := range Specs() {
			if !s.Chat || s.Platform.Sync() {
				continue
			}
			if f, ok := s.Field(s.ReplyCredential); !ok || f.Kind != KindCredential {
				t.Errorf("%s replies through the API but ReplyCredential %q is no credential field", s.Type, s.ReplyCredential)
			}
		}
	})
	t.Run("a second registration panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("registering slack twice did not panic")
			}
		}()
		Register(Spec{Type: TypeSlack})
	})
	t.Run("a field declared twice panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("a duplicate field did not panic")
			}
		}()
		Register(Spec{Type: "twice", Fields: []Field{{Name: "a"}, {Name: "a"}}})
	})
}

func TestCheckTimestamp(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		header string
		ok     bool
	}{
		{"1700000000", true},
		{"1699999700", true},  // exactly 5 min old
		{"1700000300", true},  // exactly 5 min ahead
		{"1699999699", false}, // stale
		{"1700000301", false}, // too far ahead
		{"", false},
		{"17e8", false},
		{"-1", false},
	} {
		err := checkTimestamp(c.header, now)
		if (err == nil) != c.ok {
			t.Errorf("checkTimestamp(%q) = %v, want ok=%v", c.header, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrVerify) {
			t.Errorf("checkTimestamp(%q) error %v does not wrap ErrVerify", c.header, err)
		}
	}
}

func TestSplitText(t *testing.T) {
	t.Parallel()
	if got := splitText("short", 10); len(got) != 1 || got[0] != "short" {
		t.Fatalf("splitText(short) = %q", got)
	}
	long := strings.Repeat("word ", 30) + "\n" + strings.Repeat("é", 25)
	parts := splitText(long, 40)
	if strings.Join(parts, "") != long {
		t.Fatal("splitText lost or changed text")
	}
	for _, p := range parts {
		if n := utf8.RuneCountInString(p); n > 40 || n == 0 {
			t.Errorf("part %q has %d runes", p, n)
		}
		if !utf8.ValidString(p) {
			t.Errorf("part %q cut inside a rune", p)
		}
	}
	// Words are not cut when a space is near.
	for _, p := range parts[:len(parts)-1] {
		if !strings.HasSuffix(p, " ") && !strings.HasSuffix(p, "\n") && !strings.HasSuffix(p, "é") {
			t.Errorf("part %q was cut inside a word", p)
		}
	}
	// A text without spaces is cut hard.
	hard := splitText(strings.Repeat("x", 95), 40)
	if len(hard) != 3 || len(hard[0]) != 40 || len(hard[2]) != 15 {
		t.Errorf("hard split = %d parts", len(hard))
	}
}

func TestPostJSONNonJSONAnswer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html>bad gateway</html>")
	}))
	defer srv.Close()
	ev := &Event{ReplyTo: map[string]string{"channel": "C1", "thread_ts": "1.2"}}
	_, err := Slack{}.Reply(t.Context(), srv.Client(), Credential{Token: "xoxb-1", BaseURL: srv.URL}, ev, "hi")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadGateway || ae.Platform != "slack" || !strings.Contains(ae.Message, "bad gateway") {
		t.Fatalf("err = %#v", err)
	}
}

// errorsContainNoSecret fails when err's text contains secret.
func errorsContainNoSecret(t *testing.T, err error, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if err != nil && strings.Contains(err.Error(), s) {
			t.Errorf("error %q leaks a secret", err)
		}
	}
}
