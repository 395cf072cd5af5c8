-- A run may be a turn of its user's session (contracts.Run.SessionID):
-- the engine lists a session's last turns once per planning.
ALTER TABLE runs ADD COLUMN session_id text NOT NULL DEFAULT '';
CREATE INDEX runs_session ON runs (user_id, session_id, updated_at DESC) WHERE session_id <> '';
