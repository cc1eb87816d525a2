-- Extraction state per transcript source: which sessions were distilled
-- into records, which failed and why, and the lease that keeps two
-- concurrent `recall extract` runs from processing the same session.
CREATE TABLE extractions (
    source_id    INTEGER PRIMARY KEY REFERENCES sources(id) ON DELETE CASCADE,
    session_id   TEXT NOT NULL,
    state        TEXT NOT NULL,       -- pending | done | failed | skipped
    reason       TEXT,
    source_hash  TEXT,                -- sources.hash when last extracted
    lease_owner  TEXT,
    lease_until  INTEGER,             -- unix seconds; an expired lease is free
    attempts     INTEGER NOT NULL DEFAULT 0,
    facts        INTEGER NOT NULL DEFAULT 0,
    updated      INTEGER NOT NULL
) STRICT;
