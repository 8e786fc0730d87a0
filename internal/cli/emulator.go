package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/internal/api"
	"github.com/agentplane/agentplane/internal/assets"
	"github.com/agentplane/agentplane/internal/blob"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/eval"
	"github.com/agentplane/agentplane/internal/experiment"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/metrics"
	"github.com/agentplane/agentplane/internal/retention"
	"github.com/agentplane/agentplane/internal/rollup"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/seed"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/triggers"
	"github.com/agentplane/agentplane/internal/webhook"
)

// EmulatorWorkspaceID is the one namespace every emulator request acts in.
const EmulatorWorkspaceID = "2o0yqLDGdJdFRBTuhdfPNEZdAvH"

func emulatorCmd(env Env) *cobra.Command {
	var (
		host, fixtures, level, cors string
		publicURL                   string
		port                        int
		withSeed                    bool
		retentionOpts               RetentionOptions
	)
	cmd := &cobra.Command{
		Use:   "emulator",
		Short: "Run the local emulator: the same API in memory, seeded, with no auth",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			vars := map[string]string{
				"host": "HOST", "port": "PORT", "seed": "SEED", "fixtures": "FIXTURES", "log-level": "LOG_LEVEL", "cors-origins": "CORS_ORIGINS",
				"public-url": "PUBLIC_URL",
			}
			for k, v := range retentionEnv {
				vars[k] = v
			}
			if err := bindEnv(cmd.Flags(), env, vars); err != nil {
				return err
			}
			if err := retentionOpts.Validate(); err != nil {
				return err
			}
			lvl, err := parseLevel(level)
			if err != nil {
				return err
			}
			if err := checkPort(port); err != nil {
				return err
			}
			if err := checkPublicURL(publicURL); err != nil {
				return err
			}
			if fixtures != "" {
				if info, err := os.Stat(fixtures); err != nil || !info.IsDir() {
					return usageError{fmt.Errorf("invalid value %q for --fixtures: not a readable directory", fixtures)}
				}
			}
			return runEmulator(cmd.Context(), cmd.ErrOrStderr(), emulatorOptions{
				host: host, port: port, seed: withSeed, fixtures: fixtures, level: lvl, cors: splitList(cors), publicURL: publicURL,
				retention: retentionOpts,
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&host, "host", "127.0.0.1", "interface to listen on (HOST); 0.0.0.0 for all")
	f.IntVar(&port, "port", 8080, "port to listen on (PORT); 0 picks a free one")
	f.BoolVar(&withSeed, "seed", true, "load the built-in seed data (SEED)")
	f.StringVar(&fixtures, "fixtures", "", "directory of fixture JSON files to load (FIXTURES)")
	f.StringVar(&level, "log-level", "info", "debug, info, warn or error (LOG_LEVEL)")
	f.StringVar(&cors, "cors-origins", "*", "comma-separated origins allowed by CORS, or * (CORS_ORIGINS)")
	f.StringVar(&publicURL, "public-url", "", publicURLUsage)
	retentionOpts.flags(cmd)
	return cmd
}

type emulatorOptions struct {
	host      string
	port      int
	seed      bool
	fixtures  string
	level     slogLevel
	cors      []string
	publicURL string
	retention RetentionOptions
}

// EmulatorGCPercent is the emulator's GC target when GOGC is not set: it favours throughput
// over memory (its heap is small), which halves collection work under load.
const EmulatorGCPercent = 200

func runEmulator(ctx context.Context, stderr io.Writer, o emulatorOptions) error {
	start := time.Now()
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(EmulatorGCPercent)
	}
	log := newLogger(stderr, o.level)
	ln, err := listen(o.host, o.port)
	if err != nil {
		return fmt.Errorf("emulator: %w", err)
	}
	emu, err := NewEmulator(ctx, log, EmulatorConfig{Seed: o.seed, FixturesDir: o.fixtures, CORSOrigins: o.cors, PublicURL: o.publicURL,
		Retention: o.retention})
	if err != nil {
		ln.Close()
		return err
	}
	defer emu.Close()
	// Loading the seed leaves garbage behind: hand it back now so an idle emulator stays small.
	debug.FreeOSMemory()
	log.Info("emulator ready: data is in memory and lost on exit; any API key is accepted", "address", ln.Addr().String(),
		"seed", o.seed, "fixtures", o.fixtures, "startup", time.Since(start).Round(time.Millisecond).String())
	if err := serveHTTP(ctx, log, stderr, ln, emu.Handler, "emulator", emu.API.CloseStreams, 5*time.Second, ""); err != nil {
		return fmt.Errorf("emulator: %w", err)
	}
	return nil
}

// EmulatorConfig is what NewEmulator needs besides a logger.
type EmulatorConfig struct {
	Seed        bool
	FixturesDir string
	CORSOrigins []string
	Workers     int // async worker pool size; 0 for the default
	// PublicURL is the base URL /openapi.json lists as its server (--public-url); empty
	// uses each request's scheme and host.
	PublicURL string
	// Retention is how long the emulator's workspace keeps its history, and how often it is
	// purged (--retention-days, --max-retention-days, --retention-interval).
	Retention RetentionOptions
}

// Emulator is a ready emulator: its HTTP handler over a seeded in-memory store, and the
// engine running its executions.
type Emulator struct {
	Handler http.Handler
	Store   *store.Store
	API     *api.Server
	Engine  *runtime.Engine
	sources *seed.Sample
	// schedules fires the ticks of schedule triggers.
	schedules *triggers.Scheduler
	// experiments drives the experiments.
	experiments *experiment.Runner
	hooks       *webhook.Deliverer
	judges      *eval.Online
	purger      *retention.Purger
	packer      *rollup.Packer
}

// Close stops the engine (runs still going after a grace period are failed) and releases
// the in-memory databases.
func (e *Emulator) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.API.CloseStreams()
	e.schedules.Stop()
	e.experiments.Stop()
	e.purger.Stop()
	e.packer.Stop()
	e.judges.Stop(ctx)
	e.Engine.Stop(ctx)
	e.API.WaitReplies(ctx)
	e.hooks.Stop(ctx)
	return errors.Join(e.sources.Close(), e.Store.Close())
}

