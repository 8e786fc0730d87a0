package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/client"
)

// executionsApproveCmd approves an execution awaiting approval: it shows the pending tool
// calls (or the question), and decides them as --reject, --edit and --answer say (a pending
// call without a decision is approved). --show shows them without deciding.
func executionsApproveCmd(o *clientOpts) *cobra.Command {
	var rv client.ApproveRequest
	var rejects, edits []string
	var show bool
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve an execution awaiting approval; it resumes (--reject CALL_ID=reason, --edit CALL_ID=JSON, --answer TEXT)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			decisions, err := callDecisions(rejects, edits)
			if err != nil {
				return err
			}
			rv.Decisions = decisions
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			ctx, id := cmd.Context(), args[0]
			pending, err := c.ExecutionApproval(ctx, id)
			if err != nil {
				return err
			}
			if show {
				if pending == nil {
					return fmt.Errorf("execution %s waits for no approval", id)
				}
				return o.print(cmd, pending, func(palette) error { return writePending(cmd.OutOrStdout(), pending) })
			}
			x, err := c.ExecutionDecide(ctx, id, rv)
			if err != nil {
				return err
			}
			return o.print(cmd, x, func(p palette) error {
				if pending != nil {
					if err := writePending(cmd.OutOrStdout(), pending); err != nil {
						return err
					}
				}
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", x.ID, p.status(string(x.Status)))
				return err
			})
		},
	}
	cmd.Flags().StringVar(&rv.Comment, "comment", "", "the comment recorded on the approval")
	cmd.Flags().StringVar(&rv.Answer, "answer", "", "the answer to the run's question (ask_user)")
	cmd.Flags().StringArrayVar(&rejects, "reject", nil, "CALL_ID=reason: reject a pending tool call; the model reads the reason (repeatable)")
	cmd.Flags().StringArrayVar(&edits, "edit", nil, `CALL_ID=JSON: run a pending tool call with these arguments instead, e.g. c2='{"order_id":"C-3"}' (repeatable)`)
	cmd.Flags().BoolVar(&show, "show", false, "show the pending calls (or the question) without deciding")
	return cmd
}

// callDecisions reads --reject CALL_ID=reason and --edit CALL_ID=JSON.
func callDecisions(rejects, edits []string) ([]client.CallDecision, error) {
	var out []client.CallDecision
	for _, r := range rejects {
		id, reason, ok := strings.Cut(r, "=")
		if !ok || id == "" {
			return nil, usageError{fmt.Errorf("--reject wants CALL_ID=reason, got %q", r)}
		}
		out = append(out, client.CallDecision{CallID: id, Decision: "reject", Message: reason})
	}
	for _, e := range edits {
		id, args, ok := strings.Cut(e, "=")
		if !ok || id == "" || !json.Valid([]byte(args)) {
			return nil, usageError{fmt.Errorf("--edit wants CALL_ID=JSON (the new arguments), got %q", e)}
		}
		out = append(out, client.CallDecision{CallID: id, Decision: "edit", Arguments: json.RawMessage(args)})
	}
	return out, nil
}

// writePending lists an approval's pending calls, one a line, with its question if it asks one.
func writePending(w io.Writer, a *client.Approval) error {
	if a.Question != "" {
		line := "question: " + a.Question
		if len(a.Choices) > 0 {
			line += " (" + strings.Join(a.Choices, " / ") + ")"
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	for _, c := range a.Calls {
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\n", c.CallID, c.Name, c.Arguments); err != nil {
			return err
		}
	}
	return nil
}
