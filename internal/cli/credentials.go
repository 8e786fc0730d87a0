package cli

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/client"
)

// credentialsCmd is `agentplane credentials`: the workspace's credentials over the API, so a
// model provider's key can be added from a terminal in the first minutes.
func credentialsCmd(env Env) *cobra.Command {
	o := &clientOpts{env: env}
	cmd := groupCmd(&cobra.Command{
		Use:   "credentials",
		Short: "Add, list, validate and delete credentials (model provider keys, tokens) over the API",
	})
	o.flags(cmd)
	cmd.AddCommand(credentialsListCmd(o), credentialsAddCmd(o), credentialsValidateCmd(o), credentialsDeleteCmd(o))
	return cmd
}

func credentialsListCmd(o *clientOpts) *cobra.Command {
	var lo client.ListCredentialsParams
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the workspace's credentials (values masked)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			l, err := c.CredentialList(cmd.Context(), lo)
			if err != nil {
				return err
			}
			return o.print(cmd, l, func(p palette) error {
				t := &table{header: []string{"ID", "NAME", "TYPE", "PROVIDER", "VALUE", "VALID", "CREATED"}}
				for _, k := range l.Data {
					valid := "unchecked"
					if k.Valid != nil {
						valid = map[bool]string{true: "yes", false: "no: " + oneLine(k.ValidationMessage, 60)}[*k.Valid]
					}
					t.add(k.ID, k.Name, string(k.Type), k.Provider, k.MaskedValue, valid, fmtTime(k.CreatedAt))
				}
				if err := t.write(cmd.OutOrStdout(), p); err != nil {
					return err
				}
				return pageNote(cmd, l.Pagination)
			})
		},
	}
	listFlags(cmd, &lo.Page, &lo.Limit, &lo.Cursor)
	cmd.Flags().StringVar(&lo.Provider, "provider", "", "only this provider's credentials")
	return cmd
}

func credentialsAddCmd(o *clientOpts) *cobra.Command {
	var in client.CredentialCreateRequest
	var baseURL string
	cmd := &cobra.Command{
		Use:   "add",
		Short: "Add a credential; --value - reads the secret from stdin (kept out of shell history)",
		Example: "  agentplane credentials add --provider openai --value - < key.txt\n" +
			"  agentplane credentials add --provider openai_compatible --base-url http://localhost:11434/v1 --value none",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in.Value == "-" {
				line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if line = strings.TrimSpace(line); line == "" && err != nil {
					return usageError{errors.New("--value -: no value on stdin")}
				}
				in.Value = line
			}
			if in.Value == "" {
				return usageError{errors.New("--value is required (- reads it from stdin)")}
			}
			if in.Name == "" {
				in.Name = in.Provider
			}
			if in.Name == "" {
				return usageError{errors.New("--name or --provider is required")}
			}
			if baseURL != "" {
				in.Metadata = map[string]any{"base_url": baseURL}
			}
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			k, err := c.CredentialCreate(cmd.Context(), in)
			if err != nil {
				return err
			}
			return o.print(cmd, k, func(palette) error {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "added credential %s (%s, %s); check it with: agentplane credentials validate %s\n", k.ID, k.Name, k.MaskedValue, k.ID)
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.Name, "name", "", "display name (default: the provider)")
	f.StringVar((*string)(&in.Type), "type", "api_key", "api_key, bearer_token, basic_auth, database_url or oauth2")
	f.StringVar(&in.Provider, "provider", "", "model provider the key is for: openai, anthropic, google, ollama, openai_compatible, …")
	f.StringVar(&in.Value, "value", "", "the secret; - reads it from stdin")
	f.StringVar(&baseURL, "base-url", "", "the provider's API root (metadata.base_url), required for ollama and openai_compatible")
	f.StringVar(&in.Description, "description", "", "what the credential is for")
	return cmd
}

func credentialsValidateCmd(o *clientOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "validate ID",
		Short: "Check a model provider credential against its provider (exit 1 when it does not work)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			v, err := c.CredentialValidate(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if err := o.print(cmd, v, func(palette) error {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "valid: %t (%d) %s\n", v.Valid, v.Status, v.Message)
				return err
			}); err != nil {
				return err
			}
			if !v.Valid {
				return exitError{exitFailed, nil}
			}
			return nil
		},
	}
}

func credentialsDeleteCmd(o *clientOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a credential no data source or MCP tool uses",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			k, err := c.CredentialDelete(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return o.print(cmd, k, func(palette) error {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "deleted %s (%s)\n", k.ID, k.Name)
				return err
			})
		},
	}
}
