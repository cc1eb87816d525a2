-- Hybrid recall's flat copies (issue 38). The dense scan compares the
-- question with every stored vector; read through SQLite that costs about
-- 0.35 µs a row (the B-tree walk, not the arithmetic), so it reads a flat
-- copy of a table's vectors instead: `<scope>/vectors/<table>.bin`, written
-- beside the index from the rows (see `recall/flat.rs`). A copy is valid
-- only for the rows it was written from, so each vectors table counts its
-- changes in `meta` (`vectors_epoch_<table>`, bumped by the triggers below
-- on every insert, update and delete, cascades included), and the index has
-- an id of its own (`index_uid`) that a rebuilt index does not share. A
-- copy whose id or count differs from the index's is not read.
INSERT OR REPLACE INTO meta(key, value) VALUES ('index_uid', lower(hex(randomblob(16))));
INSERT OR REPLACE INTO meta(key, value) VALUES
    ('vectors_epoch_chunk_vectors', '0'),
    ('vectors_epoch_record_vectors', '0'),
    ('vectors_epoch_ticket_vectors', '0');

CREATE TRIGGER chunk_vectors_insert AFTER INSERT ON chunk_vectors BEGIN
    UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
    WHERE key = 'vectors_epoch_chunk_vectors';
END;
CREATE TRIGGER chunk_vectors_update AFTER UPDATE ON chunk_vectors BEGIN
    UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
    WHERE key = 'vectors_epoch_chunk_vectors';
END;
CREATE TRIGGER chunk_vectors_delete AFTER DELETE ON chunk_vectors BEGIN
    UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
    WHERE key = 'vectors_epoch_chunk_vectors';
END;

CREATE TRIGGER record_vectors_insert AFTER INSERT ON record_vectors BEGIN
    UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
    WHERE key = 'vectors_epoch_record_vectors';
END;
CREATE TRIGGER record_vectors_update AFTER UPDATE ON record_vectors BEGIN
    UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
    WHERE key = 'vectors_epoch_record_vectors';
END;
CREATE TRIGGER record_vectors_delete AFTER DELETE ON record_vectors BEGIN
    UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
    WHERE key = 'vectors_epoch_record_vectors';
END;

CREATE TRIGGER ticket_vectors_insert AFTER INSERT ON ticket_vectors BEGIN
    UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
    WHERE key = 'vectors_epoch_ticket_vectors';
END;
CREATE TRIGGER ticket_vectors_update AFTER UPDATE ON ticket_vectors BEGIN
    UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
    WHERE key = 'vectors_epoch_ticket_vectors';
END;
CREATE TRIGGER ticket_vectors_delete AFTER DELETE ON ticket_vectors BEGIN
    UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
    WHERE key = 'vectors_epoch_ticket_vectors';
END;
