package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/client"
)

// datasetsCmd is `agentplane datasets`: the workspace's evaluation datasets over the API, so
// test cases kept in a repository as JSONL can be pushed from CI.
func datasetsCmd(env Env) *cobra.Command {
	o := &clientOpts{env: env}
	cmd := groupCmd(&cobra.Command{
		Use:   "datasets",
		Short: "List datasets and push JSONL test cases into them over the API",
	})
	o.flags(cmd)
	cmd.AddCommand(datasetsListCmd(o), datasetsPushCmd(o))
	return cmd
}

func datasetsListCmd(o *clientOpts) *cobra.Command {
	var lo client.ListDatasetsParams
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the workspace's datasets",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			l, err := c.DatasetList(cmd.Context(), lo)
			if err != nil {
				return err
			}
			return o.print(cmd, l, func(p palette) error {
				t := &table{header: []string{"ID", "NAME", "ITEMS", "VERSION", "CREATED"}}
				for _, d := range l.Data {
					t.add(d.ID, d.Name, fmt.Sprint(d.ItemCount), fmt.Sprint(d.Version), fmtTime(d.CreatedAt))
				}
				if err := t.write(cmd.OutOrStdout(), p); err != nil {
					return err
				}
				return pageNote(cmd, l.Pagination)
			})
		},
	}
	listFlags(cmd, &lo.Page, &lo.Limit, &lo.Cursor)
	cmd.Flags().StringVarP(&lo.Q, "query", "q", "", "only datasets whose name or description contains this")
	return cmd
}

func datasetsPushCmd(o *clientOpts) *cobra.Command {
	var name, description string
	cmd := &cobra.Command{
		Use:   "push FILE.jsonl",
		Short: "Add the items of a JSONL file (one {\"input\", \"expected_output\", \"metadata\"} object a line) to a dataset, all or none",
		Long: "Adds every line of the file as one item of the dataset named by --dataset (default: the file's name without its extension), " +
			"creating the dataset when the workspace has none of that name. Nothing is added unless every line is good: a bad line is reported by its number. " +
			"At most 1,000 lines a push.",
		Example: "  agentplane datasets push evals/support-qa.jsonl\n  agentplane datasets push cases.jsonl --dataset support-qa",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return usageError{err}
			}
			defer f.Close()
			if name == "" {
				name = strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0]))
			}
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			d, created, err := datasetNamed(cmd, c, name, description)
			if err != nil {
				return err
			}
			batch, err := c.DatasetItemsPushJSONL(cmd.Context(), d.ID, f)
			if err != nil {
				if created { // leave nothing behind for a push that added nothing
					_, _ = c.DatasetDelete(cmd.Context(), d.ID)
				}
				return err
			}
			if d, err = c.DatasetGet(cmd.Context(), d.ID); err != nil {
				return err
			}
			return o.print(cmd, d, func(palette) error {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "pushed %d items to dataset %s (%s): %d items, version %d\n", batch.Count, d.Name, d.ID, d.ItemCount, d.Version)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&name, "dataset", "", "the dataset's name (default: the file's name without its extension); created when missing")
	cmd.Flags().StringVar(&description, "description", "", "the description of a dataset the push creates")
	return cmd
}

// datasetNamed finds the workspace's dataset of a name, or creates it; created says which.
func datasetNamed(cmd *cobra.Command, c *client.Client, name, description string) (*client.Dataset, bool, error) {
	if strings.TrimSpace(name) == "" {
		return nil, false, usageError{errors.New("--dataset: a name is required")}
	}
	l, err := c.DatasetList(cmd.Context(), client.ListDatasetsParams{Name: name})
	if err != nil {
		return nil, false, err
	}
	if len(l.Data) > 0 {
		return &l.Data[0], false, nil
	}
	d, err := c.DatasetCreate(cmd.Context(), client.DatasetCreateRequest{Name: name, Description: description})
	return d, err == nil, err
}
