package cli_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agentplane/agentplane/client"
)

// term is the built binary running in a pseudo-terminal: stdin, stdout and stderr are all
// the terminal, as when a person types the command.
type term struct {
	t    *testing.T
	cmd  *exec.Cmd
	f    *os.File
	mu   sync.Mutex
	out  strings.Builder
	read chan struct{} // closed when the terminal has nothing more to read
}

func startTerm(t *testing.T, env map[string]string, args ...string) *term {
	t.Helper()
	cmd := exec.Command(agentplaneBinary(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TERM=xterm-256color"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatalf("start %v in a pseudo-terminal: %v", args, err)
	}
	tm := &term{t: t, cmd: cmd, f: f, read: make(chan struct{})}
	go func() {
		defer close(tm.read)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		f.Close()
		<-tm.read
	})
	return tm
}

func (tm *term) output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

// waitFor waits until the terminal has shown s (after byte offset from) and returns the
// offset just past it.
func (tm *term) waitFor(s string, from int) int {
	tm.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out := tm.output()
		if from <= len(out) {
			if i := strings.Index(out[from:], s); i >= 0 {
				return from + i + len(s)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	tm.t.Fatalf("the terminal did not show %q; it shows:\n%q", s, tm.output())
	return 0
}

func (tm *term) typeLine(s string) {
	tm.t.Helper()
	if _, err := tm.f.Write([]byte(s + "\r")); err != nil {
		tm.t.Fatal(err)
	}
}

// exit waits for the command to end and returns its status.
func (tm *term) exit() int {
	tm.t.Helper()
	done := make(chan error, 1)
	go func() { done <- tm.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		tm.cmd.Process.Kill()
		<-done
		tm.t.Fatalf("the command did not exit; the terminal shows:\n%q", tm.output())
	}
	// What it wrote last may still be in the terminal: read to the end (EIO once it is gone).
	select {
	case <-tm.read:
	case <-time.After(10 * time.Second):
		tm.t.Fatal("the terminal did not close after the command exited")
	}
	return tm.cmd.ProcessState.ExitCode()
}

// slowAgent makes an agent whose simulated model takes delay per streamed event, so a reply
// is still being written while the first words are on screen.
func slowAgent(t *testing.T, c *client.Client, name string, delay int) *client.Agent {
	t.Helper()
	a, err := c.AgentCreate(context.Background(), client.AgentCreateRequest{Name: name, Type: "simple",
		Config: client.AgentConfig{Model: "gpt-4o-mini", SystemPrompt: "You help.", Simulation: client.Simulation{LatencyMs: client.Ptr[int64](int64(delay))}}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestChatInTerminal types into `agentplane chat` in a pseudo-terminal: a message, whose reply
// streams back, /history, up-arrow to send it again, then Ctrl-D.
func TestChatInTerminal(t *testing.T) {
	t.Parallel()
	emu := emulatorTarget(t)
	a := slowAgent(t, emu.C, "terminal chat", 60)
	cfg := filepath.Join(t.TempDir(), "config.json")
	tm := startTerm(t, map[string]string{"AGENTPLANE_URL": emu.URL, "AGENTPLANE_CONFIG": cfg}, "chat", "terminal chat")
	at := tm.waitFor("you> ", 0)
	if !strings.Contains(tm.output(), "\x1b[1myou> ") {
		t.Fatalf("the prompt is not bold on a terminal: %q", tm.output())
	}
	tm.typeLine("hello from a terminal")
	// The reply streams in before its run has ended.
	at = tm.waitFor("Following my brief", at)
	sessions, err := emu.C.ChatSessionList(context.Background(), client.ListChatSessionsParams{AgentID: a.ID})
	if err != nil || len(sessions.Data) != 1 || sessions.Data[0].ActiveExecutionID == nil {
		t.Fatalf("the reply is on screen but no run is active: %+v %v", sessions, err)
	}
	x, err := emu.C.ExecutionGet(context.Background(), *sessions.Data[0].ActiveExecutionID)
	if err != nil || x.Status != "running" {
		t.Fatalf("the first words are on screen; the run is %+v %v", x, err)
	}
	at = tm.waitFor("completed", at)
	at = tm.waitFor("you> ", at)
	msgs, err := emu.C.ChatMessageList(context.Background(), sessions.Data[0].ID, client.ListChatMessagesParams{})
	if err != nil || len(msgs.Data) != 2 {
		t.Fatalf("messages: %+v %v", msgs, err)
	}
	// The terminal turns \n into \r\n.
	if screen := strings.ReplaceAll(tm.output(), "\r\n", "\n"); !strings.Contains(screen, msgs.Data[1].Content) {
		t.Fatalf("the reply %q is not on screen:\n%q", msgs.Data[1].Content, screen)
	}
	tm.typeLine("/history")
	at = tm.waitFor("1  hello from a terminal", at)
	at = tm.waitFor("you> ", at)
	// Up-arrow recalls the last message (not /history); Enter sends it again.
	tm.f.Write([]byte("\x1b[A"))
	at = tm.waitFor("hello from a terminal", at)
	tm.typeLine("")
	at = tm.waitFor("completed", at)
	tm.waitFor("you> ", at)
	msgs, err = emu.C.ChatMessageList(context.Background(), sessions.Data[0].ID, client.ListChatMessagesParams{})
	if err != nil || len(msgs.Data) != 4 || msgs.Data[2].Content != "hello from a terminal" {
		t.Fatalf("the recalled message was not sent: %+v %v", msgs, err)
	}
	tm.f.Write([]byte{4}) // Ctrl-D
	if code := tm.exit(); code != 0 {
		t.Fatalf("exit %d after Ctrl-D; the terminal shows:\n%q", code, tm.output())
	}
	if info, err := os.Stat(filepath.Join(filepath.Dir(cfg), "history")); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("history file: %v %v", info, err)
	}
}

// TestRunInTerminal: on a terminal, run shows a spinner and coloured status on stderr while the
// content streams to stdout; with NO_COLOR there are no colours; and /exit leaves a chat.
func TestRunInTerminal(t *testing.T) {
	t.Parallel()
	emu := emulatorTarget(t)
	slowAgent(t, emu.C, "terminal run", 20)
	slowAgent(t, emu.C, "terminal slow", 150)
	env := map[string]string{"AGENTPLANE_URL": emu.URL, "AGENTPLANE_CONFIG": filepath.Join(t.TempDir(), "config.json")}
	tm := startTerm(t, env, "run", "terminal run", "--input", `{"message":"spin"}`)
	if code := tm.exit(); code != 0 {
		t.Fatalf("run exited %d:\n%q", code, tm.output())
	}
	out := tm.output()
	if !strings.Contains(out, "⠋") || !strings.Contains(out, "\x1b[32m✓ completed") || !strings.Contains(out, "Following my brief") {
		t.Fatalf("no spinner, colour or content on the terminal:\n%q", out)
	}

	// Ctrl-C stops following, not the run.
	tm = startTerm(t, env, "run", "terminal slow", "--input", `{"message":"interrupt me"}`)
	tm.waitFor("Following my brief", 0)
	tm.f.Write([]byte{3})
	if code := tm.exit(); code != 130 || !strings.Contains(tm.output(), "goes on") {
		t.Fatalf("Ctrl-C: exit %d:\n%q", code, tm.output())
	}
	l, err := emu.C.ExecutionList(context.Background(), client.ListExecutionsParams{Limit: 1})
	if err != nil || len(l.Data) != 1 || l.Data[0].Input["message"] != "interrupt me" {
		t.Fatalf("the interrupted run: %+v %v", l, err)
	}
	if x, err := emu.C.Wait(context.Background(), l.Data[0].ID, 20*time.Millisecond, false); err != nil || x.Status != "completed" {
		t.Fatalf("the run did not go on after Ctrl-C: %+v %v", x, err)
	}

	tm = startTerm(t, env, "agents", "list")
	if code := tm.exit(); code != 0 || !strings.Contains(tm.output(), "\x1b[1mID") {
		t.Fatalf("agents list on a terminal has no bold header (exit %d):\n%q", code, tm.output())
	}
	env["NO_COLOR"] = "1"
	tm = startTerm(t, env, "run", "terminal run")
	if code := tm.exit(); code != 0 || strings.Contains(tm.output(), "\x1b[3") || strings.Contains(tm.output(), "\x1b[1") {
		t.Fatalf("colours despite NO_COLOR (exit %d):\n%q", code, tm.output())
	}
	tm = startTerm(t, env, "chat", "terminal run")
	tm.waitFor("you> ", 0)
	tm.typeLine("/exit")
	if code := tm.exit(); code != 0 {
		t.Fatalf("/exit: %d", code)
	}
}
