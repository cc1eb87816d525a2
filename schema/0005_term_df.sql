-- Term statistics by term: one row per word with its document frequency in
-- every FTS table, so the planner finds a word's counts for all tables with
-- one b-tree probe. `term_stats` (0004) was keyed by (table, term): the
-- same word's counts sat in two places of the tree, and a query paid two
-- probes (two page reads, mostly) per word. At 1,000,000 passages and
-- 100,000 records that was 2.2 ms of a 26 ms query.
--
-- Counting rules are those of 0004: lowercase `unicode61` words of every
-- column, `aux` included, once per row. `table_stats` is unchanged and
-- still says whether a table's counts are current.
CREATE TABLE term_df (
    term     TEXT PRIMARY KEY,
    records  INTEGER NOT NULL DEFAULT 0,
    chunks   INTEGER NOT NULL DEFAULT 0,
    tickets  INTEGER NOT NULL DEFAULT 0
) STRICT, WITHOUT ROWID;

INSERT INTO term_df(term, records, chunks, tickets)
SELECT term,
       sum(CASE tbl WHEN 'records' THEN df ELSE 0 END),
       sum(CASE tbl WHEN 'chunks' THEN df ELSE 0 END),
       sum(CASE tbl WHEN 'tickets' THEN df ELSE 0 END)
FROM term_stats GROUP BY term;

DROP TABLE term_stats;
