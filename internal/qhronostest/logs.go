package qhronostest

// Logs is everything the server wrote to stderr so far (its log).
func (s *Server) Logs() string { return s.stderr.String() }
