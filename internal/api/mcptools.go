package api

// mcpToolRoutes is filled in by its resource file.
func (s *Server) mcpToolRoutes() []route { return nil }
