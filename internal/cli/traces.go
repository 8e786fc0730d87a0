package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/client"
)

func tracesCmd(env Env) *cobra.Command {
	o := &clientOpts{env: env}
	cmd := groupCmd(&cobra.Command{Use: "traces", Short: "Show traces: the timed spans of a run (over the API)"})
	o.flags(cmd)
	cmd.AddCommand(&cobra.Command{
		Use:   "get ID",
		Short: "Show a trace (by trace id or execution id) as a tree of spans",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			tr, err := c.TraceGet(ctx, args[0])
			if isNotFound(err) {
				// Maybe an execution id: its trace is named on it.
				if x, xerr := c.ExecutionGet(ctx, args[0]); xerr == nil && x.TraceID != "" {
					tr, err = c.TraceGet(ctx, x.TraceID)
				}
			}
			if err != nil {
				return err
			}
			return o.print(cmd, tr, func(p palette) error { return printTrace(cmd, p, tr) })
		},
	})
	return cmd
}

// printTrace prints the trace's totals, then its spans as a tree in start order.
func printTrace(cmd *cobra.Command, p palette, tr *client.TraceDetail) error {
	if err := fields(cmd.OutOrStdout(), p,
		[2]string{"trace", tr.ID}, [2]string{"name", tr.Name}, [2]string{"status", p.status(string(tr.Status))},
		[2]string{"execution", fmtStr(tr.ExecutionID)}, [2]string{"duration", fmtMS(tr.DurationMs)},
		[2]string{"tokens", fmtTokens(tr.TokenUsage.TotalTokens)}, [2]string{"cost", fmtCost(tr.Cost)},
		[2]string{"started", fmtTime(tr.StartedAt)}); err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout())
	all := tr.AllSpans() // the tree, flattened: parents are found by parent_id below
	children := map[string][]*client.SpanNode{}
	ids := map[string]bool{}
	for _, s := range all {
		ids[s.ID] = true
	}
	var roots []*client.SpanNode
	for _, s := range all {
		if s.ParentID != nil && ids[*s.ParentID] {
			children[*s.ParentID] = append(children[*s.ParentID], s)
		} else {
			roots = append(roots, s)
		}
	}
	t := &table{header: []string{"SPAN", "KIND", "STATUS", "DURATION", "TOKENS", "DETAIL"}}
	var walk func(list []*client.SpanNode, depth int)
	walk = func(list []*client.SpanNode, depth int) {
		sort.SliceStable(list, func(i, j int) bool { return list[i].StartedAt.Before(list[j].StartedAt) })
		for _, s := range list {
			detail := ""
			if s.Error != nil {
				detail = oneLine(*s.Error, 80)
			} else if len(s.Output) > 0 && string(s.Output) != "null" {
				detail = oneLine(string(s.Output), 80)
			}
			t.add(strings.Repeat("  ", depth)+s.Name, string(s.Kind), string(s.Status), fmtMS(s.DurationMs), fmtTokens(s.TokenUsage.TotalTokens), detail)
			walk(children[s.ID], depth+1)
		}
	}
	walk(roots, 0)
	t.style = func(col int, s string) string {
		if col == 2 {
			return p.status(strings.TrimSpace(s))
		}
		return s
	}
	return t.write(cmd.OutOrStdout(), p)
}

func compactJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}

// fmtTokens prints a token count the server may leave out (as 0).
func fmtTokens(n *int64) string { return strconv.FormatInt(client.Val(n), 10) }
