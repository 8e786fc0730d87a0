package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/client"
)

// keysCmd is `agentplane keys`: the workspace's API keys over the API (a "*" key). The same
// commands straight on the database are `agentplane admin keys`.
func keysCmd(env Env) *cobra.Command {
	o := &clientOpts{env: env}
	cmd := groupCmd(&cobra.Command{
		Use:   "keys",
		Short: "List, create and revoke API keys over the API (needs a * key; see admin keys for the database)",
	})
	o.flags(cmd)
	// The database flags belong to `admin keys` now: say so rather than just "unknown flag".
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		for _, f := range []string{"--data-dir", "--database-url", "--secret-key"} {
			if strings.Contains(err.Error(), f) {
				return usageError{fmt.Errorf("%w (to work on the database directly, use agentplane admin keys)", err)}
			}
		}
		return usageError{err}
	})
	cmd.AddCommand(keysListClientCmd(o), keysCreateClientCmd(o), keysRevokeClientCmd(o))
	return cmd
}

func keysListClientCmd(o *clientOpts) *cobra.Command {
	var lo client.ListAPIKeysParams
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the workspace's API keys (never the keys themselves)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			l, err := c.APIKeyList(cmd.Context(), lo)
			if err != nil {
				return err
			}
			return o.print(cmd, l, func(p palette) error {
				t := &table{header: []string{"ID", "NAME", "PREFIX", "SCOPES", "EXPIRES", "LAST USED", "CREATED"}}
				for _, k := range l.Data {
					used := "never"
					if k.LastUsedAt != nil {
						used = fmtTime(*k.LastUsedAt)
					}
					t.add(k.ID, k.Name, k.KeyPrefix, strings.Join(k.Scopes, ","), fmtTimePtr(k.ExpiresAt), used, fmtTime(k.CreatedAt))
				}
				if err := t.write(cmd.OutOrStdout(), p); err != nil {
					return err
				}
				return pageNote(cmd, l.Pagination)
			})
		},
	}
	listFlags(cmd, &lo.Page, &lo.Limit, &lo.Cursor)
	return cmd
}

func keysCreateClientCmd(o *clientOpts) *cobra.Command {
	var (
		in          client.APIKeyCreateRequest
		scopes, ips string
		origins     string
		expiresIn   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an API key and print it on stdout (it is not shown again)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in.Name == "" {
				return usageError{errors.New("--name is required")}
			}
			in.Scopes = nil // the server checks them (422 naming a bad one)
			for _, s := range splitList(scopes) {
				in.Scopes = append(in.Scopes, client.APIKeyCreateRequestScopes(s))
			}
			in.AllowedIps, in.AllowedOrigins = splitList(ips), splitList(origins)
			if expiresIn < 0 {
				return usageError{errors.New("--expires-in must be positive")}
			}
			if expiresIn > 0 {
				t := time.Now().Add(expiresIn).UTC()
				in.ExpiresAt = t
			}
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			k, err := c.APIKeyCreate(cmd.Context(), in)
			if err != nil {
				return err
			}
			return o.print(cmd, k, func(palette) error {
				fmt.Fprintf(cmd.ErrOrStderr(), "created key %s (%s); it will not be shown again:\n", k.ID, k.Name)
				_, err := fmt.Fprintln(cmd.OutOrStdout(), k.Key)
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.Name, "name", "", "display name of the key")
	f.StringVar(&scopes, "scopes", "*", "comma-separated scopes, e.g. agents:read,agents:execute; * grants all")
	f.StringVar(&ips, "allowed-ips", "", "comma-separated addresses or CIDR ranges the key may be used from")
	f.StringVar(&origins, "allowed-origins", "", "comma-separated Origins the key may be used from")
	f.DurationVar(&expiresIn, "expires-in", 0, "the key expires after this long, e.g. 720h (default: never)")
	return cmd
}

func keysRevokeClientCmd(o *clientOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API key; it stops working at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			k, err := c.APIKeyRevoke(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return o.print(cmd, k, func(palette) error {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "revoked %s (%s)\n", k.ID, k.Name)
				return err
			})
		},
	}
}
