package platform

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary bodies to every platform's Verify and Parse: whatever comes in, they
// answer with an error or an Event, never a panic, and an Event either responds or names a run.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{swBody, slackDocBody, waBody, teamsBody, `{"update_id":1,"message":{"text":"x","from":{"id":1},"chat":{"id":1}}}`,
		`{"type":"event_callback","event":{"type":"message","user":"U","channel":"C","ts":"1"}}`, `{"entry":[{"changes":[{"value":{"messages":[{}]}}]}]}`, `null`, ``} {
		f.Add(seed)
	}
	cfgs := map[string]Config{
		"webhook": {}, "slack": {"signing_secret": "s"}, "telegram": {"secret_token": "s"},
		"whatsapp": waCfg, "teams": {"hmac_secret": teamsSecret},
	}
	f.Fuzz(func(t *testing.T, body string) {
		for typ, cfg := range cfgs {
			p, _ := For(typ)
			for _, method := range []string{http.MethodPost, http.MethodGet} {
				r := httptest.NewRequest(method, "/api/v1/hooks/t?hub.mode=subscribe&hub.challenge=1&hub.verify_token=meatyhamhock", strings.NewReader(body))
				_ = p.Verify(r, []byte(body), cfg, time.Now())
				ev, err := p.Parse(r, []byte(body), cfg)
				if err == nil && ev == nil {
					t.Fatalf("%s %s: nil event without error", typ, method)
				}
				if err == nil && ev.Respond == nil && typ != "webhook" && ev.ConversationKey == "" {
					t.Fatalf("%s %s: a run without a conversation: %+v", typ, method, ev)
				}
			}
		}
	})
}
