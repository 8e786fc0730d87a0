package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/client"
)

// Exit statuses of run, executions tail and the other client commands.
const (
	exitFailed   = 1 // the run failed, was cancelled or rejected; or the API answered an error
	exitUsage    = 2 // a bad flag, argument or configuration
	exitAwaiting = 3 // the run waits for a human decision (approve or deny)

	exitInterrupted = 130 // Ctrl-C while following a run; the run goes on
)

// exitError ends the command with a given status; its message (if any) goes to stderr.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e exitError) Unwrap() error { return e.err }

// cliSource is what runs started by the client commands record in metadata.source: the
// execute API sets the execution's own source (api, chat) and takes metadata as given.
const cliSource = "cli"

func readAll(r io.Reader) ([]byte, error) { return io.ReadAll(io.LimitReader(r, 16<<20)) }

func runCmd(env Env) *cobra.Command {
	o := &clientOpts{env: env}
	var input, version string
	var async bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "run AGENT",
		Short: "Run an agent (by id or name) and stream its reply",
		Long: "Starts an execution and streams it: content to stdout as it arrives, thinking and tool steps to stderr " +
			"(with a spinner when stderr is a terminal). Exit status: 0 completed, 1 failed, cancelled or rejected, " +
			"2 usage error, 3 awaiting approval (approve with agentplane executions approve ID). With --async it prints " +
			"the execution id and exits at once. Runs are recorded with metadata.source \"cli\".",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := o.json()
			if err != nil {
				return err
			}
			var in map[string]any
			if input != "" {
				if err := readJSONArg(cmd, "input", input, &in); err != nil {
					return err
				}
			}
			if timeout < 0 {
				return usageError{errors.New("--timeout must not be negative")}
			}
			c, a, err := o.connectAgent(cmd, args[0])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			req := client.ExecuteRequest{Input: in, Async: client.Ptr(true), Metadata: map[string]any{"source": cliSource}, TimeoutMs: int64(int(timeout.Milliseconds()))}
			if version != "" {
				v, err := resolveVersion(ctx, c, a.ID, version)
				if err != nil {
					return err
				}
				req.VersionID = v.ID
			}
			x, err := c.Execute(ctx, a.ID, req)
			if err != nil {
				return err
			}
			if async {
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), x)
				}
				_, err := fmt.Fprintln(cmd.OutOrStdout(), x.ID)
				return err
			}
			return follow(cmd, o, c, x.ID, asJSON)
		},
	}
	o.flags(cmd)
	f := cmd.Flags()
	f.StringVar(&input, "input", "", "the run's input: a JSON object, or @file (@- for stdin)")
	f.StringVar(&version, "version", "", "run this version (number or id) instead of the active one")
	f.BoolVar(&async, "async", false, "print the execution id and exit without waiting")
	f.DurationVar(&timeout, "timeout", 0, "the run's timeout_ms, as a duration (default: the server's)")
	return cmd
}

// follow streams an execution from its first frame to its end (or an approval checkpoint)
// and turns the outcome into the exit status. With asJSON, stdout gets the final execution
// instead of the streamed content.
func follow(cmd *cobra.Command, o *clientOpts, c *client.Client, id string, asJSON bool) error {
	ctx := cmd.Context()
	var content io.Writer = cmd.OutOrStdout()
	if asJSON {
		content = nil
	}
	r := newRenderer(cmd, o.env, content)
	out, err := r.follow(ctx, c, func(ctx context.Context) (*client.Stream, error) { return c.ExecutionStream(ctx, id, 0) }, id)
	if err != nil && ctx.Err() != nil {
		// Ctrl-C stops following, not the run (128+SIGINT, as a shell reports it).
		return exitError{exitInterrupted, fmt.Errorf("interrupted: execution %s goes on (agentplane executions tail %s; or cancel it)", id, id)}
	}
	if err != nil {
		return err
	}
	if asJSON {
		x, err := c.ExecutionGet(context.WithoutCancel(ctx), id)
		if err != nil {
			return err
		}
		if err := writeJSON(cmd.OutOrStdout(), x); err != nil {
			return err
		}
	}
	return out.exit()
}

// outcome is how a followed execution stopped.
type outcome struct {
	id      string
	status  string // completed, failed, cancelled, rejected, timeout, interrupted, awaiting_approval
	message string
}

func (o outcome) exit() error {
	switch o.status {
	case "completed":
		return nil
	case "awaiting_approval":
		return exitError{exitAwaiting, nil}
	}
	return exitError{exitFailed, nil}
}

// renderer writes a stream's frames: content to stdout (nil: nowhere), the rest to stderr.
type renderer struct {
	out      io.Writer
	errw     io.Writer
	spin     *spinner
	pal      palette // stderr's
	wrote    bool    // content was written
	lastNL   bool    // the content written ends with a newline
	pollIdle time.Duration
}

func newRenderer(cmd *cobra.Command, env Env, out io.Writer) *renderer {
	return &renderer{out: out, errw: cmd.ErrOrStderr(), spin: newSpinner(cmd.ErrOrStderr()), pal: palette{on: colorsFor(cmd.ErrOrStderr(), env)},
		pollIdle: 500 * time.Millisecond}
}

type frame struct {
	ev  client.StreamEvent
	err error
}

