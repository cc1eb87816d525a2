-- recall team memory on PostgreSQL, version 3: the compaction horizon.
--
-- A tombstone is dropped once every host that reports its progress
-- (recall_hosts) has read past it. A host that cannot report (a read-only
-- role) or did not (offline meanwhile) may not have read it, so each
-- project keeps the highest id of a tombstone ever dropped: a host whose
-- position is below it may have missed a delete, and reconciles with the
-- rows still live (it drops every shared record and source the server no
-- longer has).
--
-- A server upgraded from version 2 may already have dropped tombstones a
-- reader never read, of any project: the row of project '' holds the
-- highest id given out before this version, a floor under every
-- project's horizon, so each host below it reconciles once.

CREATE TABLE recall_horizons (
    project  TEXT PRIMARY KEY,   -- a project, or '' for the upgrade's floor
    horizon  BIGINT NOT NULL
);

INSERT INTO recall_horizons(project, horizon)
SELECT '', CASE WHEN is_called THEN last_value ELSE 0 END FROM recall_order;

-- The roles granted the older tables get the new one, so an upgrade is
-- still one `recall sync --init` by the owner: those that may write
-- recall_hosts may move the horizon, those that may read recall_entries
-- may read it.
DO $$
DECLARE g record;
BEGIN
    FOR g IN
        SELECT DISTINCT a.grantee::regrole::text AS role, a.privilege_type AS privilege,
               c.relname AS tbl
        FROM pg_class c, aclexplode(c.relacl) a
        WHERE c.oid IN ('recall_hosts'::regclass, 'recall_entries'::regclass)
          AND a.grantee <> 0 AND a.grantee <> c.relowner
    LOOP
        IF g.tbl = 'recall_hosts' AND g.privilege = 'INSERT' THEN
            EXECUTE format('GRANT SELECT, INSERT, UPDATE ON recall_horizons TO %s', g.role);
        ELSIF g.tbl = 'recall_entries' AND g.privilege = 'SELECT' THEN
            EXECUTE format('GRANT SELECT ON recall_horizons TO %s', g.role);
        END IF;
    END LOOP;
END
$$;
