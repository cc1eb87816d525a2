-- Hybrid recall's vectors (issue 38), beside the FTS5 rows they embed:
-- one per passage and per record, written at index time only when
-- `[semantic] model` is configured (an index without a model keeps these
-- tables empty). Each is the row's text embedded by that model, quantised
-- to one signed byte per dimension after a little-endian f32 scale
-- (`semantic::quant`). A vector goes with its row: deleting the passage
-- or record deletes it (foreign keys are on in every writer). Which model
-- made them is `meta.semantic_model`.
CREATE TABLE chunk_vectors (
    rowid INTEGER PRIMARY KEY REFERENCES chunks(rowid) ON DELETE CASCADE,
    v     BLOB NOT NULL
) STRICT;

CREATE TABLE record_vectors (
    rowid INTEGER PRIMARY KEY REFERENCES records(rowid) ON DELETE CASCADE,
    v     BLOB NOT NULL
) STRICT;
