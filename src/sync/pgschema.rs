//! The PostgreSQL schema: versioned files in `schema/pg/`, applied in order
//! by `recall sync --init`, and checked on every connect.
//!
//! The version lives in `recall_schema`. A server older than this binary
//! is upgraded only by `--init` (a plain sync says to run it); a server
//! newer than this binary is an error, never a guess.

use postgres::Client;

use super::remote::{describe, RemoteUrl};
use crate::error::{Error, Result};

/// Every migration, in order; index `i` moves the schema to version `i + 1`.
pub const PG_MIGRATIONS: &[(&str, &str)] = &[
    ("0001_init", include_str!("../../schema/pg/0001_init.sql")),
    (
        "0002_push_receipts",
        include_str!("../../schema/pg/0002_push_receipts.sql"),
    ),
    (
        "0003_compaction_horizon",
        include_str!("../../schema/pg/0003_compaction_horizon.sql"),
    ),
    (
        "0004_record_source",
        include_str!("../../schema/pg/0004_record_source.sql"),
    ),
    (
        "0005_people",
        include_str!("../../schema/pg/0005_people.sql"),
    ),
    (
        "0006_signed_rows",
        include_str!("../../schema/pg/0006_signed_rows.sql"),
    ),
];

/// The schema version this build reads and writes.
pub const PG_SCHEMA_VERSION: i32 = PG_MIGRATIONS.len() as i32;

/// A constant key for the advisory lock migrations take, so two hosts
/// running `--init` at once apply each file once.
const MIGRATION_LOCK: i64 = 0x7265_6361_6c6c; // "recall"

/// The version the server holds (0: no recall tables yet).
pub fn version(client: &mut Client, url: &RemoteUrl) -> Result<i32> {
    let exists: bool = client
        .query_one("SELECT to_regclass('recall_schema') IS NOT NULL", &[])
        .map_err(|e| describe(&e, url))?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let row = client
        .query_opt("SELECT max(version) FROM recall_schema", &[])
        .map_err(|e| describe(&e, url))?;
    Ok(row.and_then(|r| r.get::<_, Option<i32>>(0)).unwrap_or(0))
}

/// Check that the server's schema is the one this binary speaks.
pub fn check(client: &mut Client, url: &RemoteUrl) -> Result<()> {
    match version(client, url)? {
        v if v == PG_SCHEMA_VERSION => Ok(()),
        0 => Err(Error::Sync(format!(
            "the sync server {} has no recall tables yet; run `recall sync --init {}` once (a role that may create tables)",
            url.masked(),
            url.masked()
        ))),
        v if v > PG_SCHEMA_VERSION => Err(too_new(v, url)),
        v => Err(Error::Sync(format!(
            "the sync server {} has recall schema {v}, older than this recall ({PG_SCHEMA_VERSION}); the role that owns the recall tables (the one that first ran `recall sync --init` there) must run `recall sync --init` once to upgrade it",
            url.masked()
        ))),
    }
}

fn too_new(v: i32, url: &RemoteUrl) -> Error {
    Error::Sync(format!(
        "the sync server {} has recall schema {v}, newer than this recall supports ({PG_SCHEMA_VERSION}); upgrade recall on this host",
        url.masked()
    ))
}

/// Whether this role may push: write the entries and its progress, and
/// take ids. A read-only role (CI agents) may only pull.
pub fn can_push(client: &mut Client, url: &RemoteUrl) -> Result<bool> {
    Ok(client
        .query_one(
            "SELECT has_table_privilege('recall_entries', 'INSERT')
                AND has_table_privilege('recall_entries', 'UPDATE')
                AND has_table_privilege('recall_hosts', 'INSERT')
                AND has_table_privilege('recall_hosts', 'UPDATE')
                AND has_sequence_privilege('recall_order', 'USAGE')",
            &[],
        )
        .map_err(|e| describe(&e, url))?
        .get(0))
}

/// Who a connection is: its database login, and the person the owner
/// mapped it to (`recall_people`), if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Who {
    pub login: String,
    pub person: Option<String>,
}

/// Ask the server who this connection is.
pub fn who(client: &mut Client, url: &RemoteUrl) -> Result<Who> {
    let row = client
        .query_one("SELECT session_user::text, recall_person()", &[])
        .map_err(|e| describe(&e, url))?;
    Ok(Who {
        login: row.get(0),
        person: row.get(1),
    })
}

/// Create or upgrade the schema. Returns (version before, version after).
pub fn migrate(client: &mut Client, url: &RemoteUrl) -> Result<(i32, i32)> {
    // Up to date: nothing to create, so a role without CREATE (a read-only
    // CI role) can run `--init` too.
    let current = version(client, url)?;
    if current == PG_SCHEMA_VERSION {
        return Ok((current, current));
    }
    if current > PG_SCHEMA_VERSION {
        return Err(too_new(current, url));
    }
    // An upgrade a member cannot make (only the tables' owner may alter
    // them) says who can, not that the role is read-only; so does a
    // database with no recall tables a member may not create (the owner
    // has not run `--init` yet, or the URL names another database).
    let err = |e: postgres::Error| {
        let denied = e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE);
        match (current, denied) {
            (0, true) => Error::Sync(format!(
                "the database at {} has no recall tables, and this login may not create them: the team's owner role runs `recall sync --init` there first (docs/team-memory.md, \"Roles for a team\"), or the URL names the wrong database",
                url.masked()
            )),
            (_, true) => Error::Sync(format!(
                "the sync server {} has recall schema {current}, older than this recall ({PG_SCHEMA_VERSION}), and this login may not upgrade it: the role that owns the recall tables (the one that first ran `recall sync --init` there) must run `recall sync --init` once",
                url.masked()
            )),
            (_, false) => describe(&e, url),
        }
    };
    let mut tx = client.transaction().map_err(err)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(err)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS recall_schema (
             version  INTEGER PRIMARY KEY,
             applied  TIMESTAMPTZ NOT NULL DEFAULT now()
         )",
    )
    .map_err(err)?;
    let found: i32 = tx
        .query_one("SELECT coalesce(max(version), 0) FROM recall_schema", &[])
        .map_err(err)?
        .get(0);
    if found > PG_SCHEMA_VERSION {
        return Err(too_new(found, url));
    }
    for (i, (name, sql)) in PG_MIGRATIONS.iter().enumerate().skip(found as usize) {
        tracing::info!(migration = name, "applying to the sync server");
        tx.batch_execute(sql).map_err(err)?;
        tx.execute(
            "INSERT INTO recall_schema(version) VALUES($1)",
            &[&(i as i32 + 1)],
        )
        .map_err(err)?;
    }
    tx.commit().map_err(err)?;
    Ok((found, PG_SCHEMA_VERSION))
}
