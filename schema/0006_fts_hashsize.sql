-- A larger FTS5 in-memory hash for the tables that batch jobs fill.
--
-- FTS5 buffers new postings in a hash and writes them out as a new index
-- segment when the hash passes `hashsize` bytes (default 1 MB) or the
-- transaction commits; small segments are then merged again and again.
-- `recall index` commits about once a second, so with the default a
-- second of transcripts became about 20 small segments and most of the
-- writer's FTS5 time went to merging them. At 32 MB a batch is usually
-- written as one segment: indexing 100 MB of transcripts took 1.28 s
-- against 1.08 s (median of 6, scripts/bench-index.sh corpus).
--
-- The cost is memory, and only while a writer inserts: up to 32 MB more
-- per table written in one transaction. Readers are not affected, and a
-- hook that indexes one transcript fills a small part of it.
-- Records are written a few at a time and keep the default.
INSERT INTO chunks_fts(chunks_fts, rank) VALUES('hashsize', 33554432);
INSERT INTO tickets_fts(tickets_fts, rank) VALUES('hashsize', 33554432);
