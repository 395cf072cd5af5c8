// Package einobench measures Ordo's orchestration overhead per step against
// CloudWeGo Eino's compose graphs in one benchmark run. It is a module of
// its own so that Ordo does not depend on Eino; `make bench-eino` runs it.
package einobench
