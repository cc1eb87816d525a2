-- recall team memory on PostgreSQL, version 4: who wrote a record.
--
-- `source` is a record's frontmatter `source` as its sender read it:
-- 'manual' (a person), 'agent' or 'auto' (extraction); NULL for sources
-- and tombstones. A push never replaces a person's record with a version
-- that is not a person's (the upsert skips it), so no host receives it;
-- the host that sent it takes the person's version in the same sync.
-- A person's delete, or an agent's, still replaces it.

ALTER TABLE recall_entries ADD COLUMN source TEXT;

UPDATE recall_entries
SET source = substring(body from '\nsource: *[''"]?([a-z]+)')
WHERE kind = 'record' AND NOT deleted;
