//! Schema migrations: `schema/NNNN_name.sql`, applied in order against
//! `PRAGMA user_version` inside one write transaction. Append-only: a
//! migration that has landed is never edited.

use rusqlite::Connection;

use crate::error::Result;

/// Every migration, in order. Index `i` moves the schema to version `i + 1`.
pub const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_init", include_str!("../../schema/0001_init.sql")),
    ("0002_vocab", include_str!("../../schema/0002_vocab.sql")),
    (
        "0003_extract",
        include_str!("../../schema/0003_extract.sql"),
    ),
    (
        "0004_term_stats",
        include_str!("../../schema/0004_term_stats.sql"),
    ),
    (
        "0005_term_df",
        include_str!("../../schema/0005_term_df.sql"),
    ),
    (
        "0006_fts_hashsize",
        include_str!("../../schema/0006_fts_hashsize.sql"),
    ),
    ("0007_sync", include_str!("../../schema/0007_sync.sql")),
    (
        "0008_sync_journal",
        include_str!("../../schema/0008_sync_journal.sql"),
    ),
    (
        "0009_session_work",
        include_str!("../../schema/0009_session_work.sql"),
    ),
    (
        "0010_vectors",
        include_str!("../../schema/0010_vectors.sql"),
    ),
    (
        "0011_ticket_vectors",
        include_str!("../../schema/0011_ticket_vectors.sql"),
    ),
    (
        "0012_session_did",
        include_str!("../../schema/0012_session_did.sql"),
    ),
    (
        "0013_vector_epochs",
        include_str!("../../schema/0013_vector_epochs.sql"),
    ),
    (
        "0014_session_roots",
        include_str!("../../schema/0014_session_roots.sql"),
    ),
    (
        "0015_chunk_roots",
        include_str!("../../schema/0015_chunk_roots.sql"),
    ),
    (
        "0016_session_count",
        include_str!("../../schema/0016_session_count.sql"),
    ),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The first schema with `sessions.work` (`0009_session_work.sql`). An
/// older index is read as it is by the hooks, which never migrate, and
/// where it cannot be upgraded (a read-only folder): a session then counts
/// as work when one of its candidates is a tool's output.
pub const SESSION_WORK_SCHEMA: i64 = 9;

/// The first schema with `sessions.did` (`0012_session_did.sql`). An older
/// index read as it is shows every session under its first prompt.
pub const SESSION_DID_SCHEMA: i64 = 12;

/// The first schema whose vectors tables count their changes
/// (`0013_vector_epochs.sql`), so a flat copy of them can be checked.
pub const VECTOR_EPOCHS_SCHEMA: i64 = 13;

/// The first schema with each passage's root session in a narrow table
/// (`0015_chunk_roots.sql`). An older index read as it is counts a word's
/// sessions through `chunks`, the same answer more slowly.
pub const CHUNK_ROOTS_SCHEMA: i64 = 15;

/// The first schema whose writer keeps the number of root sessions
/// (`0016_session_count.sql`). An older index read as it is counts them.
pub const SESSION_COUNT_SCHEMA: i64 = 16;

