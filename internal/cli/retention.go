package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/internal/api"
	"github.com/agentplane/agentplane/internal/assets"
	"github.com/agentplane/agentplane/internal/retention"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

// RetentionOptions are how long workspaces keep their history (serve and emulator): the
// retention_days of new workspaces, the ceiling of every workspace's, and how often the
// elected leader deletes what has expired.
type RetentionOptions struct {
	// Days (--retention-days) and MaxDays (--max-retention-days); see api.Retention.
	api.Retention
	// Interval is the time between two purges of the leader (--retention-interval).
	Interval time.Duration
	// now is the purge's clock (nil: time.Now); tests move it.
	now func() time.Time
}

// retentionEnv are the environment variables of the retention flags.
var retentionEnv = map[string]string{"retention-days": "RETENTION_DAYS", "max-retention-days": "MAX_RETENTION_DAYS", "retention-interval": "RETENTION_INTERVAL"}

func (o *RetentionOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVar(&o.Days, "retention-days", 0, "days new workspaces keep executions and ingested traces (PATCH /workspaces/{id} changes a workspace's); 0 keeps them forever, or the ceiling when --max-retention-days is set (RETENTION_DAYS)")
	f.IntVar(&o.MaxDays, "max-retention-days", 0, "the most days any workspace keeps executions and ingested traces; a workspace keeping them longer, or forever, has them deleted at this age; 0 is no ceiling (MAX_RETENTION_DAYS)")
	f.DurationVar(&o.Interval, "retention-interval", retention.DefaultInterval, "how often the elected leader deletes expired history and the data of deleted workspaces (RETENTION_INTERVAL)")
}

// Validate rejects negative or inconsistent values, naming the flag, and gives new workspaces
// the ceiling when it is set and --retention-days is not.
func (o *RetentionOptions) Validate() error {
	for _, c := range []struct {
		name string
		v    int
	}{{"--retention-days", o.Days}, {"--max-retention-days", o.MaxDays}} {
		if err := (api.Retention{}).Check(c.v); err != nil {
			return usageError{fmt.Errorf("invalid value %d for %s: must be 0 to 36500 days", c.v, c.name)}
		}
	}
	if o.MaxDays > 0 && o.Days == 0 {
		o.Days = o.MaxDays
	}
	if err := o.Retention.Check(o.Days); err != nil {
		return usageError{fmt.Errorf("invalid value %d for --retention-days: over --max-retention-days (%d)", o.Days, o.MaxDays)}
	}
	if o.Interval <= 0 {
		return usageError{fmt.Errorf("invalid value %s for --retention-interval: must be positive", o.Interval)}
	}
	return nil
}

// purger is the leader's retention job over the store: it cancels the runs of deleted
// workspaces through the engine and deletes their assets with their content.
func (o RetentionOptions) purger(st *store.Store, eng *runtime.Engine, as *assets.Service, log *slog.Logger) *retention.Purger {
	return retention.New(retention.Config{Store: st, Leader: eng.Leading, Logger: log, Interval: o.Interval, MaxDays: o.MaxDays, Now: o.now,
		Cancel: func(ctx context.Context, ws, id string) error {
			_, err := eng.Cancel(ctx, ws, id)
			return err
		},
		DeleteAsset: func(ctx context.Context, ws, id string) error {
			_, err := as.Delete(ctx, ws, id)
			return err
		}})
}
