package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/internal/assets"
	"github.com/agentplane/agentplane/internal/blob"
	"github.com/agentplane/agentplane/internal/store"
)

// AssetOptions are serve's asset settings: where blobs live and the per-workspace quota.
type AssetOptions struct {
	// Dir holds the asset blobs (--assets-dir); empty is <data-dir>/assets on SQLite and the
	// database on PostgreSQL.
	Dir string
	// QuotaMB is the megabytes (MiB) of distinct content each workspace may store
	// (--assets-quota-mb); 0 is unlimited.
	QuotaMB int64
}

func (o *AssetOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Dir, "assets-dir", "", "directory of the asset blobs (images, audio and files runs produce) (ASSETS_DIR); default <data-dir>/assets on SQLite, the database on PostgreSQL")
	f.Int64Var(&o.QuotaMB, "assets-quota-mb", 0, "MiB of asset content each workspace may store, identical content counted once; 0 is unlimited (ASSETS_QUOTA_MB)")
}

// validate rejects a negative quota, naming the flag.
func (o *AssetOptions) validate() error {
	if o.QuotaMB < 0 || o.QuotaMB > 1<<40 {
		return usageError{fmt.Errorf("invalid value %d for --assets-quota-mb: must be 0 (unlimited) to %d", o.QuotaMB, int64(1)<<40)}
	}
	return nil
}

// service returns the asset service over st. Blobs live in the database on PostgreSQL, so
// that every node of a cluster serves every asset, and under <data-dir>/assets on SQLite;
// --assets-dir keeps them in that directory on either.
func (o AssetOptions) service(ctx context.Context, log *slog.Logger, st *store.Store, dataDir string) (*assets.Service, error) {
	quota := o.QuotaMB << 20
	if o.Dir == "" && st.Dialect() == store.Postgres {
		db := blob.NewDatabase(st)
		if err := importBlobDir(ctx, log, st, db, filepath.Join(dataDir, "assets")); err != nil {
			return nil, err
		}
		return assets.New(st, db, quota), nil
	}
	dir := o.Dir
	if dir == "" {
		dir = filepath.Join(dataDir, "assets")
	}
	blobs, err := blob.NewDir(dir)
	if err != nil {
		return nil, err
	}
	return assets.New(st, blobs, quota), nil
}

// importBlobDir brings into the database the blobs that serve on PostgreSQL kept under dir
// (<data-dir>/assets) before blobs moved to the database: those an asset still uses are
// copied, digests checked, and dir is renamed <dir>.imported for the operator to remove.
// Nothing is deleted; a failed import stops the start with its reason, and the next start
// goes on where it stopped.
func importBlobDir(ctx context.Context, log *slog.Logger, st *store.Store, to blob.Store, dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("asset blob directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory: serve on PostgreSQL imports the asset blobs earlier versions kept there; move the file away", dir)
	}
	from, err := blob.NewDir(dir)
	if err != nil {
		return err
	}
	done := dir + ".imported"
	n, err := blob.Copy(ctx, from, to, func(ws, sum string) (bool, error) { return st.AssetBlobRecorded(ctx, ws, sum) })
	if err != nil {
		if _, gone := os.Stat(dir); errors.Is(gone, fs.ErrNotExist) {
			if _, moved := os.Stat(done); moved == nil {
				return nil // another node sharing this data directory imported it meanwhile
			}
		}
		return fmt.Errorf("import the asset blobs of %s into the database: %w", dir, err)
	}
	if err := os.Rename(dir, done); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("asset blobs imported into the database, but renaming %s failed: %w", dir, err)
	}
	log.Info("asset blobs imported into the database", "blobs", n, "from", dir, "kept_at", done)
	return nil
}
