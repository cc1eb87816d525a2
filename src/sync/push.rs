//! Push: send what this host changed, one row per (project, kind, key).
//!
//! Each changed item replaces the older version on the server (or becomes
//! a tombstone) under the project's advisory lock, which also makes the
//! ids commit in order; pushing the same version twice changes nothing.
//! A push is noted locally first, with a token the server transaction
//! stores as this host's receipt, so a sync killed after the server took
//! a push and before this index noted it does not send that push again
//! later ([`settle_push`]). A version that is not a person's never
//! replaces a person's record on the server: the host that sent it takes
//! the person's version instead, so no host ever receives the agent's.

use std::collections::HashSet;
use std::path::Path;

use postgres::Client;
use rusqlite::Connection;

use super::exchange::{take_persons, Me, Row, ScopeReport, Target, ROW_COLUMNS};
use super::local::{self, Kind, LocalRef, Pending};
use super::remote::{describe, RemoteUrl};
use crate::error::{Error, Result};
use crate::index::export_source;
use crate::records::{parse_record, parse_record_file, render_record, Limits};
use crate::store::{Scope, ScopeDir};

/// Bytes of bodies sent per push transaction.
const PUSH_BYTES: usize = 8 << 20;

/// Push this scope's pending changes.
pub fn push(
    client: &mut Client,
    url: &RemoteUrl,
    conn: &mut Connection,
    t: &Target,
    me: &Me,
    report: &mut ScopeReport,
) -> Result<()> {
    local::note_name(conn, me.host)?;
    let mut pending = local::pending_records(conn)?;
    pending.extend(local::pending_sources(
        conn, me.host, t.sessions, t.tickets,
    )?);
    // A record with no row whose file is still there (one that does not
    // parse) is not deleted: the delete would take it from every host.
    let deletes = pending
        .iter()
        .any(|p| p.kind == Kind::Record && p.local.is_none());
    let unreadable = match deletes {
        true => crate::index::unreadable_files(t.dir, &me.limits),
        false => Vec::new(),
    };
    let mut batch: Vec<Outgoing> = Vec::new();
    let mut bytes = 0;
    for p in pending {
        if p.kind == Kind::Record && p.local.is_none() {
            if let Some((path, _)) = unreadable.iter().find(|(_, keys)| keys.contains(&p.key)) {
                report.refused.push(format!(
                    "the deletion of record '{}': {} still holds it but does not parse; fix the file (`recall doctor` says what is wrong), then sync",
                    p.key,
                    path.display()
                ));
                continue;
            }
        }
        let Some(out) = outgoing(conn, t.dir, p, report)? else {
            continue;
        };
        bytes += out.body.as_ref().map_or(0, String::len);
        batch.push(out);
        if bytes >= PUSH_BYTES {
            bytes = 0;
            send(client, url, conn, t, me, std::mem::take(&mut batch), report)?;
        }
    }
    send(client, url, conn, t, me, batch, report)
}

/// A change ready to send.
struct Outgoing {
    kind: Kind,
    key: String,
    hash: String,
    /// The local hash to remember once sent (`None`: forget the key).
    state: Option<String>,
    body: Option<String>,
    /// Who wrote a record (`manual`, `agent`, `auto`); `None` otherwise.
    source: Option<String>,
}

/// A record file's text as other hosts read it: a file written by hand
/// without the fields its place gives (its id, category, scope and times;
/// see [`Place`](crate::records::Place)) is sent with them, since the other host's file is
/// elsewhere; any other text goes as it is.
fn whole_record(text: String, path: &Path, scope: Scope) -> String {
    let limits = Limits {
        max_body_chars: usize::MAX,
    };
    if parse_record(&text, path, &limits).is_ok() {
        return text;
    }
    parse_record_file(&text, path, scope, &limits)
        .and_then(|r| render_record(&r))
        .unwrap_or(text)
}

