-- recall team memory on PostgreSQL, version 5: each person's scope is theirs.
--
-- A person's user scope is the project 'user:<person>'. Which person a
-- database login is comes from the owner's mapping (recall_people), never
-- from the host ($USER or the config): a login no person is mapped to (a
-- shared CI or service login) has no user scope, and two people who share
-- a $USER each have their own. Row-level security lets a login see and
-- write the rows of team projects and of its own person's scope only, so
-- no member can read or write another person's; the owner and superusers
-- are not bound by it. The push names a version's author by the person
-- (or the login) too.
--
-- recall_person() reads the mapping with the owner's rights (members get
-- no grant on recall_people, so they cannot map themselves), for the
-- session's login; its table is named with its schema and pg_temp comes
-- last, so no one can put a table of their own in its place.

CREATE TABLE recall_people (
    login   TEXT PRIMARY KEY,    -- a database login (session_user)
    person  TEXT NOT NULL        -- whose it is: their scope is 'user:<person>'
);

DO $$
BEGIN
    EXECUTE format(
        'CREATE FUNCTION recall_person() RETURNS TEXT
             LANGUAGE sql STABLE SECURITY DEFINER
             SET search_path = pg_catalog, pg_temp
         AS %L',
        format('SELECT person FROM %I.recall_people WHERE login = session_user',
               current_schema()));
END
$$;

ALTER TABLE recall_entries ENABLE ROW LEVEL SECURITY;
CREATE POLICY recall_teams ON recall_entries USING (project NOT LIKE 'user:%');
CREATE POLICY recall_own_scope ON recall_entries
    USING (project = 'user:' || (SELECT recall_person()));

ALTER TABLE recall_hosts ENABLE ROW LEVEL SECURITY;
CREATE POLICY recall_teams ON recall_hosts USING (project NOT LIKE 'user:%');
CREATE POLICY recall_own_scope ON recall_hosts
    USING (project = 'user:' || (SELECT recall_person()));
