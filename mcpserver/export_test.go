package mcpserver

import "time"

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

// SetStreamWriteTimeout shortens how long a run's event stream waits for
// a client to take a write.
func SetStreamWriteTimeout(s *Server, d time.Duration) { s.streamWriteTimeout = d }

// ParkedJobs is how many engine calls wait between the rounds of a
// sampling request, so tests can see a job end when its client is gone.
func ParkedJobs(s *Server) int {
	s.jobs.mu.Lock()
	defer s.jobs.mu.Unlock()
	return len(s.jobs.jobs)
}

// SetSessionIdleTTL shortens how long an unused HTTP session lives; call
// it before Handler.
func SetSessionIdleTTL(s *Server, d time.Duration) { s.sessionIdleTTL = d }
