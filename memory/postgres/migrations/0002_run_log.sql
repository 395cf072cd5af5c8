-- Each run becomes an append-only log of entries (contracts.RunDelta) plus
-- its latest snapshot. The runs row keeps the summary, the sequence, the
-- lease, and how many entry bytes were logged since the snapshot; it no
-- longer holds the run, so the row rewritten at every step stays small.

-- The log: entry seq of a run. The first entry of a run (and the only one
-- left after compaction) is a whole run; the others hold what changed.
CREATE TABLE run_log (
    run_id         text NOT NULL,
    seq            bigint NOT NULL,
    format_version integer NOT NULL,  -- of entry; below 1 only whole-run entries around old checkpoints
    whole          boolean NOT NULL,  -- the entry carries the whole run
    entry          bytea NOT NULL,    -- JSON (UTF-8) as Ordo wrote it: no JSONB parse on write or print on read
    PRIMARY KEY (run_id, seq)
);

-- The latest snapshot of each run: the whole run at seq, as a checkpoint.
CREATE TABLE run_snapshots (
    run_id         text PRIMARY KEY,
    seq            bigint NOT NULL,
    format_version integer NOT NULL,  -- of run
    run            bytea NOT NULL     -- JSON (UTF-8)
);

-- Snapshots and whole-run entries over ~2 KB are compressed: lz4 where the
-- server has it (much cheaper than the default pglz on every snapshot).
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        ALTER TABLE run_log ALTER COLUMN entry SET COMPRESSION lz4;
        ALTER TABLE run_snapshots ALTER COLUMN run SET COMPRESSION lz4;
    END IF;
END $$;

-- A run's latest checkpoint becomes its snapshot and a whole-run entry at
-- its sequence, in the format it was written in.
INSERT INTO run_snapshots (run_id, seq, format_version, run)
    SELECT id, seq, format_version, convert_to(run::text, 'UTF8') FROM runs;
INSERT INTO run_log (run_id, seq, format_version, whole, entry)
    SELECT id, seq, format_version, true,
        convert_to(jsonb_build_object('seq', seq, 'updated_at', updated_at, 'run', run)::text, 'UTF8') FROM runs;

ALTER TABLE runs
    ADD COLUMN tail_bytes bigint NOT NULL DEFAULT 0,  -- entry bytes logged after the snapshot
    ADD COLUMN snap_bytes bigint NOT NULL DEFAULT 0;  -- the snapshot's bytes
UPDATE runs SET snap_bytes = octet_length(run::text);
ALTER TABLE runs
    DROP COLUMN run,
    DROP COLUMN format_version,
    DROP COLUMN step_count,
    DROP COLUMN decision_count;

-- Every record the step and decision tables held is in the log (each run's
-- whole-run entry holds them all), so they become views over it, with the
-- same columns: step records and decisions in order, idx their position in
-- the run, seq the entry that first held them (for records from before the
-- log, or folded by compaction, the whole-run entry's).
DROP TABLE step_records;
DROP TABLE decisions;

CREATE FUNCTION ordo_array(v jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS
    $$ SELECT CASE WHEN jsonb_typeof(v) = 'array' THEN v ELSE '[]'::jsonb END $$;

-- The entries a run's current value is folded from (the last whole-run
-- entry and those after it), as JSONB.
CREATE VIEW run_log_current AS
    SELECT l.run_id, l.seq, l.format_version, l.whole, convert_from(l.entry, 'UTF8')::jsonb AS entry FROM run_log l
    WHERE l.seq >= (SELECT max(b.seq) FROM run_log b WHERE b.run_id = l.run_id AND b.whole);

CREATE VIEW step_records AS
    SELECT l.run_id,
        (row_number() OVER (PARTITION BY l.run_id ORDER BY l.seq, r.ord) - 1)::integer AS idx,
        l.seq,
        r.rec->>'action_id' AS action_id,
        r.rec->>'tool' AS tool,
        coalesce((r.rec->>'attempt')::integer, 0) AS attempt,
        r.rec->>'status' AS status,
        r.rec AS record
    FROM run_log_current l
    CROSS JOIN LATERAL jsonb_array_elements(ordo_array(CASE WHEN l.whole
        THEN coalesce(l.entry->'run'->'steps', l.entry->'run'->'history') ELSE l.entry->'steps' END)) WITH ORDINALITY AS r(rec, ord);

CREATE VIEW decisions AS
    SELECT l.run_id,
        (row_number() OVER (PARTITION BY l.run_id ORDER BY l.seq, r.ord) - 1)::integer AS idx,
        l.seq,
        r.rec#>>'{interrupt,kind}' AS interrupt,
        r.rec#>>'{decision,decision}' AS decision,
        coalesce(r.rec#>>'{decision,by}', '') AS decided_by,
        (r.rec->>'at')::timestamptz AS decided_at,
        r.rec AS record
    FROM run_log_current l
    CROSS JOIN LATERAL jsonb_array_elements(ordo_array(CASE WHEN l.whole
        THEN l.entry->'run'->'decisions' ELSE l.entry->'decisions' END)) WITH ORDINALITY AS r(rec, ord);

-- The table of every checkpoint is no longer written (the log replaces
-- it); what it holds stays readable until the runs are pruned.
COMMENT ON TABLE checkpoints IS 'Ordo before schema 0002: every checkpoint written. No longer written; rows go with their runs on prune.';
