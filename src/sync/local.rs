//! What one scope's index knows about sync: the last server id applied
//! (`meta` key `sync.cursor`), and per record and source the hash last
//! exchanged (`sync_state`). Changes waiting to push are found by comparing
//! those hashes with what the index holds now, so every way a record can
//! change (a command, a hand edit, the REST API, extraction) is seen.

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::Result;
use crate::store::begin_in_turn;

/// What a change is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Record,
    Source,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Record => "record",
            Kind::Source => "source",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "record" => Some(Kind::Record),
            "source" => Some(Kind::Source),
            _ => None,
        }
    }
}

/// The `meta` key of a push noted and not yet settled (see [`journal_push`]).
const PUSH_TOKEN: &str = "sync.push_token";

/// The `meta` key of the token of this scope's last push the server took:
/// the receipt the server should still hold for this host's name, unless
/// another home pushed under the same name since (see [`receipt`]).
const RECEIPT: &str = "sync.receipt";

/// The `meta` key of the last time another home was seen pushing under
/// this host's name, with that name (`<host>\t<unix seconds>`).
const SHARED_NAME: &str = "sync.shared_name";

/// The `meta` key of the host names this scope pushed under, one per
/// line: the current one, and a former one (the home was renamed, `[sync]
/// host`) while sources it pushed under that name are still to withdraw.
const NAMES: &str = "sync.names";

/// A hash that matches no content: the item must be pushed again (a
/// person's record kept against an agent's version from another host).
pub const MUST_PUSH: &str = "!";

/// The last server id this scope applied.
pub fn cursor(conn: &Connection) -> Result<i64> {
    Ok(meta_i64(conn, "sync.cursor")?.unwrap_or(0))
}

/// When this scope last finished a sync (unix seconds), if ever.
pub fn last_sync(conn: &Connection) -> Result<Option<i64>> {
    Ok(meta_i64(conn, "sync.last")?.filter(|t| *t > 0))
}

fn meta_i64(conn: &Connection, key: &str) -> Result<Option<i64>> {
    Ok(meta(conn, key)?.and_then(|v| v.parse().ok()))
}

fn meta(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT value FROM meta WHERE key=?1")?
        .query_row([key], |r| r.get(0))
        .optional()?)
}

/// Store the cursor, inside the transaction that applied the change.
pub fn set_cursor(conn: &Connection, id: i64) -> Result<()> {
    set_meta(conn, "sync.cursor", id)
}

/// The cursor last reported to the server (`recall_hosts.seen_id`).
pub fn noted(conn: &Connection) -> Result<Option<i64>> {
    meta_i64(conn, "sync.noted")
}

/// Remember the cursor reported to the server.
pub fn set_noted(conn: &Connection, cursor: i64) -> Result<()> {
    set_meta(conn, "sync.noted", cursor)
}

/// The name on the server this scope was last synced under, if ever.
pub fn bound_project(conn: &Connection) -> Result<Option<String>> {
    meta(conn, "sync.project")
}

/// Bind this scope to its name on the server. A scope synced before under
/// another name (a user scope whose person changed, a project shared as
/// another team) starts over: its position and what it exchanged belong
/// to the old name, so it pulls the new one from the start and pushes what
/// the new one lacks. Returns whether it started over.
pub fn bind_project(conn: &mut Connection, project: &str) -> Result<bool> {
    let was = meta(conn, "sync.project")?;
    if was.as_deref() == Some(project) {
        return Ok(false);
    }
    let tx = begin_in_turn(conn)?;
    let reset = was.is_some();
    if reset {
        tx.execute("DELETE FROM sync_state", [])?;
        tx.execute("DELETE FROM sync_pushing", [])?;
        tx.execute(
            "DELETE FROM meta WHERE key IN ('sync.cursor', 'sync.noted', 'sync.horizon', ?1, ?2, ?3, ?4)",
            [PUSH_TOKEN, RECEIPT, SHARED_NAME, NAMES],
        )?;
    }
    set_meta(&tx, "sync.project", project)?;
    tx.commit()?;
    Ok(reset)
}

/// The names other than `host` this scope pushed under and still has
/// sources under: a home renamed since. The next push withdraws those
/// sources from the server (they come again under the new name), and a
/// pull never takes them back as a teammate's.
pub fn former_names(conn: &Connection, host: &str) -> Result<Vec<String>> {
    Ok(meta(conn, NAMES)?
        .unwrap_or_default()
        .lines()
        .filter(|n| !n.is_empty() && *n != host)
        .map(str::to_string)
        .collect())
}

