-- recall team memory on PostgreSQL, version 6: the server signs each row.
--
-- Version 5 had recall's push name the author (recall_person(), or the
-- login), but a member writing rows by hand, with psql and their own
-- login, could name anyone, and every host then showed that person as the
-- record's author. A trigger now sets `author` on every row written, to
-- the person the login is mapped to (or the login), whatever the statement
-- says. `host` stays the sender's word: it names a machine, which the
-- server cannot check.
--
-- The function reads recall_person() with its schema named and pg_temp
-- last, as recall_person() reads its table, so no one can put a function
-- of their own in its place.

DO $$
BEGIN
    EXECUTE format(
        'CREATE FUNCTION recall_sign() RETURNS trigger
             LANGUAGE plpgsql
             SET search_path = pg_catalog, pg_temp
         AS %L',
        format('BEGIN
                    NEW.author := coalesce(%I.recall_person(), session_user::text);
                    RETURN NEW;
                END', current_schema()));
END
$$;

CREATE TRIGGER recall_sign BEFORE INSERT OR UPDATE ON recall_entries
    FOR EACH ROW EXECUTE FUNCTION recall_sign();
