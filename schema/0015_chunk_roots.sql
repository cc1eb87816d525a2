-- The prompt hook counts, for each of a question's words, the sessions
-- holding it (`recall::evidence`): every passage the word matches is taken
-- to its root session (a subagent's or a compaction's transcript,
-- `<id>/agent-…`, is part of its parent's). Through `chunks`, whose rows are
-- wide (message ids, spans, JSON), each passage costs a page of its own;
-- at 1,000,000 passages the counts took 12 ms of a ticket's hook. These two
-- narrow tables hold the same answer in about 2,500 pages: 5 ms.
--
-- The writer fills them beside each passage (`index::sources`), not a
-- trigger: a statement with a trigger opens a savepoint, and at each one
-- FTS5 writes out the passages it holds in memory (indexing took 1.3x as
-- long). A passage's row goes with it (ON DELETE CASCADE, as its vector's).
--
-- Every root session seen, by a number of its own (kept when its passages
-- go: a count never reads one without passages).
CREATE TABLE root_sessions (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL UNIQUE
) STRICT;

-- Each passage's root session.
CREATE TABLE chunk_roots (
    rowid  INTEGER PRIMARY KEY REFERENCES chunks(rowid) ON DELETE CASCADE,
    root   INTEGER NOT NULL
) STRICT;

INSERT OR IGNORE INTO root_sessions(session_id)
    SELECT DISTINCT CASE WHEN instr(session_id, '/agent-') > 0
        THEN substr(session_id, 1, instr(session_id, '/agent-') - 1) ELSE session_id END
    FROM chunks;

INSERT INTO chunk_roots(rowid, root)
    SELECT c.rowid, r.id FROM chunks c JOIN root_sessions r
    ON r.session_id = CASE WHEN instr(c.session_id, '/agent-') > 0
        THEN substr(c.session_id, 1, instr(c.session_id, '/agent-') - 1) ELSE c.session_id END;
