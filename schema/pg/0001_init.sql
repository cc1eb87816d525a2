-- recall team memory on PostgreSQL, version 1.
--
-- PostgreSQL only stores and orders what hosts send; every read of memory
-- stays in each host's local SQLite index. One row per (project, kind, key)
-- holds the newest version of a record or a source: a newer version (or a
-- tombstone) replaces the row, so superseded and deleted text does not stay
-- on the server. `id` is the server's order: taken from `recall_order`
-- while the project's advisory lock is held, so ids commit in increasing
-- order and a host that pulled up to id N never misses a row below N.

CREATE TABLE recall_entries (
    project  TEXT NOT NULL,          -- team identity ('github.com/acme/app') or 'user:<name>'
    kind     TEXT NOT NULL CHECK (kind IN ('record', 'source')),
    key      TEXT NOT NULL,          -- record key, or '<host>:<path>' of a source
    id       BIGINT NOT NULL,
    host     TEXT NOT NULL,          -- the host that sent this version
    author   TEXT,                   -- the person or agent, where known
    hash     TEXT NOT NULL,          -- the sender's content hash ('' for a tombstone)
    deleted  BOOLEAN NOT NULL DEFAULT false,
    body     TEXT,                   -- record Markdown or source JSON; NULL when deleted
    changed  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (project, kind, key)
);
CREATE UNIQUE INDEX recall_entries_order ON recall_entries (project, id);

CREATE SEQUENCE recall_order;

-- Each host's progress per project: tombstones below every host's
-- `seen_id` are compacted away, and `recall sync --status` counts hosts.
CREATE TABLE recall_hosts (
    project    TEXT NOT NULL,
    host       TEXT NOT NULL,
    seen_id    BIGINT NOT NULL DEFAULT 0,
    last_sync  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (project, host)
);
