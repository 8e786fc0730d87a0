package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/internal/assets"
	"github.com/agentplane/agentplane/internal/blob"
	"github.com/agentplane/agentplane/internal/store"
)

// AssetOptions are serve's asset settings: where blobs live and the per-workspace quota.
type AssetOptions struct {
	// Dir holds the asset blobs (--assets-dir); empty is <data-dir>/assets.
	Dir string
	// QuotaMB is the megabytes (MiB) of distinct content each workspace may store
	// (--assets-quota-mb); 0 is unlimited.
	QuotaMB int64
}

func (o *AssetOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Dir, "assets-dir", "", "directory of the asset blobs (images, audio and files runs produce) (ASSETS_DIR); default <data-dir>/assets")
	f.Int64Var(&o.QuotaMB, "assets-quota-mb", 0, "MiB of asset content each workspace may store, identical content counted once; 0 is unlimited (ASSETS_QUOTA_MB)")
}

// validate rejects a negative quota, naming the flag.
func (o *AssetOptions) validate() error {
	if o.QuotaMB < 0 || o.QuotaMB > 1<<40 {
		return usageError{fmt.Errorf("invalid value %d for --assets-quota-mb: must be 0 (unlimited) to %d", o.QuotaMB, int64(1)<<40)}
	}
	return nil
}

// service opens the blob directory and returns the asset service over st.
func (o AssetOptions) service(st *store.Store, dataDir string) (*assets.Service, error) {
	dir := o.Dir
	if dir == "" {
		dir = filepath.Join(dataDir, "assets")
	}
	blobs, err := blob.NewDir(dir)
	if err != nil {
		return nil, err
	}
	return assets.New(st, blobs, o.QuotaMB<<20), nil
}
