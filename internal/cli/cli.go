// Package cli holds agentplane's commands: one file per subcommand.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentplane/agentplane/client"
)

// Version is the build's version, set with -ldflags "-X …/internal/cli.Version=v1.2.3".
var Version = "dev"

// Env looks up an environment variable; tests pass their own.
type Env func(key string) (string, bool)

// usageError marks a bad flag or environment value: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

// Run runs the command line args and returns the process exit status.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return RunEnv(ctx, args, os.LookupEnv, stdin, stdout, stderr)
}

// RunEnv is Run with an explicit environment.
func RunEnv(ctx context.Context, args []string, env Env, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(env)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var xe exitError
	if errors.As(err, &xe) {
		if xe.err != nil {
			fmt.Fprintln(stderr, "agentplane:", xe.err)
		}
		return xe.code
	}
	fmt.Fprintln(stderr, errorLine(err))
	var ae *client.Error
	if errors.As(err, &ae) {
		return 1
	}
	var ue usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") {
		return 2
	}
	return 1
}

// errorLine is how an error is printed on stderr: prefixed "agentplane:" once (the SDK's
// errors carry the prefix already).
func errorLine(err error) string {
	var ae *client.Error
	if errors.As(err, &ae) {
		return fmt.Sprintf("agentplane: %d %s: %s (request %s)", ae.Status, ae.Code, ae.Message, ae.RequestID)
	}
	return "agentplane: " + err.Error()
}

// newRoot builds the command tree.
func newRoot(env Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "agentplane",
		Short:         "agentplane: a self-hosted agent platform",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddGroup(&cobra.Group{ID: "server", Title: "Server and database commands:"},
		&cobra.Group{ID: "client", Title: "Client commands (over the API of a server or emulator; agentplane login first):"})
	for _, c := range []*cobra.Command{emulatorCmd(env), serveCmd(env), migrateCmd(env), usersCmd(env), adminCmd(env)} {
		c.GroupID = "server"
		root.AddCommand(c)
	}
	// The client commands call a server's API with the Go SDK (client/), never a database.
	for _, c := range []*cobra.Command{loginCmd(env), logoutCmd(env), agentsCmd(env), runCmd(env), chatCmd(env), executionsCmd(env),
		keysCmd(env), credentialsCmd(env), tracesCmd(env), datasetsCmd(env), evalCmd(env)} {
		c.GroupID = "client"
		root.AddCommand(c)
	}
	root.AddCommand(versionCmd())
	usageArgs(root)
	return root
}

// groupCmd makes a command that only holds subcommands answer an unknown subcommand with a
// usage error (exit status 2) rather than its help and status 0.
func groupCmd(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageError{fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())}
		}
		return cmd.Help()
	}
	return cmd
}

// usageArgs makes every wrong count of arguments a usage error (exit status 2).
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// bindEnv gives every flag that was not set on the command line the value of its environment
// variable, if that is set. A flag always wins over its variable.
func bindEnv(fs *pflag.FlagSet, env Env, vars map[string]string) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		name, ok := vars[f.Name]
		if !ok || f.Changed || err != nil {
			return
		}
		if v, set := env(name); set {
			if e := fs.Set(f.Name, v); e != nil {
				err = usageError{fmt.Errorf("invalid value %q for --%s (from %s): %v", v, f.Name, name, e)}
			}
		}
	})
	return err
}

// parseLevel reads a log level name.
func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, usageError{fmt.Errorf("invalid value %q for --log-level: must be debug, info, warn or error", s)}
}

func checkPort(p int) error {
	if p < 0 || p > 65535 {
		return usageError{fmt.Errorf("invalid value %d for --port: must be 0 to 65535", p)}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

type slogLevel = slog.Level
