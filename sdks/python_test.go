package sdks_test

import (
	"os/exec"
	"testing"
)

const pythonHint = "install Python 3.9 or later with httpx and pytest (`apt-get install -y python3-httpx python3-pytest`; .ci/run does)"

// python finds an interpreter that has httpx and pytest: the one on PATH, else Debian's.
func python(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"python3", "/usr/bin/python3"} {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if exec.Command(p, "-c", "import sys, httpx, pytest; assert sys.version_info >= (3, 9)").Run() == nil {
			return p
		}
	}
	missing(t, "no python3 with httpx and pytest: "+pythonHint)
	return ""
}

// TestPythonSDK runs sdks/python/tests with pytest against one emulator and against serve
// (SQLite, simulated models), side by side (pytest writes nothing into the tree).
func TestPythonSDK(t *testing.T) {
	t.Parallel()
	py := python(t)
	t.Run("Emulator", func(t *testing.T) {
		t.Parallel()
		env := append(startEmulator(t).env(), "PYTHONPATH=.", "PYTHONDONTWRITEBYTECODE=1")
		t.Log(run(t, "python", env, py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"))
	})
	t.Run("Serve", func(t *testing.T) {
		t.Parallel()
		env := append(startServe(t).env(), "PYTHONPATH=.", "PYTHONDONTWRITEBYTECODE=1")
		t.Log(run(t, "python", env, py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"))
	})
}
