package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

func usersCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{Use: "users", Short: "Manage the users who log in to the server (POST /api/v1/auth/login)"}
	cmd.AddCommand(usersCreateCmd(env))
	return cmd
}

func usersCreateCmd(env Env) *cobra.Command {
	var (
		db                            DBOptions
		email, passwordFile, ws, role string
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a user and make them a member of a workspace; prints the user id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			email = strings.TrimSpace(email)
			if email == "" || !strings.Contains(email, "@") {
				return usageError{fmt.Errorf("--email is required and must be an email address")}
			}
			if passwordFile == "" {
				return usageError{fmt.Errorf("--password-file is required (the password is never taken on the command line)")}
			}
			if !domain.ValidRole(role) {
				return usageError{fmt.Errorf("invalid value %q for --role: must be owner, admin or member", role)}
			}
			raw, err := os.ReadFile(passwordFile)
			if err != nil {
				return fmt.Errorf("read password file: %w", err)
			}
			password := strings.TrimRight(string(raw), "\r\n")
			if len(password) < 8 {
				return usageError{fmt.Errorf("the password in %s must be at least 8 characters", passwordFile)}
			}
			wsID := ws
			if ws == "default" {
				wsID = DefaultWorkspaceID
			}
			hash, err := auth.HashPassword(cmd.Context(), password)
			if err != nil {
				return err
			}
			return withKeyStore(cmd, env, &db, func(ctx context.Context, st *store.Store) error {
				if _, err := st.WorkspaceGet(ctx, wsID); err != nil {
					return fmt.Errorf("workspace %s: %w", ws, err)
				}
				var u *domain.User
				err := st.InTx(ctx, func(tx *store.Store) error {
					var err error
					if u, err = tx.UserCreate(ctx, &domain.User{Email: email, PasswordHash: hash}); err != nil {
						return err
					}
					return tx.MembershipAdd(ctx, wsID, u.ID, role)
				})
				if err != nil {
					return fmt.Errorf("create user: %w", err)
				}
				fmt.Fprintln(cmd.OutOrStdout(), u.ID)
				return nil
			})
		},
	}
	db.flags(cmd)
	f := cmd.Flags()
	f.StringVar(&email, "email", "", "the user's email (stored lower-cased)")
	f.StringVar(&passwordFile, "password-file", "", "file holding the password (a trailing newline is dropped)")
	f.StringVar(&ws, "workspace", "default", "workspace id the user joins, or default")
	f.StringVar(&role, "role", "owner", "role in the workspace: owner, admin or member")
	return cmd
}
