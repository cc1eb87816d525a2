-- Hybrid recall's vectors for ticket parts (issue 38), beside
-- `chunk_vectors` and `record_vectors` (0010): one per part, its title and
-- body embedded by `[semantic] model`, in the same quantised form. Written
-- only when a model is configured; a vector goes with its part.
CREATE TABLE ticket_vectors (
    rowid INTEGER PRIMARY KEY REFERENCES tickets(rowid) ON DELETE CASCADE,
    v     BLOB NOT NULL
) STRICT;
