package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal (a *os.File on a TTY); buffers and pipes are not.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// colorsFor says whether to colour what goes to w: only on a terminal, never with NO_COLOR
// set (https://no-color.org: any non-empty value) or TERM=dumb.
func colorsFor(w io.Writer, env Env) bool {
	if v, ok := env("NO_COLOR"); ok && v != "" {
		return false
	}
	if v, _ := env("TERM"); v == "dumb" {
		return false
	}
	return isTerminal(w)
}

// palette wraps text in ANSI styles when enabled. Every style has the same length, so
// columns of styled cells stay aligned.
type palette struct{ on bool }

func (p palette) wrap(code, s string) string {
	if !p.on {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p palette) bold(s string) string  { return p.wrap("1", s) }
func (p palette) dim(s string) string   { return p.wrap("2", s) }
func (p palette) red(s string) string   { return p.wrap("31", s) }
func (p palette) green(s string) string { return p.wrap("32", s) }
func (p palette) cyan(s string) string  { return p.wrap("36", s) }

// status colours an execution status: green done, red failed, yellow waiting on a human.
func (p palette) status(s string) string {
	switch s {
	case "completed", "approved":
		return p.wrap("32", s)
	case "failed", "cancelled", "rejected", "denied":
		return p.wrap("31", s)
	case "awaiting_approval", "pending":
		return p.wrap("33", s)
	}
	return p.wrap("39", s)
}

// table prints rows under a header, columns padded to their widest plain cell; style (if
// not nil) styles a cell after padding is worked out, so colours never break alignment.
type table struct {
	header []string
	rows   [][]string
	style  func(col int, cell string) string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer, p palette) error {
	widths := make([]int, len(t.header))
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
		}
	}
	var b strings.Builder
	line := func(r []string, head bool) {
		for i, c := range r {
			if i >= len(widths) {
				break
			}
			pad := ""
			if i < len(r)-1 {
				pad = strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2)
			}
			switch {
			case head:
				c = p.bold(c)
			case t.style != nil:
				c = t.style(i, c)
			}
			b.WriteString(c + pad)
		}
		b.WriteString("\n")
	}
	line(t.header, true)
	for _, r := range t.rows {
		line(r, false)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fields prints name-value pairs, one a line, names aligned.
func fields(w io.Writer, p palette, kv ...[2]string) error {
	width := 0
	for _, f := range kv {
		width = max(width, len(f[0]))
	}
	var b strings.Builder
	for _, f := range kv {
		b.WriteString(p.bold(f[0]) + strings.Repeat(" ", width-len(f[0])+2) + f[1] + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

func fmtTimePtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return fmtTime(*t)
}

func fmtStr(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}

func fmtMS(ms *int64) string {
	if ms == nil {
		return "-"
	}
	return (time.Duration(*ms) * time.Millisecond).String()
}

func fmtCost(c float64) string { return fmt.Sprintf("$%.6f", c) }

// spinner turns on stderr while a run has produced nothing to show, and only on a terminal.
// Everything else written to stderr while it may be spinning goes through it, so a line is
// never printed over the spinner.
type spinner struct {
	w     io.Writer
	on    bool // stderr is a terminal
	mu    sync.Mutex
	label string
	shown bool
	stop  chan struct{}
	done  chan struct{}
}

func newSpinner(w io.Writer) *spinner { return &spinner{w: w, on: isTerminal(w)} }

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Start shows the spinner with a label until Stop (a no-op off a terminal or when spinning).
func (s *spinner) Start(label string) {
	if !s.on {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.label = label
	if s.stop != nil {
		return
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.spin(s.stop, s.done)
}

func (s *spinner) spin(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		s.mu.Lock()
		fmt.Fprintf(s.w, "\r\x1b[K%s %s", spinFrames[i%len(spinFrames)], s.label)
		s.shown = true
		s.mu.Unlock()
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// Stop removes the spinner and waits until it has stopped drawing.
func (s *spinner) Stop() {
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop, s.done = nil, nil
	s.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
	s.mu.Lock()
	s.clear()
	s.mu.Unlock()
}

func (s *spinner) clear() {
	if s.shown {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.shown = false
	}
}

// Println writes a line to stderr, above the spinner when it is spinning.
func (s *spinner) Println(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	fmt.Fprintln(s.w, line)
}
