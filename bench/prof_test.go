package bench

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/cli"
)

func BenchmarkExecEmuOnly(b *testing.B) {
	ctx := context.Background()
	emu, _ := cli.NewEmulator(ctx, quietLog(), cli.EmulatorConfig{Seed: true})
	defer emu.Close()
	ts := httptest.NewServer(emu.Handler)
	defer ts.Close()
	url := ts.URL + "/api/v1/agents/" + zeroLatencyAgent(b, ts.URL) + "/execute"
	b.ResetTimer()
	r := post(b, url, []byte(`{"input":{"message":"How long does shipping to Canada take?"}}`), 32, 4*time.Second, 200)
	b.ReportMetric(r, "exec/s")
}
