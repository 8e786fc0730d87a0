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
	var serverURL, keyFile, email, passwordFile, workspace string
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Check a server URL and API key and store them in the config file (mode 0600)",
		Long: "Stores the server URL and an API key under a profile (--profile, default \"default\") of the config file " +
			"($AGENTPLANE_CONFIG, else <user config dir>/agentplane/config.json), and makes it the current profile. " +
			"The key is read from --api-key-file, else $AGENTPLANE_API_KEY, else standard input (a hidden prompt on a terminal); " +
			"it is never taken on the command line. The emulator needs no key.\n\n" +
			"With --email, a user of serve signs in instead: the password is read from --password-file, else $AGENTPLANE_PASSWORD, " +
			"else standard input (a hidden prompt on a terminal), and the CLI creates an API key of its own in the workspace " +
			"(--workspace, an id or slug; needed when the user is in several) and stores that key, never the password. " +
			"Creating keys takes the owner or admin role; a member asks one of them for a key.",
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
			switch {
			case email != "" && keyFile != "":
				return usageError{errors.New("use --email or --api-key-file, not both")}
			case email == "" && (passwordFile != "" || workspace != ""):
				return usageError{errors.New("--password-file and --workspace go with --email")}
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
			var key, made string
			if email != "" {
				if h.Mode == "emulator" {
					return usageError{errors.New("the emulator has no users and needs no key: log in without --email")}
				}
				password, err := readSecret(cmd, env, passwordFile, "AGENTPLANE_PASSWORD", "password", false)
				if err != nil {
					return err
				}
				if key, made, err = keyForUser(cmd, serverURL, email, password, workspace); err != nil {
					return err
				}
			} else if key, err = readSecret(cmd, env, keyFile, "AGENTPLANE_API_KEY", "API key", h.Mode == "emulator"); err != nil {
				return err
			} else {
				key = strings.TrimSpace(key)
			}
			opts := []client.Option{client.WithUserAgent(userAgent())}
			if key != "" {
				opts = append(opts, client.WithAPIKey(key))
			}
			note := ""
			if _, err := client.New(serverURL, opts...).AgentList(ctx, client.ListAgentsParams{Limit: 1}); err != nil {
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
			out := map[string]string{"profile": name, "url": serverURL, "mode": string(h.Mode), "version": h.Version, "config": path}
			if made != "" {
				out["api_key"] = made
				note += "; it holds API key " + made + ", made for this CLI (agentplane keys revoke to end it)"
			}
			return o.print(cmd, out, func(palette) error {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "Logged in to %s (%s %s) as profile %s%s; saved in %s\n", serverURL, h.Mode, h.Version, name, note, path)
				return err
			})
		},
	}
	o.flags(cmd)
	cmd.Flags().StringVar(&serverURL, "url", "", "base URL of the server, e.g. http://localhost:8080 (AGENTPLANE_URL)")
	cmd.Flags().StringVar(&keyFile, "api-key-file", "", "file holding the API key (a trailing newline is dropped)")
	cmd.Flags().StringVar(&email, "email", "", "sign in as this user of serve and store an API key made for the CLI")
	cmd.Flags().StringVar(&passwordFile, "password-file", "", "with --email: file holding the password (a trailing newline is dropped)")
	cmd.Flags().StringVar(&workspace, "workspace", "", "with --email: the workspace (id or slug) the key is for; needed when the user is in several")
	return cmd
}

// keyForUser signs email in at serverURL and creates an API key with every scope in the
// chosen workspace, named after this host; it returns the key and the key's name and prefix.
func keyForUser(cmd *cobra.Command, serverURL, email, password, workspace string) (key, made string, err error) {
	ctx := cmd.Context()
	tok, err := client.New(serverURL, client.WithUserAgent(userAgent())).Login(ctx, email, password)
	var ae *client.Error
	if errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusTooManyRequests) {
		return "", "", fmt.Errorf("the server at %s refused the sign-in: %s", serverURL, ae.Message)
	}
	if err != nil {
		return "", "", fmt.Errorf("sign in: %w", err)
	}
	var ws *client.Membership
	var names []string
	for i, m := range tok.Workspaces {
		names = append(names, m.Slug)
		if workspace != "" && (m.ID == workspace || m.Slug == workspace) {
			ws = &tok.Workspaces[i]
		}
	}
	switch {
	case len(tok.Workspaces) == 0:
		return "", "", fmt.Errorf("%s is a member of no workspace: an owner must add them first", email)
	case workspace != "" && ws == nil:
		return "", "", usageError{fmt.Errorf("%s is not a member of workspace %q; theirs: %s", email, workspace, strings.Join(names, ", "))}
	case ws == nil && len(tok.Workspaces) > 1:
		return "", "", usageError{fmt.Errorf("%s is a member of several workspaces (%s): choose one with --workspace", email, strings.Join(names, ", "))}
	case ws == nil:
		ws = &tok.Workspaces[0]
	}
	host, _ := os.Hostname()
	if host == "" {
		host = "this host"
	}
	uc := client.New(serverURL, client.WithUserAgent(userAgent()), client.WithBearer(tok.Token), client.WithWorkspace(ws.ID))
	k, err := uc.APIKeyCreate(ctx, client.APIKeyCreateRequest{Name: "agentplane CLI on " + host + " for " + tok.User.Email, Scopes: []client.APIKeyCreateRequestScopes{"*"}})
	if errors.As(err, &ae) && ae.Status == http.StatusForbidden {
		return "", "", fmt.Errorf("signed in, but your role in workspace %s (%s) may not create API keys: ask an owner or admin for a key and log in with --api-key-file", ws.Slug, ws.Role)
	}
	if err != nil {
		return "", "", fmt.Errorf("create an API key for the CLI: %w", err)
	}
	return k.Key, k.Name + " (" + k.KeyPrefix + "…)", nil
}

// readSecret reads a secret for login (what names it): from file, else the variable envVar,
// else standard input (a hidden prompt on a terminal). optional allows it to be empty.
func readSecret(cmd *cobra.Command, env Env, file, envVar, what string, optional bool) (string, error) {
	if file != "" {
		raw, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("read %s file: %w", what, err)
		}
		return strings.TrimRight(string(raw), "\r\n"), nil
	}
	if k, ok := env(envVar); ok {
		return strings.TrimRight(k, "\r\n"), nil
	}
	in := cmd.InOrStdin()
	var secret string
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		hint := ""
		if optional {
			hint = " (the emulator needs none: press Enter)"
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "%s%s%s: ", strings.ToUpper(what[:1]), what[1:], hint)
		raw, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return "", fmt.Errorf("read %s: %w", what, err)
		}
		secret = string(raw)
	} else {
		line, err := bufio.NewReader(in).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read %s from stdin: %w", what, err)
		}
		secret = strings.TrimRight(line, "\r\n")
	}
	if strings.TrimSpace(secret) == "" && !optional {
		return "", usageError{fmt.Errorf("the %s is required: pipe it on stdin, or use --%s-file or %s", what, strings.ReplaceAll(strings.ToLower(what), " ", "-"), envVar)}
	}
	return secret, nil
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
