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
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/term"

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
			c, a, err := o.connectAgent(cmd, args[0])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
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
	sent    int  // messages sent
	failed  int  // of which the reply failed
}

func (r *repl) newSession(ctx context.Context) error {
	title := r.title
	if title == "" {
		title = "agentplane chat"
	}
	s, err := r.c.ChatSessionStart(ctx, client.ChatSessionCreateRequest{AgentID: r.agent.ID, Title: title, Metadata: map[string]any{"source": cliSource}})
	if err != nil {
		return err
	}
	r.session = s.ID
	fmt.Fprintf(r.cmd.ErrOrStderr(), "Chatting with %s (session %s). /help for commands; /exit or Ctrl-D to leave.\n", r.agent.Name, s.ID)
	return nil
}

// lineResult is one line read, or why there is none.
type lineResult struct {
	line string
	err  error
}

// lineSource returns a function that reads one line. On a terminal (stdin and stdout) it edits
// the line in raw mode with golang.org/x/term, up and down arrows recalling the history, and
// gives the terminal back to cooked mode before returning, so replies print as usual.
// Elsewhere it reads plain lines and shows no prompt.
func (r *repl) lineSource() (read func() (string, error), restore func()) {
	in, out := r.cmd.InOrStdin(), r.cmd.OutOrStdout()
	inFile, ok := in.(*os.File)
	if !ok || !isTerminal(in) || !isTerminal(out) {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		return func() (string, error) {
			if r.prompt {
				fmt.Fprint(out, r.pal.bold("you> "))
			}
			if sc.Scan() {
				return sc.Text(), nil
			}
			if err := sc.Err(); err != nil {
				return "", err
			}
			return "", io.EOF
		}, func() {}
	}
	fd := int(inFile.Fd())
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, r.pal.bold("you> "))
	t.History = termHistory{r.hist}
	var (
		mu    sync.Mutex
		saved *term.State
	)
	restore = func() {
		mu.Lock()
		defer mu.Unlock()
		if saved != nil {
			_ = term.Restore(fd, saved)
			saved = nil
		}
	}
	return func() (string, error) {
		st, err := term.MakeRaw(fd)
		if err != nil {
			return "", fmt.Errorf("terminal: %w", err)
		}
		mu.Lock()
		saved = st
		mu.Unlock()
		defer restore()
		return t.ReadLine() // Ctrl-D on an empty line and Ctrl-C are io.EOF
	}, restore
}

// termHistory shows the chat history to the line editor. Its Add does nothing: the loop
// records the messages it sends (not /commands) itself.
type termHistory struct{ h *history }

func (th termHistory) Add(string)      {}
func (th termHistory) Len() int        { return len(th.h.lines) }
func (th termHistory) At(i int) string { return th.h.lines[len(th.h.lines)-1-i] }

// loop reads lines until /exit, end of input or ctx's end. A failed reply is reported and the
// loop goes on. The exit status is 0 unless the input could not be read or, when stdin is not
// a terminal (a script pipes the conversation), a reply failed: then it is 1.
func (r *repl) loop(ctx context.Context) error {
	if err := r.read(ctx); err != nil {
		return err
	}
	if !r.prompt && r.failed > 0 {
		return exitError{exitFailed, fmt.Errorf("%d of %d messages got no reply", r.failed, r.sent)}
	}
	return nil
}

// read is loop's reading and sending, until /exit, end of input or ctx's end.
func (r *repl) read(ctx context.Context) error {
	read, restore := r.lineSource()
	defer restore()
	// Lines are read one at a time, on request, by a goroutine (so ctx can end the wait):
	// never ahead of the reply being printed, which needs the terminal in cooked mode.
	want := make(chan struct{})
	lines := make(chan lineResult, 1)
	defer close(want)
	go func() {
		for range want {
			l, err := read()
			lines <- lineResult{l, err}
			if err != nil {
				return
			}
		}
	}()
	out := r.cmd.OutOrStdout()
	for {
		want <- struct{}{}
		var line string
		select {
		case <-ctx.Done():
			restore()
			fmt.Fprintln(out)
			return nil
		case l := <-lines:
			if l.err != nil {
				if r.prompt {
					fmt.Fprintln(out) // Ctrl-D leaves the cursor after the prompt
				}
				if errors.Is(l.err, io.EOF) {
					return nil
				}
				return fmt.Errorf("read input: %w", l.err)
			}
			line = strings.TrimSpace(l.line)
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
		r.sent++
		if err := r.send(ctx, line); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			r.failed++
			if !errors.Is(err, errReplyFailed) {
				fmt.Fprintln(r.cmd.ErrOrStderr(), errorLine(err))
			}
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

// errReplyFailed is send's error for a reply that ended failed or cancelled: the renderer has
// said so on stderr already.
var errReplyFailed = errors.New("the reply failed")

// send posts one message and streams the reply.
func (r *repl) send(ctx context.Context, msg string) error {
	rd := newRenderer(r.cmd, r.o.env, r.cmd.OutOrStdout())
	open := func(ctx context.Context) (*client.Stream, error) { return r.c.ChatStream(ctx, r.session, msg) }
	out, err := rd.follow(ctx, r.c, open, "")
	if err != nil {
		return err
	}
	switch out.status {
	case "completed":
		return nil
	case "awaiting_approval":
		return errors.New("the reply waits for approval; the session stays busy until it is approved or denied")
	}
	return errReplyFailed
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
