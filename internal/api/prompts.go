package api

// promptRoutes is filled in by its resource file.
func (s *Server) promptRoutes() []route { return nil }