fn outgoing(
    conn: &Connection,
    dir: &ScopeDir,
    p: Pending,
    report: &mut ScopeReport,
) -> Result<Option<Outgoing>> {
    let body = match &p.local {
        None => None,
        Some(LocalRef::Source(id)) => {
            let doc = export_source(conn, *id)?;
            report.passages_pushed += doc.passages();
            Some(serde_json::to_string(&doc)?)
        }
        Some(LocalRef::RecordFile { path: rel, .. }) => {
            let path = dir.root.join(rel);
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                // Deleted since the index saw it: the next sync sends the
                // tombstone once the index has caught up.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(Error::io("cannot read", path, e)),
            };
            let text = whole_record(text, &path, dir.scope);
            let (_, found) = crate::secrets::redact(&text);
            if let Some(f) = found.first() {
                report.refused.push(format!(
                    "{}: holds a secret ({}); remove the secret from the file",
                    path.display(),
                    f.kind
                ));
                return Ok(None);
            }
            Some(text)
        }
    };
    let source = match p.local {
        Some(LocalRef::RecordFile { source, .. }) => Some(source),
        _ => None,
    };
    Ok(Some(Outgoing {
        kind: p.kind,
        key: p.key,
        hash: p.hash.clone().unwrap_or_default(),
        state: p.hash,
        body,
        source,
    }))
}

/// Send one batch in one server transaction, then remember it locally.
/// A record the server keeps a person's version of (this host sent an
/// agent's) is not replaced; this host takes the person's instead.
fn send(
    client: &mut Client,
    url: &RemoteUrl,
    conn: &mut Connection,
    t: &Target,
    me: &Me,
    batch: Vec<Outgoing>,
    report: &mut ScopeReport,
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let err = |e: postgres::Error| describe(&e, url);
    let kinds: Vec<&str> = batch.iter().map(|o| o.kind.as_str()).collect();
    let keys: Vec<&str> = batch.iter().map(|o| o.key.as_str()).collect();
    let hashes: Vec<&str> = batch.iter().map(|o| o.hash.as_str()).collect();
    let deleted: Vec<bool> = batch.iter().map(|o| o.body.is_none()).collect();
    let bodies: Vec<Option<&str>> = batch.iter().map(|o| o.body.as_deref()).collect();
    let sources: Vec<Option<&str>> = batch.iter().map(|o| o.source.as_deref()).collect();
    let token = uuid::Uuid::new_v4().to_string();
    local::journal_push(
        conn,
        &token,
        batch
            .iter()
            .map(|o| (o.kind, o.key.as_str(), o.state.as_deref())),
    )?;
    let mut tx = client.transaction().map_err(err)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&t.project],
    )
    .map_err(err)?;
    // A version that is not a person's never replaces a person's record
    // (schema/pg/0004_record_source.sql); RETURNING names what changed.
    // The author is who the server knows the login to be, never what the
    // host says (schema/pg/0005_people.sql).
    let changed: HashSet<(String, String)> = tx
        .query(
            "INSERT INTO recall_entries(project, kind, key, id, host, author, hash, deleted, body, source)
             SELECT $1, k, key, nextval('recall_order'), $2,
                    (SELECT coalesce(recall_person(), session_user::text)), h, d, b, s
             FROM unnest($3::text[], $4::text[], $5::text[], $6::bool[], $7::text[], $8::text[])
                  AS u(k, key, h, d, b, s)
             ON CONFLICT (project, kind, key) DO UPDATE SET
                 id = excluded.id, host = excluded.host, author = excluded.author,
                 hash = excluded.hash, deleted = excluded.deleted, body = excluded.body,
                 source = excluded.source, changed = now()
             WHERE (recall_entries.hash IS DISTINCT FROM excluded.hash
                    OR recall_entries.deleted IS DISTINCT FROM excluded.deleted)
               AND NOT (recall_entries.source = 'manual' AND NOT recall_entries.deleted
                        AND NOT excluded.deleted AND excluded.source IS DISTINCT FROM 'manual')
             RETURNING kind, key",
            &[
                &t.project, &me.host, &kinds, &keys, &hashes, &deleted, &bodies, &sources,
            ],
        )
        .map_err(err)?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let kept: Vec<&str> = batch
        .iter()
        .filter(|o| o.kind == Kind::Record && o.body.is_some())
        .filter(|o| o.source.as_deref() != Some("manual"))
        .filter(|o| !changed.contains(&(o.kind.as_str().to_string(), o.key.clone())))
        .map(|o| o.key.as_str())
        .collect();
    let persons: Vec<Row> = if kept.is_empty() {
        Vec::new()
    } else {
        tx.query(
            &format!(
                "SELECT {ROW_COLUMNS} FROM recall_entries WHERE project=$1 AND kind='record'
                 AND key = ANY($2) AND source = 'manual' AND NOT deleted"
            ),
            &[&t.project, &kept],
        )
        .map_err(err)?
        .iter()
        .filter_map(Row::read)
        .collect()
    };
    // The receipt this host's name held before: this scope's own last
    // one, unless another home pushed under the same name since.
    let before: Option<String> = tx
        .query_one(
            "WITH before AS (SELECT push_token FROM recall_hosts WHERE project=$1 AND host=$2)
             INSERT INTO recall_hosts(project, host, push_token) VALUES($1, $2, $3)
             ON CONFLICT (project, host) DO UPDATE SET push_token = excluded.push_token
             RETURNING (SELECT push_token FROM before)",
            &[&t.project, &me.host, &token],
        )
        .map_err(err)?
        .get(0);
    tx.commit().map_err(err)?;
    fail::fail_point!("sync-push-committed");
    let mine = local::receipt(conn)?;
    let shared = matches!((&mine, &before), (Some(m), Some(b)) if m != b);
    local::note_shared_name(conn, shared.then_some((me.host, me.now)))?;
    if shared {
        report.shared_name = Some(me.host.to_string());
    }
    local::settle_push(conn, true)?;
    report.pushed += batch.len() - persons.len();
    take_persons(conn, t, me, persons, report)
}

