package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/client"
)

// isID reports whether s has the shape of a KSUID (27 base62 characters).
func isID(s string) bool {
	if len(s) != 27 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func isNotFound(err error) bool {
	var ae *client.Error
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// connectAgent connects to the server and finds the agent ref names (an id or a name).
func (o *clientOpts) connectAgent(cmd *cobra.Command, ref string) (*client.Client, *client.Agent, error) {
	c, err := o.connect(cmd)
	if err != nil {
		return nil, nil, err
	}
	a, err := resolveAgent(cmd.Context(), c, ref)
	if err != nil {
		return nil, nil, err
	}
	return c, a, nil
}

// resolveAgent finds an agent by id, else by exact name (case-insensitive when no name
// matches exactly). Several agents of one name are a usage error naming their ids.
func resolveAgent(ctx context.Context, c *client.Client, ref string) (*client.Agent, error) {
	if isID(ref) {
		a, err := c.AgentGet(ctx, ref)
		if err == nil || !isNotFound(err) {
			return a, err
		}
	}
	var exact, folded []client.Agent
	for a, err := range client.All(func(cursor string) (*client.List[client.Agent], error) {
		return c.AgentList(ctx, client.ListAgentsParams{Limit: 100, Cursor: cursor, Q: ref})
	}) {
		if err != nil {
			return nil, err
		}
		if a.Name == ref {
			exact = append(exact, a)
		} else if strings.EqualFold(a.Name, ref) {
			folded = append(folded, a)
		}
	}
	if len(exact) == 0 {
		exact = folded
	}
	switch len(exact) {
	case 0:
		return nil, fmt.Errorf("no agent has the id or name %q", ref)
	case 1:
		return &exact[0], nil
	}
	ids := make([]string, len(exact))
	for i, a := range exact {
		ids[i] = a.ID
	}
	return nil, usageError{fmt.Errorf("%d agents are named %q (%s): give an id", len(exact), ref, strings.Join(ids, ", "))}
}

// resolveVersion finds a version of an agent by number (3) or id.
func resolveVersion(ctx context.Context, c *client.Client, agentID, ref string) (*client.AgentVersion, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(ref, "v"))
	if err != nil {
		return c.AgentVersionGet(ctx, agentID, ref)
	}
	for v, err := range client.All(func(cursor string) (*client.List[client.AgentVersion], error) {
		return c.AgentVersionList(ctx, agentID, client.ListAgentVersionsParams{Limit: 100, Cursor: cursor})
	}) {
		if err != nil {
			return nil, err
		}
		if v.Version == int64(n) {
			return &v, nil
		}
	}
	return nil, fmt.Errorf("agent %s has no version %d", agentID, n)
}

// readJSONArg reads a JSON object given inline or as @file (@- for stdin).
func readJSONArg(cmd *cobra.Command, flag, v string, out any) error {
	raw := []byte(v)
	if strings.HasPrefix(v, "@") {
		var err error
		if v == "@-" {
			raw, err = readAll(cmd.InOrStdin())
		} else {
			raw, err = os.ReadFile(v[1:])
		}
		if err != nil {
			return usageError{fmt.Errorf("read --%s: %w", flag, err)}
		}
	}
	// Unknown fields are refused rather than dropped: a config field this CLI's SDK does not
	// know would otherwise vanish without a word.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return usageError{fmt.Errorf("invalid value for --%s: %v", flag, err)}
	}
	if dec.More() {
		return usageError{fmt.Errorf("invalid value for --%s: more than one JSON value", flag)}
	}
	return nil
}

func agentsCmd(env Env) *cobra.Command {
	o := &clientOpts{env: env}
	cmd := groupCmd(&cobra.Command{Use: "agents", Short: "List, show, create and version agents (over the API)"})
	o.flags(cmd)
	cmd.AddCommand(agentsListCmd(o), agentsGetCmd(o), agentsCreateCmd(o), agentsVersionsCmd(o), agentsPromoteCmd(o))
	return cmd
}

func agentsListCmd(o *clientOpts) *cobra.Command {
	var lo client.ListAgentsParams
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List agents, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			l, err := c.AgentList(cmd.Context(), lo)
			if err != nil {
				return err
			}
			return o.print(cmd, l, func(p palette) error {
				t := &table{header: []string{"ID", "NAME", "TYPE", "STATUS", "VERSION", "MODEL", "UPDATED"}}
				for _, a := range l.Data {
					t.add(a.ID, a.Name, string(a.Type), string(a.Status), activeVersion(&a), model(&a), fmtTime(a.UpdatedAt))
				}
				if err := t.write(cmd.OutOrStdout(), p); err != nil {
					return err
				}
				return pageNote(cmd, l.Pagination)
			})
		},
	}
	listFlags(cmd, &lo.Page, &lo.Limit, &lo.Cursor)
	cmd.Flags().StringVarP(&lo.Q, "query", "q", "", "only agents whose name or description contains this")
	cmd.Flags().StringVar((*string)(&lo.Type), "type", "", "only agents of this type")
	cmd.Flags().StringVar((*string)(&lo.Status), "status", "", "only agents of this status")
	return cmd
}

func activeVersion(a *client.Agent) string {
	if a.ActiveVersion == nil {
		return "-"
	}
	return strconv.FormatInt(*a.ActiveVersion, 10)
}

func model(a *client.Agent) string {
	if a.Config == nil || a.Config.Model == "" {
		return "-"
	}
	return a.Config.Model
}

