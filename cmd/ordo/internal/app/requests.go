package app

import "github.com/ordo-run/ordo/memory"

// requester is the run store's channel for pause and cancel requests
// between processes (nil when the store has none). The engine's store is
// wrapped for metrics, which hides it, so it is handed over on its own.
func requester(st memory.Checkpointer) memory.Requester {
	rq, _ := st.(memory.Requester)
	return rq
}
