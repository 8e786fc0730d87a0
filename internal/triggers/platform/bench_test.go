package platform

import (
	"testing"
	"time"
)

// BenchmarkVerifyParse measures the per-call cost of checking and parsing an inbound call, the
// work done before a hook answers (Slack wants its answer within 3 s, Teams within 5 s).
func BenchmarkVerifyParse(b *testing.B) {
	slackBody := []byte(mustJSON(b, slackCallback(map[string]any{"type": "app_mention", "channel": "C1", "user": "U1", "text": "<@UBOT> ping", "ts": "1.0"})))
	slackNow := time.Unix(1531420618, 0)
	cases := []struct {
		name string
		p    Platform
		body []byte
		cfg  Config
		hdr  []string
		now  time.Time
	}{
		{"slack", Slack{}, slackBody, Config{"signing_secret": "sec"}, []string{"X-Slack-Request-Timestamp", "1531420618", "X-Slack-Signature", slackSign("sec", "1531420618", string(slackBody))}, slackNow},
		{"webhook", Webhook{}, []byte(swBody), Config{"signing_secret": swSecret}, []string{"webhook-id", swID, "webhook-timestamp", swTS, "webhook-signature", swSig}, swNow},
		{"whatsapp", WhatsApp{}, []byte(waBody), waCfg, []string{"X-Hub-Signature-256", waSig}, time.Now()},
		{"teams", Teams{}, []byte(teamsBody), Config{"hmac_secret": teamsSecret}, []string{"Authorization", teamsAuth}, time.Now()},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			r := post(string(c.body), c.hdr...)
			b.ReportAllocs()
			for b.Loop() {
				if err := c.p.Verify(r, c.body, c.cfg, c.now); err != nil {
					b.Fatal(err)
				}
				if _, err := c.p.Parse(r, c.body, c.cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
