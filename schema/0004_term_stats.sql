-- Exact term statistics for query planning, kept by the single writer.
--
-- recall plans a query by each term's document frequency: how many rows of
-- a table contain it. Counting that with fts5vocab walks the term's whole
-- doclist (10-20 ms per common word at 1,000,000 rows), so the writer keeps
-- the counts itself, in the same transaction as the FTS rows they describe:
-- a planner look-up is one b-tree probe per term.
--
-- Terms are lowercase `unicode61` words (recall's `text::words`) of every
-- column of a row, `aux` included, counted once per row. For ASCII text
-- this is exactly what FTS5 indexes; unicode61's diacritic folding
-- (`café` = `cafe`) is not applied, so for such words `df` is a lower bound.
--
-- `table_stats` holds each table's row count and largest rowid when the
-- counts were last written. A table whose rows exist but has no
-- `table_stats` row (an index from before this migration) or whose largest
-- rowid differs has stale counts: the planner then falls back to counting
-- with FTS5, and the next write job recounts (`recall doctor` reports it).
CREATE TABLE term_stats (
    tbl   TEXT NOT NULL,      -- records | chunks | tickets
    term  TEXT NOT NULL,
    df    INTEGER NOT NULL,
    PRIMARY KEY (tbl, term)
) STRICT, WITHOUT ROWID;

CREATE TABLE table_stats (
    tbl       TEXT PRIMARY KEY,
    docs      INTEGER NOT NULL,
    max_rowid INTEGER NOT NULL
) STRICT;

-- Recall adds a hit's neighbouring messages after ranking; they are found
-- by their source and message index.
CREATE INDEX chunks_message ON chunks(source_id, msg_first);
