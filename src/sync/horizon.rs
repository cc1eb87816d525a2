//! Tombstones and the compaction horizon: how a delete reaches every host,
//! read-only ones included.
//!
//! A tombstone is dropped once every host that reports its progress
//! (`recall_hosts`) has read past it; the sender need not. A host that
//! cannot report (a read-only role) or was offline meanwhile may never
//! read it, so each project keeps its horizon (`recall_horizons`): the
//! highest id of a tombstone dropped. After a pull, a host whose position
//! before the pull was below the horizon may have missed a delete, and
//! reconciles: it drops every shared record and source it holds that the
//! server no longer has live. Read after the pull, the horizon also covers
//! a tombstone dropped while the pull ran. The horizon a scope reconciled
//! against is kept (`meta` key `sync.horizon`), so each compaction costs a
//! host one look at the live keys, not one per sync.

use std::collections::HashSet;

use postgres::Client;
use rusqlite::Connection;

use super::exchange::{Me, ScopeReport, Target};
use super::local::{self, Kind};
use super::remote::{describe, RemoteUrl};
use crate::error::{Error, Result};
use crate::index::{remove_source_at, RecordStore};
use crate::store::{begin_in_turn, TermDeltas};

/// Drop the tombstones of `project` that every host reporting progress,
/// other than each tombstone's sender, has read past, and move the
/// project's horizon past them, in one statement. A role without the
/// grants on `recall_horizons` leaves them for another host to drop.
pub fn compact(client: &mut Client, url: &RemoteUrl, project: &str) -> Result<()> {
    let done = client.execute(
        "WITH gone AS (
             DELETE FROM recall_entries e WHERE e.project = $1 AND e.deleted
             AND NOT EXISTS (SELECT 1 FROM recall_hosts h
                             WHERE h.project = $1 AND h.host <> e.host AND h.seen_id < e.id)
             RETURNING e.id)
         INSERT INTO recall_horizons(project, horizon)
         SELECT $1, max(id) FROM gone HAVING count(*) > 0
         ON CONFLICT (project) DO UPDATE
         SET horizon = greatest(recall_horizons.horizon, excluded.horizon)",
        &[&project],
    );
    match done {
        Ok(_) => Ok(()),
        Err(e) if e.as_db_error().is_some_and(|d| d.code().code() == "42501") => {
            tracing::warn!(
                "tombstones of {project} are kept: this role may not write recall_horizons on {}; grant it SELECT, INSERT, UPDATE ON recall_horizons (docs/team-memory.md)",
                url.masked()
            );
            Ok(())
        }
        Err(e) => Err(describe(&e, url)),
    }
}

/// After a pull that started at `before`: reconcile when a tombstone above
/// `before` may have been dropped unread. Returns the records and sources
/// dropped.
pub fn catch_up(
    client: &mut Client,
    url: &RemoteUrl,
    conn: &mut Connection,
    t: &Target,
    me: &Me,
    before: i64,
    report: &mut ScopeReport,
) -> Result<usize> {
    let horizon = horizon(client, url, &t.project)?;
    let seen = local::horizon(conn)?.unwrap_or(0);
    if horizon <= before.max(seen) {
        return Ok(0);
    }
    let live = live_keys(client, url, &t.project)?;
    let dropped = reconcile(conn, t, me, &live, report)?;
    let tx = begin_in_turn(conn)?;
    local::set_horizon(&tx, horizon)?;
    tx.commit()?;
    tracing::debug!(horizon, dropped, "reconciled with the live rows");
    Ok(dropped)
}

fn horizon(client: &mut Client, url: &RemoteUrl, project: &str) -> Result<i64> {
    let row = client
        .query_opt(
            "SELECT max(horizon) FROM recall_horizons WHERE project IN ($1, '')",
            &[&project],
        )
        .map_err(|e| match e.as_db_error() {
            Some(d) if d.code().code() == "42501" => Error::Sync(format!(
                "sync server {} said: {} (SQLSTATE 42501); grant this role SELECT ON recall_horizons (the owner: see docs/team-memory.md)",
                url.masked(),
                d.message()
            )),
            _ => describe(&e, url),
        })?;
    Ok(row.and_then(|r| r.get::<_, Option<i64>>(0)).unwrap_or(0))
}

/// The (kind, key) of every row of `project` that is not a tombstone.
fn live_keys(
    client: &mut Client,
    url: &RemoteUrl,
    project: &str,
) -> Result<HashSet<(String, String)>> {
    let rows = client
        .query(
            "SELECT kind, key FROM recall_entries WHERE project=$1 AND NOT deleted",
            &[&project],
        )
        .map_err(|e| describe(&e, url))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Drop what this scope exchanged and the server no longer has live: a
/// record unchanged since (one changed here is a change to push, as when
/// a tombstone is pulled), and a source another host sent.
fn reconcile(
    conn: &mut Connection,
    t: &Target,
    me: &Me,
    live: &HashSet<(String, String)>,
    report: &mut ScopeReport,
) -> Result<usize> {
    let exchanged: Vec<(String, String, String)> = conn
        .prepare("SELECT kind, key, hash FROM sync_state ORDER BY kind, key")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let gone = exchanged
        .into_iter()
        .filter(|(kind, key, _)| !live.contains(&(kind.clone(), key.clone())));
    let own = format!("{}:", me.host);
    let (mut records, mut sources) = (Vec::new(), Vec::new());
    for (kind, key, hash) in gone {
        match Kind::parse(&kind) {
            Some(Kind::Record) => records.push((key, hash)),
            Some(Kind::Source) if !key.starts_with(&own) => sources.push(key),
            _ => {}
        }
    }
    let mut dropped = 0;
    for (key, hash) in records {
        let _lock = t.dir.lock_records()?;
        let here = local::record_by_key(conn, &key)?;
        if here.as_ref().is_some_and(|h| h.hash != hash) {
            continue;
        }
        if let Some(h) = here {
            RecordStore {
                dir: t.dir,
                conn,
                limits: me.limits,
                gate: None,
            }
            .delete(&h.id)?;
            dropped += 1;
        }
        let tx = begin_in_turn(conn)?;
        local::set_state(&tx, Kind::Record, &key, None)?;
        tx.commit()?;
    }
    if !sources.is_empty() {
        let tx = begin_in_turn(conn)?;
        let mut stats = TermDeltas::default();
        for key in &sources {
            if remove_source_at(&tx, &format!("sync://{key}"), &mut stats)? {
                dropped += 1;
            }
            local::set_state(&tx, Kind::Source, key, None)?;
        }
        stats.flush(&tx)?;
        tx.commit()?;
    }
    report.dropped += dropped;
    Ok(dropped)
}
