-- Team memory: what a sync is in the middle of, so a sync killed anywhere
-- does not take its own half-done work for an edit made on this host.
--
-- sync_pulling: a pulled record's new file hash, noted before its file is
-- written and dropped in the transaction that notes the exchange
-- (`sync_state`). A sync killed in between leaves a file this host did not
-- change: the next sync finds its hash here and takes it as exchanged,
-- instead of pushing it back over newer versions from other hosts.
--
-- sync_pushing: the batch being pushed, noted with a fresh token (`meta`
-- key `sync.push_token`) before the server transaction, which stores the
-- same token as this host's receipt (`recall_hosts.push_token`). A sync
-- killed after the server committed and before this index noted it finds
-- its token on the server and takes the batch as sent; without that, the
-- next sync would send the batch again, after whatever other hosts sent in
-- between, and replace it.

CREATE TABLE sync_pulling (
    key   TEXT PRIMARY KEY,       -- record key
    hash  TEXT NOT NULL           -- the file hash the pull writes
) STRICT, WITHOUT ROWID;

CREATE TABLE sync_pushing (
    kind  TEXT NOT NULL,          -- record | source
    key   TEXT NOT NULL,
    hash  TEXT,                   -- the local hash sent; NULL for a deletion
    PRIMARY KEY (kind, key)
) STRICT, WITHOUT ROWID;
