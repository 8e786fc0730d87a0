package api

// credentialRoutes is filled in by its resource file.
func (s *Server) credentialRoutes() []route { return nil }