// NewEmulator builds the emulator: an in-memory store loaded with seed and fixtures, and the
// API in emulator mode. Benchmarks and tests use it to run the emulator in-process.
func NewEmulator(ctx context.Context, log *slog.Logger, c EmulatorConfig) (*Emulator, error) {
	st, err := store.Open(ctx, "memory")
	if err != nil {
		return nil, err
	}
	box := secretbox.NewRandom()
	// Asset blobs live in memory with the rest of the emulator's data, and go with a reset.
	blobs := blob.NewMemory()
	load := func(ctx context.Context) error {
		defer blobs.Clear()
		return st.InTx(ctx, func(tx *store.Store) error {
			if err := tx.Truncate(ctx); err != nil {
				return err
			}
			if _, err := tx.WorkspaceCreate(ctx, &domain.Workspace{ID: EmulatorWorkspaceID, Name: "Emulator", Slug: "default", RetentionDays: c.Retention.Days}); err != nil {
				return err
			}
			return seed.Load(ctx, tx, seed.Options{WorkspaceID: EmulatorWorkspaceID, Seed: c.Seed, FixturesDir: c.FixturesDir, Secrets: box})
		})
	}
	if err := load(ctx); err != nil {
		st.Close()
		return nil, err
	}
	// Tool calls are simulated too: the emulator reaches no MCP server, so it may hold stdio
	// ones (as the seed does) without ever running them.
	m := metrics.New()
	sources := seed.NewSample(st)
	as := assets.New(st, blobs, 0)
	eng := runtime.New(runtime.Config{Store: runtime.SQLStore{Store: st}, Router: runtime.SimulatedRouter{Model: simulated.New()}, Tools: runtime.SimulatedTools{},
		Logger: log, Workers: c.Workers, Metrics: m, DataSources: sources, Assets: as})
	runner := experiment.NewRunner(experiment.Config{Store: st, Engine: eng, Logger: log})
	srv, err := api.New(api.Config{
		Store: st, Logger: log, Secrets: box, Emulator: true, WorkspaceID: EmulatorWorkspaceID, DataSources: sources,
		CORSOrigins: c.CORSOrigins, Reset: load, Version: Version, Engine: eng, PublicURL: c.PublicURL, AllowStdioMCP: true, Metrics: m,
		Retention: c.Retention.Retention, Experiments: runner,
	})
	hooks := webhook.New(webhook.Config{Store: st, Secrets: box, Logger: log, Node: eng.Node(),
		TriggerWebhook: webhook.StoreTriggerWebhook(box, log)})
	// Online evaluation: the simulated model answers judges deterministically.
	judges := eval.NewOnline(eval.OnlineConfig{Store: st, Judge: eng.Judge, Logger: log, Node: eng.Node()})
	if err == nil {
		err = eng.Start(ctx)
	}
	if err != nil {
		hooks.Stop(ctx)
		judges.Stop(ctx)
		sources.Close()
		st.Close()
		return nil, err
	}
	// Schedule triggers fire in the emulator too; chat platform replies are not sent
	// (api.Config.TriggerReplies is nil).
	schedules := triggers.NewScheduler(triggers.SchedulerConfig{Store: st, Engine: eng, Logger: log})
	schedules.Start(ctx)
	runner.Start(ctx)
	hooks.Start(ctx)
	judges.Start(ctx)
	purger := c.Retention.purger(st, eng, as, log)
	purger.Start(ctx)
	packer := rollup.New(rollup.Config{Store: st, Leader: eng.Leading, Logger: log})
	packer.Start(ctx)
	return &Emulator{Handler: srv.Handler(), Store: st, API: srv, Engine: eng, sources: sources, schedules: schedules, hooks: hooks, judges: judges,
		experiments: runner, purger: purger, packer: packer}, nil
}
