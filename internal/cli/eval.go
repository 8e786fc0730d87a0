package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/client"
)

// evalCmd is `agentplane eval`: experiments from the command line, made to gate CI.
func evalCmd(env Env) *cobra.Command {
	o := &clientOpts{env: env}
	cmd := groupCmd(&cobra.Command{
		Use:   "eval",
		Short: "Run an agent on a dataset with evaluators (an experiment), gate CI on its scores, compare experiments",
	})
	o.flags(cmd)
	cmd.AddCommand(evalRunCmd(o), evalCompareCmd(o))
	return cmd
}

// minScore is one --min gate: the mean of a score name must be at least value.
type minScore struct {
	name  string
	value float64
}

func parseMins(raw []string) ([]minScore, error) {
	var out []minScore
	for _, r := range raw {
		name, v, ok := strings.Cut(r, "=")
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || strings.TrimSpace(name) == "" || err != nil {
			return nil, usageError{fmt.Errorf("--min %q: want SCORE=VALUE, e.g. --min correctness=0.8", r)}
		}
		out = append(out, minScore{name: strings.TrimSpace(name), value: f})
	}
	return out, nil
}

func evalRunCmd(o *clientOpts) *cobra.Command {
	var dataset, agent string
	var version, concurrency int
	var evaluators, mins []string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run an experiment, stream its progress, print its summary; exit 1 when a --min is not met",
		Long: "Starts an experiment of the agent (its active version, or --version N) on every item of the dataset, scored by each --evaluator, " +
			"prints a line per item as it finishes and the summary table at the end. Exit status 1 when the experiment did not complete, " +
			"or when the mean of a score named by --min is below its value (or the score is missing): a CI gate.",
		Example: "  agentplane eval run --dataset support-qa --agent Support --evaluator correctness --min correctness=0.8",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dataset == "" || agent == "" {
				return usageError{errors.New("--dataset and --agent are required")}
			}
			gates, err := parseMins(mins)
			if err != nil {
				return err
			}
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			in, err := experimentRequest(cmd.Context(), c, dataset, agent, version, evaluators)
			if err != nil {
				return err
			}
			if concurrency > 0 {
				in.Concurrency = client.Ptr(int64(concurrency))
			}
			x, err := c.ExperimentCreate(cmd.Context(), in)
			if err != nil {
				return err
			}
			if x, err = followExperiment(cmd, o, c, x); err != nil {
				return err
			}
			if err := o.print(cmd, x, func(p palette) error { return printSummary(cmd, p, x) }); err != nil {
				return err
			}
			return gateError(x, gates)
		},
	}
	cmd.Flags().StringVar(&dataset, "dataset", "", "the dataset's name or id (required)")
	cmd.Flags().StringVar(&agent, "agent", "", "the agent's name or id (required)")
	cmd.Flags().IntVar(&version, "version", 0, "the agent's version number to run (default: the active version)")
	cmd.Flags().StringArrayVar(&evaluators, "evaluator", nil, "an evaluator's name or id; repeat for several")
	cmd.Flags().StringArrayVar(&mins, "min", nil, "SCORE=VALUE: fail (exit 1) when the mean of SCORE is below VALUE; repeat for several")
	cmd.Flags().IntVar(&concurrency, "concurrency", 0, "items run at once (default 4)")
	return cmd
}

// experimentRequest resolves the names of a run to ids.
func experimentRequest(ctx context.Context, c *client.Client, dataset, agent string, version int, evaluators []string) (client.ExperimentCreateRequest, error) {
	var in client.ExperimentCreateRequest
	a, err := resolveAgent(ctx, c, agent)
	if err != nil {
		return in, err
	}
	in.AgentID = a.ID
	if version > 0 {
		found := false
		for v, err := range client.All(func(cursor string) (*client.List[client.AgentVersion], error) {
			return c.AgentVersionList(ctx, a.ID, client.ListAgentVersionsParams{Limit: 100, Cursor: cursor})
		}) {
			if err != nil {
				return in, err
			}
			if v.Version == int64(version) {
				in.VersionID, found = v.ID, true
				break
			}
		}
		if !found {
			return in, fmt.Errorf("agent %s has no version %d", a.Name, version)
		}
	}
	d, err := byIDOrName(ref{"dataset", dataset}, func() (*client.Dataset, error) { return c.DatasetGet(ctx, dataset) },
		func() (*client.List[client.Dataset], error) {
			return c.DatasetList(ctx, client.ListDatasetsParams{Name: dataset})
		})
	if err != nil {
		return in, err
	}
	in.DatasetID = d.ID
	for _, name := range evaluators {
		ev, err := byIDOrName(ref{"evaluator", name}, func() (*client.Evaluator, error) { return c.EvaluatorGet(ctx, name) },
			func() (*client.List[client.Evaluator], error) {
				return c.EvaluatorList(ctx, client.ListEvaluatorsParams{Name: name})
			})
		if err != nil {
			return in, err
		}
		in.EvaluatorIds = append(in.EvaluatorIds, ev.ID)
	}
	return in, nil
}

// ref names a resource the user gave by id or name.
type ref struct{ kind, value string }

// byIDOrName gets a resource by id, else the one of that name.
func byIDOrName[T any](r ref, get func() (*T, error), named func() (*client.List[T], error)) (*T, error) {
	v, err := get()
	if !isNotFound(err) {
		return v, err
	}
	l, err := named()
	if err != nil {
		return nil, err
	}
	if len(l.Data) == 0 {
		return nil, fmt.Errorf("no %s has the id or name %q", r.kind, r.value)
	}
	return &l.Data[0], nil
}

