package mcpserver

// SubscriptionCount is how many resource subscriptions s holds, across
// sessions, so tests can see them end with their session.
func SubscriptionCount(s *Server) int { return s.subs.count() }
