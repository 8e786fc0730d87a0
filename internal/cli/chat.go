package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/client"
)

// historyKeep is how many lines the chat history file keeps.
const historyKeep = 1000

func chatCmd(env Env) *cobra.Command {
	o := &clientOpts{env: env}
	var sessionID, title string
	cmd := &cobra.Command{
		Use:   "chat AGENT",
		Short: "Chat with an agent (by id or name): an interactive session with streamed replies",
		Long: "Opens a chat session with the agent and reads messages from stdin, one a line; each reply streams to stdout as it is written. " +
			"Commands: /history (the messages you sent, kept in the history file beside the config), /new (a fresh session), " +
			"/session (its id), /help, /exit (or Ctrl-D). Sessions are created with metadata.source \"cli\".",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := o.json(); err != nil {
				return err
			}
			c, err := o.connect(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			a, err := resolveAgent(ctx, c, args[0])
			if err != nil {
				return err
			}
			h := &history{}
			if p, err := configPath(o.env); err == nil {
				h.path = filepath.Join(filepath.Dir(p), "history")
				h.load()
			}
			r := &repl{cmd: cmd, o: o, c: c, agent: a, hist: h, title: title,
				pal: palette{on: colorsFor(cmd.OutOrStdout(), o.env)}, prompt: isTerminal(cmd.InOrStdin())}
			if sessionID != "" {
				s, err := c.ChatSessionGet(ctx, sessionID)
				if err != nil {
					return err
				}
				if s.AgentID != a.ID {
					return usageError{fmt.Errorf("session %s belongs to agent %s, not %s", s.ID, s.AgentID, a.ID)}
				}
				r.session = s.ID
			} else if err := r.newSession(ctx); err != nil {
				return err
			}
			return r.loop(ctx)
		},
	}
	o.flags(cmd)
	cmd.Flags().StringVar(&sessionID, "session", "", "continue this session instead of starting one")
	cmd.Flags().StringVar(&title, "title", "", "title of the new session")
	return cmd
}

type repl struct {
	cmd     *cobra.Command
	o       *clientOpts
	c       *client.Client
	agent   *client.Agent
	session string
	title   string
	hist    *history
	pal     palette
	prompt  bool // stdin is a terminal: show a prompt
}

func (r *repl) newSession(ctx context.Context) error {
	title := r.title
	if title == "" {
		title = "agentplane chat"
	}
	s, err := r.c.ChatSessionStart(ctx, client.ChatSessionStart{AgentID: r.agent.ID, Title: title, Metadata: map[string]any{"source": cliSource}})
	if err != nil {
		return err
	}
	r.session = s.ID
	fmt.Fprintf(r.cmd.ErrOrStderr(), "Chatting with %s (session %s). /help for commands; /exit or Ctrl-D to leave.\n", r.agent.Name, s.ID)
	return nil
}

// loop reads lines until /exit, end of input or ctx's end. A failed reply is reported and the
// loop goes on; the exit status is 0 unless the input could not be read.
func (r *repl) loop(ctx context.Context) error {
	lines := make(chan string)
	readErr := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r.cmd.InOrStdin())
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-done:
				return
			}
		}
		readErr <- sc.Err()
	}()
	out := r.cmd.OutOrStdout()
	for {
		if r.prompt {
			fmt.Fprint(out, r.pal.bold("you> "))
		}
		var line string
		select {
		case <-ctx.Done():
			fmt.Fprintln(out)
			return nil
		case l, ok := <-lines:
			if !ok {
				if r.prompt {
					fmt.Fprintln(out) // Ctrl-D leaves the cursor after the prompt
				}
				if err := <-readErr; err != nil {
					return fmt.Errorf("read input: %w", err)
				}
				return nil
			}
			line = strings.TrimSpace(l)
		}
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "/") {
			stop, err := r.command(ctx, line)
			if err != nil {
				return err
			}
			if stop {
				return nil
			}
			continue
		}
		r.hist.add(line)
		if err := r.send(ctx, line); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			fmt.Fprintln(r.cmd.ErrOrStderr(), "agentplane:", err)
		}
	}
}

// command runs a /command; stop reports /exit.
func (r *repl) command(ctx context.Context, line string) (stop bool, err error) {
	w := r.cmd.OutOrStdout()
	switch strings.Fields(line)[0] {
	case "/exit", "/quit":
		return true, nil
	case "/history":
		for i, h := range r.hist.last(20) {
			fmt.Fprintf(w, "%3d  %s\n", i+1, h)
		}
	case "/new":
		return false, r.newSession(ctx)
	case "/session":
		fmt.Fprintln(w, r.session)
	case "/help":
		fmt.Fprintln(w, "/history  the last messages you sent\n/new      start a new session with the agent\n/session  this session's id\n/exit     leave (or Ctrl-D)")
	default:
		fmt.Fprintf(r.cmd.ErrOrStderr(), "unknown command %s: /help lists them\n", strings.Fields(line)[0])
	}
	return false, nil
}

// send posts one message and streams the reply.
func (r *repl) send(ctx context.Context, msg string) error {
	rd := newRenderer(r.cmd, r.o.env, r.cmd.OutOrStdout())
	open := func(ctx context.Context) (*client.Stream, error) { return r.c.ChatStream(ctx, r.session, msg) }
	out, err := rd.follow(ctx, r.c, open, "")
	if err != nil {
		return err
	}
	if out.status == "awaiting_approval" {
		return errors.New("the reply waits for approval; the session stays busy until it is approved or denied")
	}
	return nil
}

// history is the chat's input history: in memory, and appended to a file (mode 0600) so
// /history shows earlier sessions' messages too.
type history struct {
	path  string
	lines []string
}

func (h *history) load() {
	raw, err := os.ReadFile(h.path)
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if l != "" {
			h.lines = append(h.lines, l)
		}
	}
	if len(h.lines) > historyKeep {
		h.lines = h.lines[len(h.lines)-historyKeep:]
		// Keep the file to the same lines, so it does not grow without end.
		tmp := h.path + ".tmp"
		if os.WriteFile(tmp, []byte(strings.Join(h.lines, "\n")+"\n"), 0o600) == nil {
			_ = os.Rename(tmp, h.path)
		}
	}
}

func (h *history) add(line string) {
	h.lines = append(h.lines, line)
	if h.path == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return // history is a convenience: a read-only config directory does not stop the chat
	}
	defer f.Close()
	_, _ = io.WriteString(f, strings.ReplaceAll(line, "\n", " ")+"\n")
}

func (h *history) last(n int) []string {
	if len(h.lines) > n {
		return h.lines[len(h.lines)-n:]
	}
	return h.lines
}
