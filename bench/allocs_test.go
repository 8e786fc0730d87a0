package bench

import (
	"bytes"
	"io"
	"net/http"
	goruntime "runtime"
	"testing"
)

// allocsPer sends runs sequential POSTs of body to url and returns what the process (client,
// server and its background work) allocated per request: objects and bytes.
func allocsPer(b *testing.B, url string, body []byte, runs int) (objects, bytesPer float64) {
	b.Helper()
	hc := &http.Client{}
	send := func() {
		resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("POST %s: %s", url, resp.Status)
		}
	}
	for range 50 {
		send() // warm up: connections, caches
	}
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	for range runs {
		send()
	}
	goruntime.ReadMemStats(&m1)
	return float64(m1.Mallocs-m0.Mallocs) / float64(runs), float64(m1.TotalAlloc-m0.TotalAlloc) / float64(runs)
}

// BenchmarkExecuteSyncAllocs counts what one sync POST /agents/{id}/execute allocates (the
// zero-latency simulated model, one `serve` node on PostgreSQL, one caller), beside a bare
// net/http JSON handler. Unlike runs/s, allocations per run barely move when the machine's
// cores are shared, so this is the measure to compare two commits with.
//
//	TEST_DATABASE_URL=postgres://… go test ./bench -run '^$' -bench ExecuteSyncAllocs -benchtime 1x
func BenchmarkExecuteSyncAllocs(b *testing.B) {
	const runs = 300
	body := []byte(`{"input":{"message":"How long does shipping to Canada take?"}}`)
	urls, stop := pgNodes(b, pgSchema(b), 1)
	defer stop()
	bare := bareEcho()
	defer bare.Close()
	bareObjects, bareBytes := allocsPer(b, bare.URL, body, runs)
	var objects, bytesPer float64
	for range b.N {
		objects, bytesPer = allocsPer(b, urls[0], body, runs)
	}
	b.ReportMetric(objects, "allocs/run")
	b.ReportMetric(bytesPer, "B/run")
	b.ReportMetric(objects/bareObjects, "allocs_ratio")
	b.ReportMetric(bytesPer/bareBytes, "bytes_ratio")
}