// followExperiment prints a line per finished item (on stderr when the output is JSON) until
// the experiment ends, and returns it as it ended.
func followExperiment(cmd *cobra.Command, o *clientOpts, c *client.Client, x *client.Experiment) (*client.Experiment, error) {
	out := cmd.ErrOrStderr()
	fmt.Fprintf(out, "experiment %s: %s on dataset %s, %d items\n", x.ID, x.Name, x.DatasetID, x.Progress.Total)
	last := 0
	for {
		s, err := c.ExperimentStream(cmd.Context(), x.ID, last)
		if err != nil {
			return nil, err
		}
		ended := s.Ended()
		for !ended {
			ev, ok, err := s.Next()
			if err != nil || !ok {
				break // the stream broke: resume after the last frame
			}
			last = ev.ID
			if ev.Event == "item" {
				fmt.Fprintln(out, itemLine(ev.Data))
			}
			ended = ev.Terminal()
		}
		s.Close()
		if ended || cmd.Context().Err() != nil {
			break
		}
	}
	if err := cmd.Context().Err(); err != nil {
		return nil, exitError{exitInterrupted, fmt.Errorf("interrupted: experiment %s goes on", x.ID)}
	}
	return c.ExperimentGet(cmd.Context(), x.ID)
}

// itemLine is the progress line of an item frame.
func itemLine(data string) string {
	var f struct {
		ItemID string         `json:"item_id"`
		Status string         `json:"status"`
		Scores map[string]any `json:"scores"`
		Error  *string        `json:"error"`
		Done   int            `json:"done"`
		Total  int            `json:"total"`
	}
	if err := json.Unmarshal([]byte(data), &f); err != nil {
		return data
	}
	var scores []string
	for name, v := range f.Scores {
		scores = append(scores, fmt.Sprintf("%s=%v", name, v))
	}
	line := fmt.Sprintf("[%d/%d] %s %s %s", f.Done, f.Total, f.ItemID, f.Status, strings.Join(slices.Sorted(slices.Values(scores)), " "))
	if f.Error != nil {
		line += " (" + *f.Error + ")"
	}
	return strings.TrimSpace(line)
}

// printSummary prints an experiment's summary table.
func printSummary(cmd *cobra.Command, p palette, x *client.Experiment) error {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "experiment %s %s: %d completed, %d failed of %d\n", x.ID, x.Status, x.Progress.Completed, x.Progress.Failed, x.Progress.Total)
	t := &table{header: []string{"SCORE", "COUNT", "MEAN", "DISTRIBUTION"}}
	for _, st := range x.Summary.Scores {
		mean := "-"
		if st.Mean != nil {
			mean = fmt.Sprintf("%.3f", *st.Mean)
		}
		var dist []string
		for label, n := range st.Distribution {
			dist = append(dist, fmt.Sprintf("%s:%d", label, n))
		}
		t.add(st.Name, fmt.Sprint(st.Count), mean, strings.Join(slices.Sorted(slices.Values(dist)), " "))
	}
	if err := t.write(w, p); err != nil {
		return err
	}
	sm := x.Summary
	fmt.Fprintf(w, "cost $%.6f, %d tokens, latency p50 %s p95 %s\n", sm.Cost, sm.TotalTokens, msOrDash(sm.LatencyP50Ms), msOrDash(sm.LatencyP95Ms))
	return nil
}

// gateError is exit status 1 when the experiment did not complete or a --min is not met.
func gateError(x *client.Experiment, gates []minScore) error {
	var failures []string
	if x.Status != "completed" {
		msg := string(x.Status)
		if x.Error != nil {
			msg += ": " + *x.Error
		}
		failures = append(failures, "the experiment did not complete ("+msg+")")
	}
	failures = append(failures, unmetGates(&x.Summary, gates)...)
	if len(failures) > 0 {
		return exitError{exitFailed, errors.New(strings.Join(failures, "; "))}
	}
	return nil
}

// unmetGates says which --min gates the summary does not meet.
func unmetGates(sm *client.ExperimentSummary, gates []minScore) []string {
	var out []string
	for _, g := range gates {
		var st *client.ScoreStat
		if sm != nil {
			st = sm.Score(g.name)
		}
		switch {
		case st == nil || st.Mean == nil:
			out = append(out, fmt.Sprintf("score %s has no mean (no such score, or it is categorical)", g.name))
		case *st.Mean < g.value:
			out = append(out, fmt.Sprintf("score %s: mean %.3f is below the minimum %g", g.name, *st.Mean, g.value))
		}
	}
	return out
}

func msOrDash(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%d ms", *v)
}

func evalCompareCmd(o *clientOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "compare A B [C...]",
		Short: "Compare experiments: each score's mean per experiment and its difference to the first's",
		Args:  cobra.RangeArgs(2, 5),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			cmp, err := c.ExperimentCompare(cmd.Context(), args...)
			if err != nil {
				return err
			}
			return o.print(cmd, cmp, func(p palette) error {
				header := []string{"SCORE"}
				for i, x := range cmp.Experiments {
					h := x.ID
					if i > 0 {
						h += " (Δ)"
					}
					header = append(header, h)
				}
				t := &table{header: header}
				for _, sc := range cmp.Scores {
					row := []string{sc.Name}
					for i := range sc.Means {
						cell := "-"
						if sc.Means[i] != nil {
							cell = fmt.Sprintf("%.3f", *sc.Means[i])
						}
						if i > 0 && sc.Diffs[i] != nil {
							cell += fmt.Sprintf(" (%+.3f)", *sc.Diffs[i])
						}
						row = append(row, cell)
					}
					t.add(row...)
				}
				return t.write(cmd.OutOrStdout(), p)
			})
		},
	}
}
