package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/client"
)

// clientConfig is the client commands' config file: the servers logged in to, by profile.
// It holds API keys, so it is written with mode 0600 in a 0700 directory.
type clientConfig struct {
	Current  string                    `json:"current,omitempty"`
	Profiles map[string]*clientProfile `json:"profiles"`
}

// clientProfile is one server and the key used on it.
type clientProfile struct {
	URL    string `json:"url"`
	APIKey string `json:"api_key,omitempty"`
}

const defaultProfile = "default"

// configPath is where the client config lives: $AGENTPLANE_CONFIG, else
// $XDG_CONFIG_HOME/agentplane/config.json, else the OS's user config directory.
func configPath(env Env) (string, error) {
	if p, ok := env("AGENTPLANE_CONFIG"); ok && p != "" {
		return p, nil
	}
	if d, ok := env("XDG_CONFIG_HOME"); ok && d != "" {
		return filepath.Join(d, "agentplane", "config.json"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the config directory (set AGENTPLANE_CONFIG): %w", err)
	}
	return filepath.Join(d, "agentplane", "config.json"), nil
}

// loadConfig reads the config file; a missing file is an empty config. A file others can
// read gets a warning on stderr: it holds keys.
func loadConfig(path string, stderr io.Writer) (*clientConfig, error) {
	cfg := &clientConfig{Profiles: map[string]*clientProfile{}}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if info, err := os.Stat(path); err == nil && info.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(stderr, "agentplane: warning: %s holds API keys and is readable by others (mode %04o); run chmod 600 %s\n",
			path, info.Mode().Perm(), path)
	}
	if err := json.Unmarshal(raw, cfg); err != nil {
		return nil, fmt.Errorf("config file %s is not valid JSON: %w", path, err)
	}
	if cfg.Profiles == nil {
		cfg.Profiles = map[string]*clientProfile{}
	}
	return cfg, nil
}

// save writes the config atomically (a temporary file renamed over it) with mode 0600, and
// checks the mode it ended up with.
func (c *clientConfig) save(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create config directory: %w", err)
	}
	raw, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".config-*.json")
	if err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("write config: %w", err)
	}
	if _, err := f.Write(append(raw, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write config: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write config: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		return fmt.Errorf("config file %s has mode %04o, not 0600", path, perm)
	}
	return nil
}

func (c *clientConfig) names() []string {
	out := make([]string, 0, len(c.Profiles))
	for n := range c.Profiles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// clientOpts are the flags every client command shares: which profile, which output format.
type clientOpts struct {
	env     Env
	profile string
	output  string
}

func (o *clientOpts) flags(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&o.profile, "profile", "", "profile of the config file to use (AGENTPLANE_PROFILE; default: the last one logged in to)")
	f.StringVarP(&o.output, "output", "o", "table", "output format: table or json")
}

// json reports whether the output format is JSON; an unknown format is a usage error.
func (o *clientOpts) json() (bool, error) {
	switch o.output {
	case "table", "":
		return false, nil
	case "json":
		return true, nil
	}
	return false, usageError{fmt.Errorf("invalid value %q for --output: must be table or json", o.output)}
}

// profileName is the profile the command uses: --profile, $AGENTPLANE_PROFILE, the config's
// current one, or "default".
func (o *clientOpts) profileName(cfg *clientConfig) string {
	if o.profile != "" {
		return o.profile
	}
	if p, ok := o.env("AGENTPLANE_PROFILE"); ok && p != "" {
		return p
	}
	if cfg != nil && cfg.Current != "" {
		return cfg.Current
	}
	return defaultProfile
}

// connect returns a client for the selected profile; AGENTPLANE_URL and AGENTPLANE_API_KEY
// override the profile's URL and key (and need no config file at all). A profile's key is
// only ever sent to its own URL.
func (o *clientOpts) connect(cmd *cobra.Command) (*client.Client, error) {
	if _, err := o.json(); err != nil {
		return nil, err
	}
	path, err := configPath(o.env)
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(path, cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	name := o.profileName(cfg)
	p := cfg.Profiles[name]
	envURL, _ := o.env("AGENTPLANE_URL")
	envKey, keySet := o.env("AGENTPLANE_API_KEY")
	if p == nil {
		if envURL == "" {
			if o.profile != "" || len(cfg.Profiles) > 0 {
				return nil, usageError{fmt.Errorf("no profile %q in %s: run agentplane login --profile %s --url URL", name, path, name)}
			}
			return nil, usageError{fmt.Errorf("not logged in: run agentplane login --url URL, or set AGENTPLANE_URL (and AGENTPLANE_API_KEY)")}
		}
		p = &clientProfile{}
	}
	base, key := p.URL, p.APIKey
	if envURL != "" && strings.TrimRight(envURL, "/") != p.URL {
		// Another server than the profile's: its key is not sent there.
		base, key = envURL, ""
	}
	if keySet {
		key = envKey
	}
	if err := checkServerURL(base); err != nil {
		return nil, err
	}
	opts := []client.Option{client.WithUserAgent(userAgent())}
	if key != "" {
		opts = append(opts, client.WithAPIKey(key))
	}
	return client.New(base, opts...), nil
}

// userAgent names the CLI to the servers it calls.
func userAgent() string {
	return "agentplane-cli/" + Version
}

// checkServerURL accepts an http or https URL with a host.
func checkServerURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError{fmt.Errorf("invalid server URL %q: must be http:// or https:// with a host", s)}
	}
	return nil
}
