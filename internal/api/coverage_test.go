package api

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// covered records every concrete request (method and path) whose response a table test
// validated against the OpenAPI document.
var covered sync.Map

// TestMain checks, after a full run, that every operation of the route table had at least one
// real response validated against the document: the contract test covers every route.
func TestMain(m *testing.M) {
	code := m.Run()
	dbs.Drop() // before goleak looks: the copies are dropped in the background
	if code == 0 && flag.Lookup("test.run").Value.String() == "" {
		if missing := uncoveredOperations(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "contract coverage: no validated response for:\n  %s\n", strings.Join(missing, "\n  "))
			code = 1
		}
	}
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

func uncoveredOperations() []string {
	var routes []route
	s := &Server{cfg: Config{Emulator: true}}
	routes = s.routeTable()
	var missing []string
	for _, rt := range routes {
		if rt.raw && rt.resp == nil {
			continue
		}
		pat := routeRegexp(rt.method, rt.path)
		found := false
		covered.Range(func(k, _ any) bool {
			if pat.MatchString(k.(string)) {
				found = true
				return false
			}
			return true
		})
		if !found {
			missing = append(missing, rt.pattern())
		}
	}
	sort.Strings(missing)
	return missing
}

func TestCoverageMatcher(t *testing.T) {
	pat := routeRegexp("GET", "/api/v1/agents/{id}/versions")
	if !pat.MatchString("GET /api/v1/agents/abc/versions") || pat.MatchString("GET /api/v1/agents/abc/versions/x") {
		t.Fatal("route matcher is wrong")
	}
}

func routeRegexp(method, path string) *regexp.Regexp {
	quoted := regexp.QuoteMeta(pathParamRe.ReplaceAllString(path, "\x00"))
	return regexp.MustCompile("^" + method + " " + strings.ReplaceAll(quoted, "\x00", `[^/]+`) + "$")
}
