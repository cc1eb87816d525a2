-- The prompt hook weighs each word by how few of the project's sessions
-- hold it, so it needs the number of sessions (`recall::evidence`):
-- `count(DISTINCT session_id) FROM sessions WHERE parent_id IS NULL`. Over
-- the partial index of schema 14 that still reads every root session's id:
-- about 4 ms of each prompt at 23,000 sessions, for a number that changes
-- only when the writer changes sessions. So the writer keeps it, as it
-- keeps each table's row count, in `table_stats` under `root_sessions`,
-- with the largest `sessions` rowid when it was counted; a reader that
-- finds that rowid changed (a writer that did not keep it) counts again.
INSERT OR REPLACE INTO table_stats(tbl, docs, max_rowid)
    SELECT 'root_sessions',
        (SELECT count(DISTINCT session_id) FROM sessions WHERE parent_id IS NULL),
        (SELECT coalesce(max(rowid), 0) FROM sessions);
