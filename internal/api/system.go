package api

import (
	"net/http"
	"time"
)

var started = time.Now()

// Health is the body of GET /health.
type Health struct {
	Status        string  `json:"status" enum:"ok"`
	Mode          string  `json:"mode" enum:"server,emulator"`
	Version       string  `json:"version"`
	Database      string  `json:"database" enum:"sqlite,postgres"`
	Models        string  `json:"models" enum:"real,simulated" doc:"real: model calls go to the providers of each workspace's credentials (versions with config.simulation excepted); simulated: every call is answered by the simulated model."`
	UptimeSeconds float64 `json:"uptime_seconds"`
}

func (s *Server) systemRoutes() []route {
	return []route{
		{method: "GET", path: "/health", op: "getHealth", tag: "System", summary: "Liveness and readiness",
			resp: Health{}, errs: []int{http.StatusServiceUnavailable}, h: s.health},
		{method: "GET", path: "/openapi.json", op: "getOpenAPI", tag: "System", summary: "This OpenAPI 3.1 document", raw: true, resp: map[string]any{}, h: s.openAPI},
		{method: "POST", path: "/admin/reset", op: "adminReset", tag: "Emulator", emulator: true, summary: "Clear all data and reload seed and fixtures",
			resp: map[string]int{}, h: s.adminReset},
		{method: "GET", path: "/admin/store/stats", op: "adminStoreStats", tag: "Emulator", emulator: true, summary: "Count of stored rows per resource",
			resp: map[string]int{}, h: s.adminStats},
	}
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	mode := "server"
	if s.cfg.Emulator {
		mode = "emulator"
	}
	if err := s.store.Ping(r.Context()); err != nil {
		s.log.Error("health: database unreachable", "error", err)
		return errorf(http.StatusServiceUnavailable, "the database is unreachable")
	}
	writeData(w, http.StatusOK, Health{Status: "ok", Mode: mode, Version: s.cfg.Version, Database: string(s.store.Dialect()), Models: s.engine.Models(),
		UptimeSeconds: time.Since(started).Seconds()})
	return nil
}

func (s *Server) adminReset(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Reset == nil {
		return errorf(http.StatusNotFound, "reset is not available")
	}
	if err := s.cfg.Reset(r.Context()); err != nil {
		return err
	}
	return s.adminStats(w, r)
}

func (s *Server) adminStats(w http.ResponseWriter, r *http.Request) error {
	stats, err := s.store.StoreStats(r.Context())
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, stats)
	return nil
}