/// Settle a push a killed sync left noted: the server holds this host's
/// receipt for it exactly when it committed.
pub fn settle_push(
    client: &mut Client,
    url: &RemoteUrl,
    conn: &mut Connection,
    t: &Target,
    me: &Me,
) -> Result<()> {
    let Some(token) = local::push_token(conn)? else {
        return Ok(());
    };
    let receipt: Option<String> = client
        .query_opt(
            "SELECT push_token FROM recall_hosts WHERE project=$1 AND host=$2",
            &[&t.project, &me.host],
        )
        .map_err(|e| describe(&e, url))?
        .and_then(|r| r.get(0));
    let took = receipt.as_deref() == Some(token.as_str());
    let sent = local::settle_push(conn, took)?;
    tracing::debug!(took, sent, "settled a push a killed sync left");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record written by hand with only its text goes to other hosts
    /// with the fields its place gives (their files are elsewhere, so they
    /// could not read it); a whole record goes as it is, byte for byte.
    #[test]
    fn a_hand_written_record_is_sent_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("records/decisions");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("deploys.md");
        let short = "---\n---\n\nDeploys go through make ship-it.\n".to_string();
        std::fs::write(&path, &short).unwrap();
        let sent = whole_record(short, &path, Scope::Project);
        let limits = Limits::default();
        let r = parse_record(&sent, &path, &limits).unwrap();
        assert_eq!(
            (r.meta.id.as_str(), r.meta.key.as_str()),
            ("deploys", "deploys")
        );
        assert_eq!(r.body, "Deploys go through make ship-it.");
        assert_eq!(whole_record(sent.clone(), &path, Scope::Project), sent);
    }
}
