package bench

import (
	"database/sql"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time this process has used (user and system): with the server
// in-process, that is the server and the load generator together.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendCPU sums the CPU time of the PostgreSQL backends whose application_name is app, read
// from /proc; ok is false when PostgreSQL runs elsewhere (no backend process is readable).
func backendCPU(b *testing.B, app string) (d time.Duration, ok bool) {
	b.Helper()
	db, err := sql.Open("pgx", os.Getenv("TEST_DATABASE_URL"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT pid FROM pg_stat_activity WHERE application_name = $1", app)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			b.Fatal(err)
		}
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		// Fields after "(comm)": state is the 1st, utime the 12th, stime the 13th, in clock
		// ticks (100 a second on Linux).
		f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
		ut, _ := strconv.Atoi(f[11])
		st, _ := strconv.Atoi(f[12])
		d += time.Duration(ut+st) * 10 * time.Millisecond
		ok = true
	}
	return d, ok
}
