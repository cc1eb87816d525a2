-- recall index schema, version 1.
--
-- The index is derived data: records come from Markdown files, chunks from
-- transcripts, tickets from ticket files. Any index.db can be deleted and
-- rebuilt with `recall reindex --full` plus `recall index`.
--
-- Tokenizer: `unicode61 remove_diacritics 2` on every FTS table.
--   * Query tokens are always double-quoted phrases, so `parse_config_file`,
--     `src/config/loader.rs` and `std::io::Error` match as phrases while their
--     parts still match alone (`tokenchars '_'` would lose the part matches).
--   * CamelCase is never split by unicode61, so at index time we write the
--     parts of every identifier (`HashMap` -> `hash map`) plus the English
--     (Snowball) stem of every word into the `aux` column. Queries search the
--     exact columns and, with a lower bm25 weight, `aux`. That gives stemming
--     without `porter` on the main columns (porter doubled OR-query latency).
--   * detail=full (the default): detail=column/none made ranked OR queries 7-8x
--     slower.
-- Each FTS table stores its own content (snippet() needs it); metadata lives in
-- a plain table sharing the rowid, so filters run outside the MATCH subquery.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

-- Records --------------------------------------------------------------------

CREATE TABLE records (
    rowid       INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    key         TEXT NOT NULL UNIQUE,
    category    TEXT NOT NULL,
    source      TEXT NOT NULL,
    path        TEXT NOT NULL UNIQUE,     -- relative to the scope directory
    created     INTEGER NOT NULL,         -- unix seconds
    updated     INTEGER NOT NULL,
    pinned      INTEGER NOT NULL DEFAULT 0,
    importance  INTEGER NOT NULL DEFAULT 50,
    status      TEXT NOT NULL DEFAULT 'active',
    temporal    TEXT NOT NULL DEFAULT 'permanent',
    expires     INTEGER,
    confidence  REAL NOT NULL DEFAULT 1.0,
    file_size   INTEGER NOT NULL,
    file_mtime  INTEGER NOT NULL,         -- nanoseconds since the epoch
    file_hash   TEXT NOT NULL,
    hits        INTEGER NOT NULL DEFAULT 0,
    last_hit    INTEGER
) STRICT;
CREATE INDEX records_category ON records(category, status);

CREATE VIRTUAL TABLE records_fts USING fts5(
    key, body, tags, aux,
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Record directories' mtimes, for the cheap "did anything change" check.
CREATE TABLE record_dirs (
    path  TEXT PRIMARY KEY,
    mtime INTEGER NOT NULL
) STRICT;

-- Sources (transcripts and ticket files) ---------------------------------------

CREATE TABLE sources (
    id             INTEGER PRIMARY KEY,
    path           TEXT NOT NULL UNIQUE,
    kind           TEXT NOT NULL,          -- session | ticket
    format         TEXT NOT NULL,
    size           INTEGER NOT NULL,
    mtime          INTEGER NOT NULL,
    hash           TEXT NOT NULL,          -- of the first `offset` bytes
    parser_version INTEGER NOT NULL,
    offset         INTEGER NOT NULL,       -- bytes consumed (append-only JSONL)
    messages       INTEGER NOT NULL DEFAULT 0,
    state          TEXT,                   -- parser continuation state (JSON)
    indexed_at     INTEGER NOT NULL
) STRICT;

-- One row per transcript file. Session ids are not unique across files (a
-- stem-based id, the same session copied to two places), so the source is
-- the key.
CREATE TABLE sessions (
    source_id    INTEGER PRIMARY KEY REFERENCES sources(id) ON DELETE CASCADE,
    session_id   TEXT NOT NULL,
    launcher     TEXT NOT NULL,
    parent_id    TEXT,                     -- parent session of a subagent file
    title        TEXT,
    cwd          TEXT,
    git_branch   TEXT,
    first_ts     INTEGER,
    last_ts      INTEGER,
    messages     INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX sessions_id ON sessions(session_id);

CREATE TABLE chunks (
    rowid        INTEGER PRIMARY KEY,
    source_id    INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    session_id   TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    msg_first    INTEGER NOT NULL,
    msg_last     INTEGER NOT NULL,
    message_ids  TEXT NOT NULL,            -- JSON array of native ids
    spans        TEXT NOT NULL,            -- JSON [[start, end, msg, id], ...] of message blocks
    roles        TEXT NOT NULL,            -- JSON array
    speakers     TEXT NOT NULL,            -- JSON array
    first_ts     INTEGER,
    last_ts      INTEGER,
    launcher     TEXT NOT NULL,
    cwd          TEXT,
    git_branch   TEXT,
    hits         INTEGER NOT NULL DEFAULT 0,
    last_hit     INTEGER
) STRICT;
CREATE INDEX chunks_source ON chunks(source_id);
CREATE INDEX chunks_session ON chunks(session_id, seq);

CREATE VIRTUAL TABLE chunks_fts USING fts5(
    title, body, aux,
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TABLE tickets (
    rowid       INTEGER PRIMARY KEY,
    source_id   INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    ticket_id   TEXT NOT NULL,
    part        INTEGER NOT NULL,
    status      TEXT,
    labels      TEXT NOT NULL DEFAULT '[]', -- JSON array
    created     INTEGER,
    updated     INTEGER,
    hits        INTEGER NOT NULL DEFAULT 0,
    last_hit    INTEGER
) STRICT;
CREATE INDEX tickets_source ON tickets(source_id);
CREATE INDEX tickets_id ON tickets(ticket_id, part);

CREATE VIRTUAL TABLE tickets_fts USING fts5(
    title, body, labels, aux,
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Deleted rows are really removed from the FTS index, so a deleted or
-- redacted record leaves no tokens behind.
INSERT INTO records_fts(records_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO tickets_fts(tickets_fts, rank) VALUES ('secure-delete', 1);
