package api

// guardrailRoutes is filled in by its resource file.
func (s *Server) guardrailRoutes() []route { return nil }
