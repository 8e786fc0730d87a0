package api

// dataSourceRoutes is filled in by its resource file.
func (s *Server) dataSourceRoutes() []route { return nil }
