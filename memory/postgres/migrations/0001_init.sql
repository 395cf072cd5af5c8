-- Runs: one row per run, holding the latest checkpoint and its lease.
CREATE TABLE runs (
    id             text PRIMARY KEY,
    user_id        text NOT NULL DEFAULT '',
    goal           text NOT NULL,
    status         text NOT NULL,
    final          boolean NOT NULL,          -- status is final: prunable, never claimed
    seq            bigint NOT NULL CHECK (seq >= 1),
    format_version integer NOT NULL,          -- of run
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    lease_owner    text,
    lease_until    timestamptz,
    step_count     integer NOT NULL DEFAULT 0, -- rows in step_records
    decision_count integer NOT NULL DEFAULT 0, -- rows in decisions
    run            jsonb NOT NULL             -- the latest checkpoint
);
CREATE INDEX runs_updated ON runs (updated_at DESC, id DESC);
CREATE INDEX runs_user ON runs (user_id, updated_at DESC);
CREATE INDEX runs_status ON runs (status, updated_at DESC);
CREATE INDEX runs_lease ON runs (lease_until) WHERE lease_owner IS NOT NULL AND NOT final;

-- Every checkpoint ever written, for audit and replay.
CREATE TABLE checkpoints (
    run_id         text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq            bigint NOT NULL,
    format_version integer NOT NULL,
    run            jsonb NOT NULL,
    written_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq)
);

-- Step records, append-only: one row per record, as first checkpointed.
CREATE TABLE step_records (
    run_id    text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx       integer NOT NULL,           -- position in Run.Steps
    seq       bigint NOT NULL,            -- checkpoint that first held it
    action_id text NOT NULL,
    tool      text NOT NULL,
    attempt   integer NOT NULL,
    status    text NOT NULL,
    record    jsonb NOT NULL,
    PRIMARY KEY (run_id, idx)
);

-- Interrupts and the decisions that ended them (approvals), append-only.
CREATE TABLE decisions (
    run_id     text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx        integer NOT NULL,          -- position in Run.Decisions
    seq        bigint NOT NULL,
    interrupt  text NOT NULL,             -- interrupt kind
    decision   text NOT NULL,             -- decision kind
    decided_by text NOT NULL,
    decided_at timestamptz,
    record     jsonb NOT NULL,
    PRIMARY KEY (run_id, idx)
);