/// Note that this scope pushes under `host`, before the push.
pub fn note_name(conn: &Connection, host: &str) -> Result<()> {
    let mut names = former_names(conn, host)?;
    let before = meta(conn, NAMES)?;
    names.push(host.to_string());
    let now = names.join("\n");
    if before.as_deref() != Some(now.as_str()) {
        set_meta(conn, NAMES, now)?;
    }
    Ok(())
}

/// Forget the former names no source of this host's is left under (the
/// push withdrew them all); returns them.
pub fn drop_spent_names(conn: &Connection, host: &str) -> Result<Vec<String>> {
    let former = former_names(conn, host)?;
    let mut spent = Vec::new();
    for name in &former {
        if own_source_keys(conn, name)?.is_empty() {
            spent.push(name.clone());
        }
    }
    if !spent.is_empty() {
        let kept: Vec<&str> = former
            .iter()
            .filter(|n| !spent.contains(n))
            .map(String::as_str)
            .chain([host])
            .collect();
        set_meta(conn, NAMES, kept.join("\n"))?;
    }
    Ok(spent)
}

/// The keys of sources pushed under `name`: those exchanged under its
/// prefix that are not a teammate's source pulled here (kept at
/// `sync://<key>`; a home that took a teammate's name has them too).
fn own_source_keys(conn: &Connection, name: &str) -> Result<Vec<String>> {
    let mut st = conn.prepare_cached(
        "SELECT x.key FROM sync_state x
         WHERE x.kind='source' AND substr(x.key, 1, length(?1)) = ?1
           AND NOT EXISTS (SELECT 1 FROM sources s WHERE s.path = 'sync://' || x.key)",
    )?;
    let keys = st
        .query_map([format!("{name}:")], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(keys)
}

/// The compaction horizon this scope last reconciled against.
pub fn horizon(conn: &Connection) -> Result<Option<i64>> {
    meta_i64(conn, "sync.horizon")
}

/// Remember the horizon reconciled against.
pub fn set_horizon(conn: &Connection, horizon: i64) -> Result<()> {
    set_meta(conn, "sync.horizon", horizon)
}

/// Note a finished sync.
pub fn set_last_sync(conn: &Connection, now: i64) -> Result<()> {
    set_meta(conn, "sync.last", now)
}

fn set_meta(conn: &Connection, key: &str, v: impl ToString) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO meta(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
    )?
    .execute(params![key, v.to_string()])?;
    Ok(())
}

/// The hash last exchanged for an item.
pub fn state(conn: &Connection, kind: Kind, key: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT hash FROM sync_state WHERE kind=?1 AND key=?2")?
        .query_row(params![kind.as_str(), key], |r| r.get(0))
        .optional()?)
}

/// Record what was exchanged; `None` forgets the item (a tombstone).
pub fn set_state(conn: &Connection, kind: Kind, key: &str, hash: Option<&str>) -> Result<()> {
    match hash {
        Some(h) => conn
            .prepare_cached(
                "INSERT INTO sync_state(kind, key, hash) VALUES(?1, ?2, ?3)
                 ON CONFLICT(kind, key) DO UPDATE SET hash=excluded.hash",
            )?
            .execute(params![kind.as_str(), key, h])?,
        None => conn
            .prepare_cached("DELETE FROM sync_state WHERE kind=?1 AND key=?2")?
            .execute(params![kind.as_str(), key])?,
    };
    Ok(())
}

/// Note the hash a pulled record's file is about to have, before the file
/// is written (see `schema/0008_sync_journal.sql`).
pub fn journal_pull(conn: &Connection, key: &str, hash: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO sync_pulling(key, hash) VALUES(?1, ?2)
         ON CONFLICT(key) DO UPDATE SET hash=excluded.hash",
    )?
    .execute(params![key, hash])?;
    Ok(())
}

/// Drop a pull's note, in the transaction that records its outcome.
pub fn forget_pull(conn: &Connection, key: &str) -> Result<()> {
    conn.prepare_cached("DELETE FROM sync_pulling WHERE key=?1")?
        .execute([key])?;
    Ok(())
}

