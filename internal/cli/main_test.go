package cli_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/cli"
	"github.com/agentplane/agentplane/internal/store/storetest"
)

// built is closed once TestMain's build of the agentplane binary has ended, for the tests
// that drive it in a pseudo-terminal (agentplaneBinary): the build runs while the other
// tests do.
var (
	built       = make(chan struct{})
	binary      string
	buildOutput []byte
	buildErr    error
)

// dbs is the migrated SQLite file that serveTarget starts from.
var dbs = storetest.NewTemplate()

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentplane-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "agentplane")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "github.com/agentplane/agentplane/cmd/agentplane")
	go func() {
		defer close(built)
		buildOutput, buildErr = exec.Command(filepath.Join(goruntime.GOROOT(), "bin", "go"), args...).CombinedOutput()
	}()
	code := m.Run()
	<-built
	os.RemoveAll(dir)
	dbs.Drop()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
			goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
			goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// agentplaneBinary waits for TestMain's build and returns the binary's path.
func agentplaneBinary(t *testing.T) string {
	t.Helper()
	<-built
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOutput)
	}
	return binary
}

// target is a server the client commands talk to: its URL and an API key ("" for the emulator).
type target struct {
	name, URL, Key string
	C              *client.Client
	dataDir        string // serve's --data-dir
}

// emulatorTarget runs the emulator in-process behind httptest.
func emulatorTarget(t *testing.T) *target {
	t.Helper()
	emu, err := cli.NewEmulator(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)), cli.EmulatorConfig{Seed: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(emu.Handler)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		emu.Close()
	})
	return &target{name: "emulator", URL: srv.URL, C: client.New(srv.URL)}
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// serveTarget runs `agentplane serve` in-process on SQLite in a temporary directory, with
// simulated models, and returns it with the bootstrap key it printed. The directory holds a
// migrated empty database already (dbs.SQLiteFile names its copy agentplane.db, the file serve
// opens in DATA_DIR): a first start on an empty directory is TestServeSaysWhereToGo's.
func serveTarget(t *testing.T) *target {
	t.Helper()
	env := map[string]string{"HOST": "127.0.0.1", "PORT": "0", "DATA_DIR": filepath.Dir(dbs.SQLiteFile(t)), "LOG_LEVEL": "warn",
		"SHUTDOWN_TIMEOUT": "200ms", "MODELS": "simulated"}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := cli.RunEnv(ctx, []string{"serve"}, lookup(env), strings.NewReader(""), io.Discard, pw)
		pw.Close()
		done <- code
	}()
	var (
		mu   sync.Mutex
		logs strings.Builder
	)
	found := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		key, keyNext, sent := "", false, false
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			logs.WriteString(line + "\n")
			mu.Unlock()
			if keyNext {
				key = line
			}
			keyNext = strings.Contains(line, "it will not be shown again")
			if m := listening.FindStringSubmatch(line); m != nil && !sent {
				found <- [2]string{m[1], key}
				sent = true
			}
		}
		close(found)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				mu.Lock()
				t.Errorf("serve exited with %d:\n%s", code, logs.String())
				mu.Unlock()
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop within 15 s")
		}
	})
	select {
	case f, ok := <-found:
		if !ok {
			t.Fatalf("serve exited before listening:\n%s", logs.String())
		}
		if !strings.HasPrefix(f[1], "ap_") {
			t.Fatalf("serve printed no bootstrap key: %q", f[1])
		}
		return &target{name: "serve", URL: f[0], Key: f[1], C: client.New(f[0], client.WithAPIKey(f[1])), dataDir: env["DATA_DIR"]}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not listen within 30 s")
		return nil
	}
}

func lookup(env map[string]string) cli.Env {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// result is what one command did.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// agentplane runs the CLI in-process with env as its whole environment and stdin as input.
func agentplane(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr strings.Builder
	code := cli.RunEnv(ctx, args, lookup(env), strings.NewReader(stdin), &stdout, &stderr)
	return result{code, stdout.String(), stderr.String()}
}

// want fails the test unless r exited with code.
func want(t *testing.T, r result, code int, what string) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: want exit %d, got %s", what, code, r)
	}
	return r
}
