-- The prompt hook weighs each word by how few of the project's sessions
-- hold it, so it first counts the sessions (`recall::evidence`):
-- `count(DISTINCT session_id) FROM sessions WHERE parent_id IS NULL`. Without
-- an index that scans every session row and sorts the ids, 15-25 ms at
-- 23,000 sessions (1,000,000 passages); over this partial index, which holds
-- exactly those ids in order, it reads the index alone, about 3 ms.
CREATE INDEX sessions_roots ON sessions(session_id) WHERE parent_id IS NULL;
