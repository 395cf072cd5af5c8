package contracts

import "time"

// Turn is one earlier run of a conversation (a session): what was asked
// and what was answered.
type Turn struct {
	RunID  string    `json:"run_id"`
	Goal   string    `json:"goal"`
	Answer string    `json:"answer,omitempty"`
	Status RunStatus `json:"status"`
	At     time.Time `json:"at"`
}
