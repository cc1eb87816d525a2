-- recall team memory on PostgreSQL, version 2: push receipts.
--
-- Each push transaction also stores a fresh token as its host's receipt.
-- A host killed after the server committed a push and before its own index
-- noted it reads the receipt on its next sync and knows the push is in, so
-- it does not send the same versions again over newer ones. Roles granted
-- INSERT and UPDATE on recall_hosts (see docs/team-memory.md) can write
-- the new column with no new grant.

ALTER TABLE recall_hosts ADD COLUMN push_token TEXT;