/// Settle what a killed pull left noted, once the index has read the record
/// files again: a record whose file has the noted hash was written by that
/// pull, so it counts as exchanged; any other note is stale (the pull died
/// before its write, or the file was edited since, which is then a change
/// to push). Returns how many records the pull had written.
pub fn settle_pulls(conn: &mut Connection) -> Result<usize> {
    // The common case, nothing noted, takes no write lock.
    let noted: bool = conn
        .prepare_cached("SELECT EXISTS(SELECT 1 FROM sync_pulling)")?
        .query_row([], |r| r.get(0))?;
    if !noted {
        return Ok(0);
    }
    let tx = begin_in_turn(conn)?;
    let written = tx.execute(
        "INSERT INTO sync_state(kind, key, hash)
         SELECT 'record', p.key, p.hash FROM sync_pulling p
         JOIN records r ON r.key = p.key AND r.file_hash = p.hash WHERE true
         ON CONFLICT(kind, key) DO UPDATE SET hash=excluded.hash",
        [],
    )?;
    tx.execute("DELETE FROM sync_pulling", [])?;
    tx.commit()?;
    Ok(written)
}

/// Note a batch about to be pushed under `token`, before the server
/// transaction that stores the same token as this host's receipt.
pub fn journal_push<'a>(
    conn: &mut Connection,
    token: &str,
    items: impl IntoIterator<Item = (Kind, &'a str, Option<&'a str>)>,
) -> Result<()> {
    let tx = begin_in_turn(conn)?;
    tx.execute("DELETE FROM sync_pushing", [])?;
    {
        let mut st =
            tx.prepare_cached("INSERT INTO sync_pushing(kind, key, hash) VALUES(?1, ?2, ?3)")?;
        for (kind, key, hash) in items {
            st.execute(params![kind.as_str(), key, hash])?;
        }
    }
    set_meta(&tx, PUSH_TOKEN, token)?;
    tx.commit()?;
    Ok(())
}

/// The token of a push noted and not yet settled, if any.
pub fn push_token(conn: &Connection) -> Result<Option<String>> {
    meta(conn, PUSH_TOKEN)
}

/// The token of this scope's last push the server took, if any (kept
/// since this version: a scope that last pushed before it has none).
pub fn receipt(conn: &Connection) -> Result<Option<String>> {
    meta(conn, RECEIPT)
}

/// Note whether a push found another home's receipt under this host's
/// name (`Some((host, now))`) or its own (`None`).
pub fn note_shared_name(conn: &Connection, seen: Option<(&str, i64)>) -> Result<()> {
    match seen {
        Some((host, now)) => set_meta(conn, SHARED_NAME, format!("{host}\t{now}")),
        None => {
            conn.prepare_cached("DELETE FROM meta WHERE key=?1")?
                .execute([SHARED_NAME])?;
            Ok(())
        }
    }
}

/// When another home was last seen pushing under `host`, the name this
/// home syncs as now (unix seconds).
pub fn shared_name(conn: &Connection, host: &str) -> Result<Option<i64>> {
    Ok(meta(conn, SHARED_NAME)?.and_then(|v| {
        let (name, when) = v.split_once('\t')?;
        (name == host).then(|| when.parse().ok()).flatten()
    }))
}

/// Settle the noted push: when the server `took` it, what it sent counts as
/// exchanged and its token becomes this scope's receipt; either way the
/// note goes. Returns the items settled as sent.
pub fn settle_push(conn: &mut Connection, took: bool) -> Result<usize> {
    let tx = begin_in_turn(conn)?;
    let mut sent = 0;
    if took {
        if let Some(token) = meta(&tx, PUSH_TOKEN)? {
            set_meta(&tx, RECEIPT, token)?;
        }
        let items: Vec<(String, String, Option<String>)> = tx
            .prepare("SELECT kind, key, hash FROM sync_pushing")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        for (kind, key, hash) in items {
            if let Some(kind) = Kind::parse(&kind) {
                set_state(&tx, kind, &key, hash.as_deref())?;
                sent += 1;
            }
        }
    }
    tx.execute("DELETE FROM sync_pushing", [])?;
    tx.execute("DELETE FROM meta WHERE key=?1", [PUSH_TOKEN])?;
    tx.commit()?;
    Ok(sent)
}

/// A record as the index holds it now.
#[derive(Debug, Clone)]
pub struct LocalRecord {
    pub id: String,
    pub path: String,
    pub hash: String,
    pub source: String,
}

/// The record stored under `key`, if any.
pub fn record_by_key(conn: &Connection, key: &str) -> Result<Option<LocalRecord>> {
    Ok(conn
        .prepare_cached("SELECT id, path, file_hash, source FROM records WHERE key=?1")?
        .query_row([key], |r| {
            Ok(LocalRecord {
                id: r.get(0)?,
                path: r.get(1)?,
                hash: r.get(2)?,
                source: r.get(3)?,
            })
        })
        .optional()?)
}

