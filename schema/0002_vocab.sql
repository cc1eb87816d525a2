-- Term statistics for query planning. recall selects and weights query terms
-- by their document frequency in each table (fts5vocab 'row': one row per
-- term with the number of documents containing it), which bounds the cost
-- of long OR queries and drops terms that match nearly everything.
CREATE VIRTUAL TABLE records_vocab USING fts5vocab(records_fts, 'row');
CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_fts, 'row');
CREATE VIRTUAL TABLE tickets_vocab USING fts5vocab(tickets_fts, 'row');