func agentsGetCmd(o *clientOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "get AGENT",
		Short: "Show an agent (by id or name) and its active configuration",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, a, err := o.connectAgent(cmd, args[0])
			if err != nil {
				return err
			}
			return o.print(cmd, a, func(p palette) error { return printAgent(cmd, p, a) })
		},
	}
}

func printAgent(cmd *cobra.Command, p palette, a *client.Agent) error {
	cfg := "-"
	if a.Config != nil {
		raw, _ := json.MarshalIndent(a.Config, "", "  ")
		cfg = string(raw)
	}
	return fields(cmd.OutOrStdout(), p,
		[2]string{"id", a.ID}, [2]string{"name", a.Name}, [2]string{"type", string(a.Type)}, [2]string{"status", string(a.Status)},
		[2]string{"description", a.Description}, [2]string{"active version", activeVersion(a)},
		[2]string{"versions", strconv.FormatInt(a.VersionCount, 10)}, [2]string{"created", fmtTime(a.CreatedAt)},
		[2]string{"updated", fmtTime(a.UpdatedAt)}, [2]string{"config", cfg})
}

func agentsCreateCmd(o *clientOpts) *cobra.Command {
	var (
		in                  client.AgentCreateRequest
		config, modelName   string
		systemPrompt, notes string
		tags                string
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an agent; its config becomes version 1, active",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in.Name == "" {
				return usageError{errors.New("--name is required")}
			}
			var cfg client.AgentConfig
			if config != "" {
				if err := readJSONArg(cmd, "config", config, &cfg); err != nil {
					return err
				}
			}
			if modelName != "" {
				cfg.Model = modelName
			}
			if systemPrompt != "" {
				cfg.SystemPrompt = systemPrompt
			}
			if config != "" || modelName != "" || systemPrompt != "" {
				in.Config = cfg
			}
			in.Tags, in.Notes = splitList(tags), notes
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			a, err := c.AgentCreate(cmd.Context(), in)
			if err != nil {
				return err
			}
			return o.print(cmd, a, func(p palette) error { return printAgent(cmd, p, a) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.Name, "name", "", "the agent's name")
	f.StringVar((*string)(&in.Type), "type", "simple", "simple, agent, chain, workflow, multi_agent or approval")
	f.StringVar(&in.Description, "description", "", "what the agent is for")
	f.StringVar(&config, "config", "", "version 1's config as JSON, or @file (@- for stdin)")
	f.StringVar(&modelName, "model", "", "model id (sets config.model)")
	f.StringVar(&systemPrompt, "system-prompt", "", "system prompt (sets config.system_prompt)")
	f.StringVar(&tags, "tags", "", "comma-separated tags")
	f.StringVar(&notes, "notes", "", "notes of version 1")
	return cmd
}

func agentsVersionsCmd(o *clientOpts) *cobra.Command {
	var lo client.ListAgentVersionsParams
	cmd := &cobra.Command{
		Use:   "versions AGENT",
		Short: "List an agent's versions, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, a, err := o.connectAgent(cmd, args[0])
			if err != nil {
				return err
			}
			l, err := c.AgentVersionList(cmd.Context(), a.ID, lo)
			if err != nil {
				return err
			}
			return o.print(cmd, l, func(p palette) error {
				t := &table{header: []string{"VERSION", "ID", "ACTIVE", "MODEL", "CREATED", "NOTES"}}
				for _, v := range l.Data {
					active := ""
					if v.IsActive {
						active = "active"
					}
					t.add(strconv.FormatInt(v.Version, 10), v.ID, active, v.Config.Model, fmtTime(v.CreatedAt), v.Notes)
				}
				t.style = func(col int, s string) string {
					if col == 2 && s != "" {
						return p.green(s)
					}
					return s
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

func agentsPromoteCmd(o *clientOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "promote AGENT VERSION",
		Short: "Make a version (its number or id) the agent's active version",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, a, err := o.connectAgent(cmd, args[0])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			v, err := resolveVersion(ctx, c, a.ID, args[1])
			if err != nil {
				return err
			}
			a, err = c.AgentVersionPromote(ctx, a.ID, v.ID)
			if err != nil {
				return err
			}
			return o.print(cmd, a, func(palette) error {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s (%s): version %d (%s) is active\n", a.Name, a.ID, v.Version, v.ID)
				return err
			})
		},
	}
}

// listFlags adds --page, --limit and --cursor, the paging fields of a list's Params.
func listFlags(cmd *cobra.Command, page, limit *int, cursor *string) {
	cmd.Flags().IntVar(page, "page", 0, "page number (1-based)")
	cmd.Flags().IntVar(limit, "limit", 0, "items per page (default 20, at most 100)")
	cmd.Flags().StringVar(cursor, "cursor", "", "continue after the page that printed this cursor (instead of --page)")
}

// pageNote says on stderr that more pages exist, and how to get the next.
func pageNote(cmd *cobra.Command, p client.Pagination) error {
	if p.NextCursor == nil {
		return nil
	}
	total := fmt.Sprintf("%d in all", p.Total)
	if p.TotalCapped {
		total = fmt.Sprintf("more than %d", p.Total-1)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "page %d (%s): --cursor %s for the next\n", p.Page, total, *p.NextCursor)
	return nil
}

// print writes v as JSON with --output json, else calls tableFn with the stdout palette.
func (o *clientOpts) print(cmd *cobra.Command, v any, tableFn func(palette) error) error {
	asJSON, err := o.json()
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), v)
	}
	return tableFn(palette{on: colorsFor(cmd.OutOrStdout(), o.env)})
}