/// An item whose local version differs from the one last exchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub kind: Kind,
    /// The key on the server.
    pub key: String,
    /// The local hash now; `None` for a deletion.
    pub hash: Option<String>,
    /// Record: its path relative to the scope; source: its rowid.
    pub local: Option<LocalRef>,
}

/// Where a pending item's content is.
#[derive(Debug, Clone, PartialEq)]
pub enum LocalRef {
    /// A record file, relative to the scope, and who wrote it (`manual`,
    /// `agent`, `auto`), as the index read it.
    RecordFile {
        path: String,
        source: String,
    },
    Source(i64),
}

/// Records added, changed or deleted since they were last exchanged.
pub fn pending_records(conn: &Connection) -> Result<Vec<Pending>> {
    let mut out = Vec::new();
    let mut st = conn.prepare(
        "SELECT r.key, r.file_hash, r.path, r.source FROM records r
         LEFT JOIN sync_state s ON s.kind='record' AND s.key=r.key
         WHERE (s.hash IS NULL OR s.hash <> r.file_hash)
           AND NOT EXISTS (SELECT 1 FROM sync_pulling p WHERE p.key=r.key AND p.hash=r.file_hash)
         ORDER BY r.rowid",
    )?;
    for row in st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))? {
        let (key, hash, path, source): (String, String, String, String) = row?;
        out.push(Pending {
            kind: Kind::Record,
            key,
            hash: Some(hash),
            local: Some(LocalRef::RecordFile { path, source }),
        });
    }
    let mut st = conn.prepare(
        "SELECT s.key FROM sync_state s WHERE s.kind='record'
         AND NOT EXISTS (SELECT 1 FROM records r WHERE r.key=s.key) ORDER BY s.key",
    )?;
    for key in st.query_map([], |r| r.get::<_, String>(0))? {
        out.push(Pending {
            kind: Kind::Record,
            key: key?,
            hash: None,
            local: None,
        });
    }
    Ok(out)
}

/// This host's sources (of the kinds shared) changed since they were last
/// exchanged, and the ones it no longer has. Server keys are
/// `<host>:<path>`.
pub fn pending_sources(
    conn: &Connection,
    host: &str,
    sessions: bool,
    tickets: bool,
) -> Result<Vec<Pending>> {
    let former = former_names(conn, host)?;
    let mut out = Vec::new();
    let prefix = format!("{host}:");
    let mut current = std::collections::HashSet::new();
    let mut st = conn.prepare(
        "SELECT s.id, s.path, s.kind, s.hash || ':' || s.offset || ':' || s.parser_version, x.hash
         FROM sources s LEFT JOIN sync_state x ON x.kind='source' AND x.key = ?1 || s.path
         WHERE s.host IS NULL ORDER BY s.id",
    )?;
    let rows = st.query_map([&prefix], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, Option<String>>(4)?,
        ))
    })?;
    for row in rows {
        let (id, path, kind, version, sent) = row?;
        let shared = match kind.as_str() {
            "ticket" => tickets,
            _ => sessions,
        };
        if !shared {
            continue;
        }
        let key = format!("{prefix}{path}");
        current.insert(key.clone());
        if sent.as_deref() != Some(version.as_str()) {
            out.push(Pending {
                kind: Kind::Source,
                key,
                hash: Some(version),
                local: Some(LocalRef::Source(id)),
            });
        }
    }
    // What this host pushed and no longer holds (or holds under its new
    // name) is withdrawn; a teammate's source pulled here never is.
    let names = std::iter::once(host).chain(former.iter().map(String::as_str));
    for name in names {
        for key in own_source_keys(conn, name)? {
            if current.contains(&key) {
                continue;
            }
            out.push(Pending {
                kind: Kind::Source,
                key,
                hash: None,
                local: None,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_and_cursor_round_trip() -> Result<()> {
        let c = crate::store::empty_in_memory()?;
        assert_eq!(cursor(&c)?, 0);
        set_cursor(&c, 42)?;
        assert_eq!(cursor(&c)?, 42);
        assert_eq!(state(&c, Kind::Record, "k")?, None);
        set_state(&c, Kind::Record, "k", Some("h1"))?;
        assert_eq!(state(&c, Kind::Record, "k")?.as_deref(), Some("h1"));
        // A state with no record behind it is a deletion to push.
        let p = pending_records(&c)?;
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].key.as_str(), p[0].hash.as_ref()), ("k", None));
        set_state(&c, Kind::Record, "k", None)?;
        assert!(pending_records(&c)?.is_empty());
        Ok(())
    }
}
