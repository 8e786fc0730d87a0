package api

// memoryRoutes is filled in by its resource file.
func (s *Server) memoryRoutes() []route { return nil }
