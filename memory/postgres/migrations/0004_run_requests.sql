-- People's requests to a run's driver (pause, cancel): the driver polls
-- them off the per-step path; deleting a run deletes its requests.
CREATE TABLE IF NOT EXISTS run_requests (
	run_id  text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	kind    text NOT NULL,
	by_user text NOT NULL,
	PRIMARY KEY (run_id, kind)
);
