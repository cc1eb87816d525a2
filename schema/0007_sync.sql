-- Team memory: what this index has exchanged with a PostgreSQL remote.
--
-- The index stays derived. Sync only needs to know, per scope, which
-- version of each record and each source it last sent or applied, so a
-- changed record (however it changed: `record add`, a hand edit, the REST
-- API) is found by comparing hashes, and a vanished one becomes a tombstone.
-- The last server id applied lives in `meta` (`sync.cursor`), written in
-- the transaction that applies the change. A rebuilt index starts empty and
-- the next sync pulls everything again.

CREATE TABLE sync_state (
    kind  TEXT NOT NULL,          -- record | source
    key   TEXT NOT NULL,          -- record key, or '<host>:<path>' of a source
    hash  TEXT NOT NULL,          -- local file/source hash last exchanged
    PRIMARY KEY (kind, key)
) STRICT, WITHOUT ROWID;

-- Where a source came from: NULL for this host's own transcripts and
-- tickets, else the host id of the teammate's machine it was pulled from.
-- Pulled sources have no file here, so `recall index --prune` skips them.
ALTER TABLE sources ADD COLUMN host TEXT;

-- The same for records: the host a pulled record came from (its
-- frontmatter's `origin.host`), so lists show it without reading files.
ALTER TABLE records ADD COLUMN host TEXT;
