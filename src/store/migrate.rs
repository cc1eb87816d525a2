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
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Bring `conn` up to [`SCHEMA_VERSION`]. Returns the version found before.
/// The caller has already checked that the found version is not newer.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) fn migrate(conn: &mut Connection) -> Result<i64> {
    let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found >= SCHEMA_VERSION {
        return Ok(found);
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Re-read inside the write lock: another process may have migrated.
    let current: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
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
}
