package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentplane/agentplane/client"
)

func loginCmd(env Env) *cobra.Command {
	o := &clientOpts{env: env}
	var serverURL, keyFile string
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Check a server URL and API key and store them in the config file (mode 0600)",
		Long: "Stores the server URL and an API key under a profile (--profile, default \"default\") of the config file " +
			"($AGENTPLANE_CONFIG, else <user config dir>/agentplane/config.json), and makes it the current profile. " +
			"The key is read from --api-key-file, else $AGENTPLANE_API_KEY, else standard input (a hidden prompt on a terminal); " +
			"it is never taken on the command line. The emulator needs no key.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if serverURL == "" {
				serverURL, _ = env("AGENTPLANE_URL")
			}
			if serverURL == "" {
				return usageError{errors.New("--url is required (or AGENTPLANE_URL)")}
			}
			if _, err := o.json(); err != nil {
				return err
			}
			serverURL = strings.TrimRight(serverURL, "/")
			if err := checkServerURL(serverURL); err != nil {
				return err
			}
			path, err := configPath(env)
			if err != nil {
				return err
			}
			cfg, err := loadConfig(path, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			name := o.profile
			if name == "" {
				name = defaultProfile
			}
			ctx := cmd.Context()
			h, err := client.New(serverURL, client.WithUserAgent(userAgent())).Health(ctx)
			if err != nil {
				return fmt.Errorf("no agentplane server answers at %s: %w", serverURL, err)
			}
			key, err := readKey(cmd, env, keyFile, h.Mode == "emulator")
			if err != nil {
				return err
			}
			opts := []client.Option{client.WithUserAgent(userAgent())}
			if key != "" {
				opts = append(opts, client.WithAPIKey(key))
			}
			note := ""
			if _, err := client.New(serverURL, opts...).AgentList(ctx, client.AgentListOptions{ListOptions: client.ListOptions{Limit: 1}}); err != nil {
				var ae *client.Error
				switch {
				case errors.As(err, &ae) && ae.Status == http.StatusForbidden:
					note = " (the key may not read agents: " + ae.Message + ")"
				case errors.As(err, &ae) && ae.Status == http.StatusUnauthorized:
					return fmt.Errorf("the server at %s refused the key: %s", serverURL, ae.Message)
				default:
					return fmt.Errorf("check the key: %w", err)
				}
			}
			cfg.Profiles[name] = &clientProfile{URL: serverURL, APIKey: key}
			cfg.Current = name
			if err := cfg.save(path); err != nil {
				return err
			}
			return o.print(cmd, map[string]string{"profile": name, "url": serverURL, "mode": h.Mode, "version": h.Version, "config": path},
				func(palette) error {
					_, err := fmt.Fprintf(cmd.OutOrStdout(), "Logged in to %s (%s %s) as profile %s%s; saved in %s\n", serverURL, h.Mode, h.Version, name, note, path)
					return err
				})
		},
	}
	o.flags(cmd)
	cmd.Flags().StringVar(&serverURL, "url", "", "base URL of the server, e.g. http://localhost:8080 (AGENTPLANE_URL)")
	cmd.Flags().StringVar(&keyFile, "api-key-file", "", "file holding the API key (a trailing newline is dropped)")
	return cmd
}

// readKey finds the API key for login: --api-key-file, $AGENTPLANE_API_KEY, or stdin.
func readKey(cmd *cobra.Command, env Env, file string, optional bool) (string, error) {
	if file != "" {
		raw, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("read API key file: %w", err)
		}
		return strings.TrimSpace(string(raw)), nil
	}
	if k, ok := env("AGENTPLANE_API_KEY"); ok {
		return strings.TrimSpace(k), nil
	}
	in := cmd.InOrStdin()
	var key string
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		hint := ""
		if optional {
			hint = " (the emulator needs none: press Enter)"
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "API key%s: ", hint)
		raw, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return "", fmt.Errorf("read API key: %w", err)
		}
		key = string(raw)
	} else {
		line, err := bufio.NewReader(in).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read API key from stdin: %w", err)
		}
		key = line
	}
	key = strings.TrimSpace(key)
	if key == "" && !optional {
		return "", usageError{errors.New("an API key is required: pipe it on stdin, or use --api-key-file or AGENTPLANE_API_KEY")}
	}
	return key, nil
}

func logoutCmd(env Env) *cobra.Command {
	o := &clientOpts{env: env}
	var all bool
	cmd := &cobra.Command{
		Use:   "logout",
		Short: "Remove a profile (its URL and key) from the config file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := configPath(env)
			if err != nil {
				return err
			}
			cfg, err := loadConfig(path, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			var gone []string
			if all {
				gone = cfg.names()
				cfg.Profiles, cfg.Current = map[string]*clientProfile{}, ""
			} else {
				name := o.profileName(cfg)
				if cfg.Profiles[name] == nil {
					return fmt.Errorf("no profile %q in %s", name, path)
				}
				delete(cfg.Profiles, name)
				if cfg.Current == name {
					cfg.Current = ""
				}
				gone = []string{name}
			}
			if err := cfg.save(path); err != nil {
				return err
			}
			return o.print(cmd, map[string]any{"removed": gone}, func(palette) error {
				for _, n := range gone {
					fmt.Fprintf(cmd.OutOrStdout(), "Logged out of profile %s\n", n)
				}
				return nil
			})
		},
	}
	o.flags(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "remove every profile")
	return cmd
}
