package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/client"
)

func executionsCmd(env Env) *cobra.Command {
	o := &clientOpts{env: env}
	cmd := groupCmd(&cobra.Command{Use: "executions", Aliases: []string{"exec"}, Short: "List, show, follow, cancel, approve and deny executions (over the API)"})
	o.flags(cmd)
	cmd.AddCommand(executionsListCmd(o), executionsGetCmd(o), executionsTailCmd(o),
		executionActionCmd(o, "cancel", "Cancel a pending, running or awaiting execution", ""),
		executionsApproveCmd(o),
		executionActionCmd(o, "deny", "Deny an execution awaiting approval; it ends rejected", "reason"))
	return cmd
}

func executionsListCmd(o *clientOpts) *cobra.Command {
	var lo client.ListExecutionsParams
	var agent string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List executions, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			if agent != "" {
				a, err := resolveAgent(cmd.Context(), c, agent)
				if err != nil {
					return err
				}
				lo.AgentID = a.ID
			}
			l, err := c.ExecutionList(cmd.Context(), lo)
			if err != nil {
				return err
			}
			return o.print(cmd, l, func(p palette) error {
				names := agentNames(cmd.Context(), c, l.Data)
				t := &table{header: []string{"ID", "AGENT", "STATUS", "SOURCE", "TOKENS", "COST", "DURATION", "CREATED"}}
				for _, x := range l.Data {
					t.add(x.ID, names[x.AgentID], string(x.Status), source(&x), fmtTokens(x.TokenUsage.TotalTokens), fmtCost(x.Cost), fmtMS(x.DurationMs), fmtTime(x.CreatedAt))
				}
				t.style = func(col int, s string) string {
					if col == 2 {
						return p.status(s)
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
	f := cmd.Flags()
	f.StringVar(&agent, "agent", "", "only runs of this agent (id or name)")
	f.StringVar((*string)(&lo.Status), "status", "", "only runs of this status")
	f.StringVar((*string)(&lo.Source), "source", "", "only runs of this source (api, chat, webhook, …)")
	f.StringVar(&lo.SessionID, "session", "", "only runs of this chat session")
	return cmd
}

// agentNames maps the agent ids of a page of executions to what a table shows for them:
// the agent's name, or its id when it cannot be read (deleted, say). One read per agent.
func agentNames(ctx context.Context, c *client.Client, xs []client.Execution) map[string]string {
	names := map[string]string{}
	for _, x := range xs {
		if _, ok := names[x.AgentID]; ok {
			continue
		}
		names[x.AgentID] = x.AgentID
		if a, err := c.AgentGet(ctx, x.AgentID); err == nil {
			names[x.AgentID] = a.Name
		}
	}
	return names
}

// source is an execution's source, with metadata.source when it says more (cli, playground).
func source(x *client.Execution) string {
	if m, ok := x.Metadata["source"].(string); ok && m != "" && m != x.Source {
		return x.Source + "/" + m
	}
	return x.Source
}

func executionsGetCmd(o *clientOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "get ID",
		Short: "Show an execution: status, input, output, error, usage",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			x, err := c.ExecutionGet(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return o.print(cmd, x, func(p palette) error { return printExecution(cmd, p, x) })
		},
	}
}

func printExecution(cmd *cobra.Command, p palette, x *client.Execution) error {
	input := "-"
	if x.Input != nil {
		input = compactJSON(x.Input)
	}
	output := outputText(x.Output)
	if output == "" {
		output = "-"
	}
	return fields(cmd.OutOrStdout(), p,
		[2]string{"id", x.ID}, [2]string{"agent", x.AgentID}, [2]string{"version", fmtStr(x.AgentVersionID)},
		[2]string{"status", p.status(string(x.Status))}, [2]string{"source", source(x)}, [2]string{"parent", fmtStr(x.ParentID)},
		[2]string{"session", fmtStr(x.SessionID)}, [2]string{"input", input}, [2]string{"output", output},
		[2]string{"error", fmtStr(x.Error)},
		[2]string{"tokens", fmt.Sprintf("%d (prompt %d, completion %d)", x.TokenUsage.TotalTokens, x.TokenUsage.PromptTokens, x.TokenUsage.CompletionTokens)},
		[2]string{"cost", fmtCost(x.Cost)}, [2]string{"duration", fmtMS(x.DurationMs)}, [2]string{"trace", x.TraceID},
		[2]string{"created", fmtTime(x.CreatedAt)}, [2]string{"completed", fmtTimePtr(x.CompletedAt)})
}

func executionsTailCmd(o *clientOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "tail ID",
		Short: "Follow an execution from its first frame; exits as run does (0, 1 or 3)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := o.json()
			if err != nil {
				return err
			}
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			return follow(cmd, o, c, args[0], asJSON)
		},
	}
}

// executionActionCmd is cancel or deny (--reason).
func executionActionCmd(o *clientOpts, action, short, textFlag string) *cobra.Command {
	var text string
	cmd := &cobra.Command{
		Use:   action + " ID",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			ctx, id := cmd.Context(), args[0]
			var x *client.Execution
			switch action {
			case "cancel":
				x, err = c.ExecutionCancel(ctx, id)
			default:
				x, err = c.ExecutionDeny(ctx, id, text)
			}
			if err != nil {
				return err
			}
			return o.print(cmd, x, func(p palette) error {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", x.ID, p.status(string(x.Status)))
				return err
			})
		},
	}
	if textFlag != "" {
		cmd.Flags().StringVar(&text, textFlag, "", "the "+textFlag+" recorded on the approval")
	}
	return cmd
}
