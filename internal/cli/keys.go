package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// bootstrapKey creates the first API key ("bootstrap", scope "*", default workspace) when the
// database has never had one, and prints it on stderr: the only time it is shown. It never
// goes through the logger. It returns the raw key, or "" when there was a key already.
func bootstrapKey(ctx context.Context, st *store.Store, stderr io.Writer) (string, error) {
	n, err := st.APIKeyCount(ctx)
	if err != nil {
		return "", fmt.Errorf("count api keys: %w", err)
	}
	if n > 0 {
		return "", nil
	}
	raw, err := createKey(ctx, st, DefaultWorkspaceID, "bootstrap", []string{auth.ScopeAll})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(stderr, "agentplane: created API key for workspace default (it will not be shown again):\n%s\n", raw)
	return raw, nil
}

// createKey stores a new key in the workspace and returns it raw.
func createKey(ctx context.Context, st *store.Store, ws, name string, scopes []string) (string, error) {
	raw, err := auth.NewKey()
	if err != nil {
		return "", err
	}
	_, err = st.APIKeyCreate(ctx, &domain.APIKey{WorkspaceID: ws, Name: name, KeyPrefix: auth.KeyPrefix(raw), Scopes: scopes}, auth.HashKey(raw))
	if err != nil {
		return "", fmt.Errorf("create api key: %w", err)
	}
	return raw, nil
}

// adminKeysCmd is `agentplane admin keys`: keys of the default workspace, straight in the
// server's database (for the first key, or when no key works). `agentplane keys` is the
// client command, over the API.
func adminKeysCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Manage the API keys of the default workspace in the configured database"}
	cmd.AddCommand(keysCreateCmd(env), keysListCmd(env), keysRevokeCmd(env))
	return cmd
}

// withKeyStore opens the server's database for a keys subcommand and closes it after fn.
func withKeyStore(cmd *cobra.Command, env Env, db *DBOptions, fn func(ctx context.Context, st *store.Store) error) error {
	if err := bindEnv(cmd.Flags(), env, dbEnv); err != nil {
		return err
	}
	st, _, err := openServerStore(cmd.Context(), io.Discard, *db, 0)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(cmd.Context(), st)
}

func keysCreateCmd(env Env) *cobra.Command {
	var (
		db     DBOptions
		name   string
		scopes string
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an API key and print it on stdout (it is not shown again)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return usageError{fmt.Errorf("--name is required")}
			}
			list := splitList(scopes)
			if err := auth.ValidateScopes(list); err != nil {
				return usageError{fmt.Errorf("invalid value for --scopes: %w", err)}
			}
			return withKeyStore(cmd, env, &db, func(ctx context.Context, st *store.Store) error {
				raw, err := createKey(ctx, st, DefaultWorkspaceID, name, list)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), raw)
				return nil
			})
		},
	}
	db.flags(cmd)
	cmd.Flags().StringVar(&name, "name", "", "display name of the key")
	cmd.Flags().StringVar(&scopes, "scopes", "*", "comma-separated scopes, e.g. agents:read,agents:execute; * grants all")
	return cmd
}

func keysListCmd(env Env) *cobra.Command {
	var db DBOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the API keys (never the keys themselves)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withKeyStore(cmd, env, &db, func(ctx context.Context, st *store.Store) error {
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tPREFIX\tSCOPES\tCREATED\tLAST USED")
				for page := 1; ; page++ {
					items, total, err := st.APIKeyList(ctx, DefaultWorkspaceID, domain.Page{Page: page, Limit: 100})
					if err != nil {
						return err
					}
					for _, k := range items {
						used := "never"
						if k.LastUsedAt != nil {
							used = k.LastUsedAt.UTC().Format("2006-01-02T15:04:05Z")
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\t%s\n", k.ID, k.Name, k.KeyPrefix, []string(k.Scopes),
							k.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), used)
					}
					if page*100 >= total {
						break
					}
				}
				return tw.Flush()
			})
		},
	}
	db.flags(cmd)
	return cmd
}

func keysRevokeCmd(env Env) *cobra.Command {
	var db DBOptions
	cmd := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API key (a running server may accept it for up to 30 s more)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withKeyStore(cmd, env, &db, func(ctx context.Context, st *store.Store) error {
				k, err := st.APIKeyRevoke(ctx, DefaultWorkspaceID, args[0])
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "revoked %s (%s)\n", k.ID, k.Name)
				return nil
			})
		},
	}
	db.flags(cmd)
	return cmd
}
