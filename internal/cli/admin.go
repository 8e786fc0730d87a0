package cli

import "github.com/spf13/cobra"

// adminCmd groups the commands that open the server's database directly instead of calling
// the API: they need the database flags, not a login.
func adminCmd(env Env) *cobra.Command {
	cmd := groupCmd(&cobra.Command{
		Use:   "admin",
		Short: "Work on the server's database directly (bootstrap and recovery): keys, users",
	})
	cmd.AddCommand(adminKeysCmd(env), usersCmd(env))
	return cmd
}