// follow opens a stream and reads it until its terminal frame. A run that stops producing
// frames is checked every pollIdle: one awaiting approval keeps its stream open with nothing
// to send, so that is how it is noticed. id may be "" when the stream's first frame names the
// execution (chat). The stream is closed on return; the run goes on.
func (r *renderer) follow(ctx context.Context, c *client.Client, open func(context.Context) (*client.Stream, error), id string) (outcome, error) {
	// The stream's own context: cancelling it ends a read blocked in Next.
	sctx, cancel := context.WithCancel(ctx)
	s, err := open(sctx)
	if err != nil {
		cancel()
		return outcome{}, err
	}
	frames := make(chan frame)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(frames)
		for {
			ev, ok, err := s.Next()
			if !ok && err == nil {
				return
			}
			select {
			case frames <- frame{ev, err}:
			case <-sctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		// Cancelling the request ends a Next blocked in a read; then the stream can close.
		cancel()
		wg.Wait()
		s.Close()
		r.spin.Stop()
	}()
	if s.Ended() {
		// Nothing after the frame we asked from: the run has ended; read how.
		x, err := c.ExecutionGet(ctx, id)
		if err != nil {
			return outcome{}, err
		}
		return r.finish(outcome{id: id, status: string(x.Status), message: fmtStr(x.Error)}), nil
	}
	r.spin.Start("running")
	idle := time.NewTicker(r.pollIdle)
	defer idle.Stop()
	seen := false
	for {
		select {
		case <-ctx.Done():
			return outcome{}, ctx.Err()
		case f, ok := <-frames:
			if !ok {
				return outcome{}, errors.New("the stream ended without a terminal frame")
			}
			if f.err != nil {
				return outcome{}, fmt.Errorf("read stream: %w", f.err)
			}
			seen = true
			if out, done := r.frame(f.ev, &id); done {
				return r.finish(out), nil
			}
		case <-idle.C:
			if seen || id == "" {
				seen = false
				continue
			}
			x, err := c.ExecutionGet(ctx, id)
			if err != nil {
				return outcome{}, err
			}
			if x.Status == "awaiting_approval" {
				return r.finish(outcome{id: id, status: string(x.Status)}), nil
			}
		}
	}
}

// frame renders one frame; done reports a terminal one with the outcome it gives.
func (r *renderer) frame(ev client.StreamEvent, id *string) (outcome, bool) {
	var d struct {
		ExecutionID string `json:"execution_id"`
		Content     string `json:"content"`
		Name        string `json:"name"`
		Summary     string `json:"summary"`
		Message     string `json:"message"`
		Code        string `json:"code"`
		Output      json.RawMessage
	}
	_ = json.Unmarshal([]byte(ev.Data), &d)
	switch ev.Event {
	case "execution":
		if d.ExecutionID != "" {
			*id = d.ExecutionID
		}
	case "thinking":
		r.step(r.pal.dim("… " + strings.TrimSpace(d.Content)))
	case "tool_start":
		r.step(r.pal.cyan("→ tool " + d.Name))
		r.spin.Start("tool " + d.Name)
	case "tool_end":
		line := "✓ tool " + d.Name
		if d.Summary != "" {
			line += ": " + oneLine(d.Summary, 200)
		}
		r.step(r.pal.cyan(line))
	case "content":
		r.spin.Stop()
		r.content(d.Content)
	case "done":
		if !r.wrote {
			// No content frames (structured output): print the output itself.
			var out struct {
				Output json.RawMessage `json:"output"`
			}
			_ = json.Unmarshal([]byte(ev.Data), &out)
			r.content(outputText(out.Output))
		}
		return outcome{id: *id, status: "completed"}, true
	case "error":
		status := d.Code
		if status == "" {
			status = "failed"
		}
		return outcome{id: *id, status: status, message: d.Message}, true
	}
	return outcome{}, false
}

// outputText is an execution's output as text: a plain reply ({"content": "…"}) or a JSON
// string as the text itself, anything else (structured output) as JSON.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var reply map[string]any
	if json.Unmarshal(raw, &reply) == nil && len(reply) == 1 {
		if s, ok := reply["content"].(string); ok {
			return s
		}
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// step writes a thinking or tool line to stderr, on a line of its own.
func (r *renderer) step(line string) {
	if r.wrote && !r.lastNL && r.out != nil && isTerminal(r.out) && isTerminal(r.errw) {
		// Content and steps share one terminal: do not write into the middle of a line.
		fmt.Fprintln(r.out)
		r.lastNL = true
	}
	r.spin.Println(line)
}

func (r *renderer) content(s string) {
	if r.out == nil || s == "" {
		return
	}
	io.WriteString(r.out, s)
	r.wrote, r.lastNL = true, strings.HasSuffix(s, "\n")
}

// finish ends the content with a newline and says on stderr how the run ended.
func (r *renderer) finish(o outcome) outcome {
	r.spin.Stop()
	if r.out != nil && r.wrote && !r.lastNL {
		fmt.Fprintln(r.out)
		r.lastNL = true
	}
	switch o.status {
	case "completed":
		fmt.Fprintln(r.errw, r.pal.green("✓ completed")+r.pal.dim(" · execution "+o.id))
	case "awaiting_approval":
		fmt.Fprintf(r.errw, "%s · execution %s: agentplane executions approve %s (or deny)\n", r.pal.wrap("33", "⏸ awaiting approval"), o.id, o.id)
	default:
		msg := o.status
		if o.message != "" && o.message != "-" {
			msg += ": " + o.message
		}
		fmt.Fprintln(r.errw, r.pal.red("✗ "+msg)+r.pal.dim(" · execution "+o.id))
	}
	return o
}
