package mcpserver

// SubscriptionCount is how many resource subscriptions s holds, across
// sessions, so tests can see them end with their session.
func SubscriptionCount(s *Server) int {
	b := s.subs
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, uris := range b.bySession {
		n += len(uris)
	}
	return n
}