/// The schema version of the index `conn` reads (one header read).
pub fn schema_version(conn: &Connection) -> Result<i64> {
    Ok(conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
}

/// Bring `conn` up to [`SCHEMA_VERSION`]. Returns the version found before.
/// The caller has already checked that the found version is not newer.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) fn migrate(conn: &mut Connection) -> Result<i64> {
    let found = schema_version(conn)?;
    if found >= SCHEMA_VERSION {
        return Ok(found);
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Re-read inside the write lock: another process may have migrated.
    let current = schema_version(&tx)?;
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate().skip(current.max(0) as usize) {
        tracing::debug!(migration = name, "applying");
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
    }
    tx.commit()?;
    Ok(found)
}

/// An empty index with the current schema, in memory: stands in for a scope
/// that has no `index.db` when a command must not create one (a dry run).
pub fn empty_in_memory() -> Result<Connection> {
    let mut c = Connection::open_in_memory()?;
    migrate(&mut c)?;
    Ok(c)
}

/// Apply every migration to a fresh connection (for other modules' tests).
#[cfg(test)]
pub(crate) fn migrate_for_tests(conn: &mut Connection) {
    migrate(conn).expect("migrations apply to an empty database");
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::OptionalExtension;

    /// A database with the first `n` migrations applied, as an index of
    /// schema `n` was left.
    fn at_version(n: usize) -> Result<Connection> {
        let c = Connection::open_in_memory()?;
        for (i, (_, sql)) in MIGRATIONS.iter().take(n).enumerate() {
            c.execute_batch(sql)?;
            c.pragma_update(None, "user_version", (i + 1) as i64)?;
        }
        Ok(c)
    }

    #[test]
    fn session_work_arrives_with_its_migration() {
        assert_eq!(
            MIGRATIONS[SESSION_WORK_SCHEMA as usize - 1].0,
            "0009_session_work"
        );
    }

    #[test]
    fn all_migrations_apply_to_an_empty_database() -> Result<()> {
        let mut c = Connection::open_in_memory()?;
        assert_eq!(migrate(&mut c)?, 0);
        let v: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0))?;
        assert_eq!(v, SCHEMA_VERSION);
        // Idempotent.
        assert_eq!(migrate(&mut c)?, SCHEMA_VERSION);
        for t in ["records_fts", "chunks_fts", "tickets_fts"] {
            c.execute(
                &format!("INSERT INTO {t}({t}) VALUES('integrity-check')"),
                [],
            )?;
        }
        Ok(())
    }

    /// 0005 moves the counts of `term_stats` (by table, term) into
    /// `term_df` (by term), summing nothing away.
    #[test]
    fn term_counts_survive_the_move_to_one_row_per_term() -> Result<()> {
        let mut c = at_version(4)?;
        c.execute_batch(
            "INSERT INTO term_stats(tbl, term, df) VALUES
               ('records', 'alpha', 3), ('chunks', 'alpha', 7),
               ('tickets', 'beta', 2), ('chunks', 'gamma', 1);",
        )?;
        assert_eq!(migrate(&mut c)?, 4);
        let mut st =
            c.prepare("SELECT term, records, chunks, tickets FROM term_df ORDER BY term")?;
        let rows: Vec<(String, i64, i64, i64)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<rusqlite::Result<_>>()?;
        assert_eq!(
            rows,
            [
                ("alpha".to_string(), 3, 7, 0),
                ("beta".to_string(), 0, 0, 2),
                ("gamma".to_string(), 0, 1, 0),
            ]
        );
        let old: i64 = c.query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'term_stats'",
            [],
            |r| r.get(0),
        )?;
        assert_eq!(old, 0);
        Ok(())
    }

    /// 0009 marks the sessions of an upgraded index that hold a tool's
    /// output as work, and leaves chats alone.
    #[test]
    fn sessions_with_a_tools_output_are_marked_as_work_on_upgrade() -> Result<()> {
        let mut c = at_version(8)?;
        for (id, roles) in [(1, ["user", "assistant"]), (2, ["assistant", "tool"])] {
            c.execute(
                "INSERT INTO sources(id, path, kind, format, size, mtime, hash, parser_version, offset, indexed_at)
                 VALUES(?1, ?2, 'session', 'neutral', 0, 0, '', 1, 0, 0)",
                rusqlite::params![id, format!("s{id}.jsonl")],
            )?;
            c.execute(
                "INSERT INTO sessions(source_id, session_id, launcher) VALUES(?1, ?2, 'neutral')",
                rusqlite::params![id, format!("s{id}")],
            )?;
            for (seq, role) in roles.iter().enumerate() {
                c.execute(
                    "INSERT INTO chunks(source_id, session_id, seq, msg_first, msg_last, message_ids, spans, roles, speakers, launcher)
                     VALUES(?1, ?2, ?3, ?3, ?3, '[]', '[]', ?4, '[\"\"]', 'neutral')",
                    rusqlite::params![id, format!("s{id}"), seq as i64, format!("[\"{role}\"]")],
                )?;
            }
        }
        assert_eq!(migrate(&mut c)?, 8);
        let mut st = c.prepare("SELECT session_id, work FROM sessions ORDER BY source_id")?;
        let rows: Vec<(String, i64)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        assert_eq!(rows, [("s1".to_string(), 0), ("s2".to_string(), 1)]);
        Ok(())
    }

    /// 0015 takes every passage of an upgraded index to its root session
    /// (a subagent's to its parent's); a passage's row goes with it.
    #[test]
    fn passages_know_their_root_session_after_the_upgrade() -> Result<()> {
        let mut c = at_version(14)?;
        c.execute_batch("PRAGMA foreign_keys=OFF;")?;
        for (rowid, session) in [(1, "s1"), (2, "s1/agent-a1"), (3, "s2")] {
            c.execute(
                "INSERT INTO chunks(rowid, source_id, session_id, seq, msg_first, msg_last, message_ids, spans, roles, speakers, launcher)
                 VALUES(?1, 1, ?2, ?1, 0, 0, '[]', '[]', '[]', '[]', 'x')",
                rusqlite::params![rowid, session],
            )?;
        }
        assert_eq!(migrate(&mut c)?, 14);
        let roots = |c: &Connection| -> Result<Vec<(i64, String)>> {
            let mut st = c.prepare(
                "SELECT r.rowid, s.session_id FROM chunk_roots r
                 JOIN root_sessions s ON s.id = r.root ORDER BY r.rowid",
            )?;
            let rows = st
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            Ok(rows)
        };
        let want = |v: &[(i64, &str)]| -> Vec<(i64, String)> {
            v.iter().map(|(r, s)| (*r, s.to_string())).collect()
        };
        assert_eq!(roots(&c)?, want(&[(1, "s1"), (2, "s1"), (3, "s2")]));
        c.execute_batch("PRAGMA foreign_keys=ON; DELETE FROM chunks WHERE rowid = 1;")?;
        assert_eq!(roots(&c)?, want(&[(2, "s1"), (3, "s2")]));
        Ok(())
    }

    /// 0016 counts an upgraded index's root sessions (a subagent's file is
    /// part of its parent's; a session captured twice is one).
    #[test]
    fn the_root_sessions_are_counted_on_the_upgrade() -> Result<()> {
        let mut c = at_version(15)?;
        c.execute_batch("PRAGMA foreign_keys=OFF;")?;
        for (source, session, parent) in [
            (1, "s1", None),
            (2, "s1/agent-a1", Some("s1")),
            (3, "s2", None),
            (4, "s2", None),
        ] {
            c.execute(
                "INSERT INTO sessions(source_id, session_id, launcher, parent_id) VALUES(?1, ?2, 'x', ?3)",
                rusqlite::params![source, session, parent],
            )?;
        }
        assert_eq!(crate::store::stored_root_sessions(&c)?, None);
        assert_eq!(migrate(&mut c)?, 15);
        assert_eq!(crate::store::stored_root_sessions(&c)?, Some(2));
        Ok(())
    }

    /// 0006 gives the session and ticket tables a 32 MB FTS5 hash, on a new
    /// index and on an upgraded one; records keep the default.
    #[test]
    fn batch_tables_get_a_large_fts_hash_and_records_keep_the_default() -> Result<()> {
        let hashsize = |c: &Connection, t: &str| -> Result<Option<i64>> {
            Ok(c.query_row(
                &format!("SELECT v FROM {t}_config WHERE k = 'hashsize'"),
                [],
                |r| r.get(0),
            )
            .optional()?)
        };
        let mut upgraded = at_version(5)?;
        assert_eq!(hashsize(&upgraded, "chunks_fts")?, None);
        assert_eq!(migrate(&mut upgraded)?, 5);
        let mut fresh = Connection::open_in_memory()?;
        migrate(&mut fresh)?;
        for c in [&upgraded, &fresh] {
            assert_eq!(hashsize(c, "chunks_fts")?, Some(32 << 20));
            assert_eq!(hashsize(c, "tickets_fts")?, Some(32 << 20));
            assert_eq!(hashsize(c, "records_fts")?, None);
        }
        Ok(())
    }
}
