//! Team memory: local SQLite stays the read path; a PostgreSQL server only
//! stores and orders the changes hosts send it.
//!
//! ```text
//! record files ─► index.db ──push──► recall_entries (one row per project, kind, key;
//!                    ▲                 id = the server's order)
//!                    └────pull──────────┘  applied through RecordStore / the index writer
//! ```
//!
//! - [`remote`]: the URL, credentials (URL, `PGPASSWORD`, `~/.pgpass`), TLS,
//!   and messages for every way the server can fail.
//! - [`pgschema`]: versioned server migrations (`schema/pg/`).
//! - [`identity`]: this host's id and a project's team identity.
//! - [`local`]: what a scope's index has exchanged (cursor and hashes).
//! - [`exchange`]: pull for one scope, and what pull and push share.
//! - `pulled`: pulled records applied a batch at a time (or one by one).
//! - `pulled_sources`: pulled sources, several server pages to a
//!   transaction.
//! - [`push`]: push for one scope, and settling a push a killed sync left.
//! - [`horizon`]: tombstones dropped once read, and the reconcile of a
//!   host that may have missed one.
//!
//! Nothing here is on a read path: `recall query`, the hooks, `serve` and
//! `mcp` never wait on the network. The façade ([`crate::Memory::sync`])
//! decides which scopes to sync; front ends only call it.

pub mod exchange;
pub mod horizon;
pub mod identity;
pub mod local;
pub mod pgschema;
mod pulled;
mod pulled_sources;
pub mod push;
pub mod remote;

use std::time::Duration;

use postgres::Client;
use rusqlite::Connection;

pub use exchange::{Me, ScopeReport, Target};
pub use remote::RemoteUrl;

use crate::error::Result;
use remote::describe;

/// Connect and check the server's schema.
pub fn connect(url: &RemoteUrl, timeout: Duration) -> Result<Client> {
    let mut client = url.connect(timeout)?;
    pgschema::check(&mut client, url)?;
    Ok(client)
}

/// Pull, then (unless `pull_only`) push one scope, then note this host's
/// progress on the server and drop the tombstones every host has seen.
pub fn sync_scope(
    client: &mut Client,
    url: &RemoteUrl,
    conn: &mut Connection,
    target: &Target,
    me: &Me,
    pull_only: bool,
) -> Result<ScopeReport> {
    let mut report = ScopeReport {
        project: target.project.clone(),
        ..ScopeReport::default()
    };
    if local::bind_project(conn, &target.project)? {
        tracing::info!(
            project = target.project,
            "this scope's server name changed; syncing it from the start"
        );
    }
    let t0 = std::time::Instant::now();
    push::settle_push(client, url, conn, target, me)?;
    exchange::pull(client, url, conn, target, me, &mut report)?;
    report.pull_ms = t0.elapsed().as_millis() as u64;
    if pull_only {
        local::set_last_sync(conn, me.now)?;
        return Ok(report);
    }
    let t0 = std::time::Instant::now();
    push::push(client, url, conn, target, me, &mut report)?;
    report.push_ms = t0.elapsed().as_millis() as u64;
    // A name this home was renamed from, with nothing left under it, is
    // no host any more: its progress row would hold back the tombstones.
    for gone in local::drop_spent_names(conn, me.host)? {
        client
            .execute(
                "DELETE FROM recall_hosts WHERE project=$1 AND host=$2",
                &[&target.project, &gone],
            )
            .map_err(|e| describe(&e, url))?;
    }
    // A sync that moved nothing and read nothing new has nothing to note:
    // the no-op sync (the common case of --watch and the hooks) then costs
    // the server no write.
    let idle = report.pulled == 0 && report.pushed == 0;
    if !idle || local::noted(conn)? != Some(report.cursor) {
        note_progress(client, url, &target.project, me.host, report.cursor)?;
        local::set_noted(conn, report.cursor)?;
    }
    local::set_last_sync(conn, me.now)?;
    Ok(report)
}

/// Record how far this host has read, and drop each tombstone every other
/// host that reports its progress has read past (the host that sent it has
/// seen it); see [`horizon`] for the hosts that cannot report.
fn note_progress(
    client: &mut Client,
    url: &RemoteUrl,
    project: &str,
    host: &str,
    seen: i64,
) -> Result<()> {
    let err = |e: postgres::Error| describe(&e, url);
    client
        .execute(
            "INSERT INTO recall_hosts(project, host, seen_id, last_sync) VALUES($1, $2, $3, now())
             ON CONFLICT (project, host) DO UPDATE
             SET seen_id = greatest(recall_hosts.seen_id, excluded.seen_id), last_sync = now()",
            &[&project, &host, &seen],
        )
        .map_err(err)?;
    horizon::compact(client, url, project)
}

/// What the server knows of one project.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RemoteStatus {
    /// Hosts that have synced this project.
    pub hosts: i64,
    /// Records and sources stored (tombstones not counted).
    pub entries: i64,
    /// Rows this host has not pulled yet.
    pub behind: i64,
}

/// Ask the server about `project`, as seen from a host at `cursor` whose
/// names are `mine` (see [`local::former_names`]).
pub fn remote_status(
    client: &mut Client,
    url: &RemoteUrl,
    project: &str,
    mine: &[String],
    cursor: i64,
    never_synced: bool,
) -> Result<RemoteStatus> {
    let row = client
        .query_one(
            "SELECT (SELECT count(*) FROM recall_hosts WHERE project=$1),
                    (SELECT count(*) FROM recall_entries WHERE project=$1 AND NOT deleted),
                    (SELECT count(*) FROM recall_entries WHERE project=$1 AND id > $2
                        AND (host <> ALL($3) OR ($4 AND kind = 'record')))",
            &[&project, &cursor, &mine, &never_synced],
        )
        .map_err(|e| describe(&e, url))?;
    Ok(RemoteStatus {
        hosts: row.get(0),
        entries: row.get(1),
        behind: row.get(2),
    })
}
