package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Commit is the build's git commit, set with -ldflags "-X …/internal/cli.Commit=<sha>" (the
// release build, .ci/release, does); else the one the Go toolchain stamped, when it did.
var Commit = ""

// buildCommit is Commit, else the VCS revision in the binary's build info ("unknown" when
// neither is there, as under go run or go test), with "-dirty" for a modified tree.
func buildCommit() string {
	if Commit != "" {
		return Commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// versionCmd is `agentplane version`: what a bug report needs about the binary.
func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of this binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "agentplane %s\ncommit %s\n%s %s/%s\n", Version, buildCommit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
