package bench

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/cli"
	"github.com/agentplane/agentplane/internal/seed"
)

func init() {
	_ = emulatorServerTmp
}

func emulatorServerTmp(b *testing.B) *httptest.Server {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	emu, _ := cli.NewEmulator(context.Background(), log, cli.EmulatorConfig{})
	_ = seed.LoadCatalog(context.Background(), emu.Store)
	ts := httptest.NewServer(emu.Handler)
	c := client.New(ts.URL)
	for i := 0; i < 6; i++ {
		_, _ = c.AgentCreate(context.Background(), client.AgentCreate{Name: "a", Type: "simple", Config: &client.AgentConfig{Model: "gpt-4o", SystemPrompt: "You are a helpful assistant that answers questions about shipping and returns."}})
	}
	return ts
}
