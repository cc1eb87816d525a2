//! One scope's pull, and what pull and push share ([`Target`], [`Me`],
//! [`ScopeReport`]); the push is in [`super::push`].
//!
//! Pull applies rows in the server's order through the same write paths as
//! local writes (record files through [`RecordStore`], passages through the
//! index writer), and stores the cursor in the transaction that applies
//! each row, so a sync killed anywhere resumes where it stopped. A record
//! changed here and not yet pushed is not overwritten: it is pushed next and
//! takes its place after the other version in the server's order, so every
//! host ends with the same value. An agent's version never replaces a
//! record a person wrote, and a person's replaces an agent's that was not
//! pushed yet (the server would refuse the agent's). A pulled record's file hash is noted before the
//! file is written ([`local::journal_pull`]), so a sync killed between the
//! file and the note of the exchange does not take the pulled file for a
//! change made here and push it back over newer versions.

use std::path::Path;

use postgres::Client;
use rusqlite::Connection;

use super::local::{self, Kind, MUST_PUSH};
use super::remote::{describe, RemoteUrl};
use crate::error::{Error, Result};
use crate::index::{import_source, remove_source_at, RecordStore, SecretPolicy, SourceDoc};
use crate::records::{parse_record, Limits, Origin, Source};
use crate::store::{begin_in_turn, ScopeDir, TermDeltas};

/// Rows fetched per round trip when pulling.
const PULL_BATCH: i64 = 256;

/// One scope to sync and how.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    pub dir: &'a ScopeDir,
    /// The project's name on the server.
    pub project: String,
    pub sessions: bool,
    pub tickets: bool,
}

/// Who is syncing (the author of what it pushes is the server's to say).
#[derive(Debug, Clone)]
pub struct Me<'a> {
    pub host: &'a str,
    pub limits: Limits,
    pub now: i64,
}

/// What one scope's sync did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ScopeReport {
    pub project: String,
    pub pulled: usize,
    pub pushed: usize,
    /// Pulled rows kept back because this host has a newer local version
    /// (or a person's record against an agent's).
    pub kept_local: usize,
    /// Items not pushed because they hold a secret (`path: kind`).
    pub refused: Vec<String>,
    /// Secrets redacted from what was pulled.
    pub redacted: usize,
    /// Records and sources dropped because the server no longer has them
    /// (deleted while this host could not read the tombstone).
    pub dropped: usize,
    /// Records pushed as an agent's that the server kept a person's
    /// version of, which this host then took.
    pub yielded: usize,
    pub cursor: i64,
    /// Passages in the sources pulled and pushed.
    pub passages_pulled: usize,
    pub passages_pushed: usize,
    /// Wall time of each half, in milliseconds.
    pub pull_ms: u64,
    pub push_ms: u64,
}

/// A row from the server.
pub(super) struct Row {
    id: i64,
    kind: Kind,
    pub(super) key: String,
    host: String,
    author: Option<String>,
    pub(super) hash: String,
    deleted: bool,
    body: Option<String>,
}

/// The columns [`Row::read`] reads, in its order.
pub(super) const ROW_COLUMNS: &str = "id, kind, key, host, author, hash, deleted, body";

impl Row {
    /// A row selected as [`ROW_COLUMNS`]; `None` for a kind this version
    /// does not know.
    pub(super) fn read(r: &postgres::Row) -> Option<Row> {
        Some(Row {
            id: r.get(0),
            kind: Kind::parse(r.get(1))?,
            key: r.get(2),
            host: r.get(3),
            author: r.get(4),
            hash: r.get(5),
            deleted: r.get(6),
            body: r.get(7),
        })
    }
}

/// Pull every row other hosts sent since the cursor.
pub fn pull(
    client: &mut Client,
    url: &RemoteUrl,
    conn: &mut Connection,
    t: &Target,
    me: &Me,
    report: &mut ScopeReport,
) -> Result<()> {
    // Before anything is compared: a record a killed pull had written is
    // not an edit made here.
    local::settle_pulls(conn)?;
    let mut cursor = local::cursor(conn)?;
    let (first, before) = (cursor == 0, cursor);
    loop {
        let rows = client
            .query(
                &format!(
                    "SELECT {ROW_COLUMNS} FROM recall_entries
                     WHERE project=$1 AND id > $2 AND host <> $3 ORDER BY id LIMIT $4"
                ),
                &[&t.project, &cursor, &me.host, &PULL_BATCH],
            )
            .map_err(|e| describe(&e, url))?;
        let Some(last) = rows.last().map(|r| r.get::<_, i64>(0)) else {
            break;
        };
        let rows: Vec<Row> = rows.iter().filter_map(Row::read).collect();
        apply_batch(conn, t, me, rows, first, report)?;
        // Rows of a kind this version does not know are skipped, but the
        // cursor still moves past them.
        let tx = begin_in_turn(conn)?;
        local::set_cursor(&tx, last)?;
        tx.commit()?;
        cursor = last;
    }
    report.cursor = cursor;
    super::horizon::catch_up(client, url, conn, t, me, before, report)?;
    fail::fail_point!("sync-pulled");
    Ok(())
}

/// Take the server's version of records this host just pushed and the
/// server kept a person's version over: the person's replaces the agent's
/// here too. The cursor does not move: the pull meets these rows again in
/// their turn and finds nothing to change.
pub(super) fn take_persons(
    conn: &mut Connection,
    t: &Target,
    me: &Me,
    rows: Vec<Row>,
    report: &mut ScopeReport,
) -> Result<()> {
    for row in rows {
        let _lock = t.dir.lock_records()?;
        let applied = apply_record(conn, t.dir, me, &row, false)?;
        let tx = begin_in_turn(conn)?;
        if let Applied::State(h) = applied {
            local::set_state(&tx, Kind::Record, &row.key, h.as_deref())?;
            report.yielded += 1;
        }
        local::forget_pull(&tx, &row.key)?;
        tx.commit()?;
    }
    Ok(())
}

/// Apply rows in order: consecutive sources share one transaction (with
/// the cursor), each record is its own file write and then one.
fn apply_batch(
    conn: &mut Connection,
    t: &Target,
    me: &Me,
    rows: Vec<Row>,
    first: bool,
    report: &mut ScopeReport,
) -> Result<()> {
    let mut rows = rows.into_iter().peekable();
    while let Some(row) = rows.next() {
        if row.kind == Kind::Record {
            // The scope's record lock, held from the look-up to the state
            // write: a concurrent `record add` of the same key waits for
            // this one record, never for the network.
            let _lock = t.dir.lock_records()?;
            let applied = apply_record(conn, t.dir, me, &row, first)?;
            let tx = begin_in_turn(conn)?;
            match applied {
                Applied::State(h) => local::set_state(&tx, Kind::Record, &row.key, h.as_deref())?,
                Applied::Kept => report.kept_local += 1,
            }
            local::forget_pull(&tx, &row.key)?;
            local::set_cursor(&tx, row.id)?;
            tx.commit()?;
            report.pulled += 1;
            continue;
        }
        let tx = begin_in_turn(conn)?;
        let mut stats = TermDeltas::default();
        let mut row = Some(row);
        while let Some(r) = row.take() {
            let (redacted, passages) = apply_source(&tx, me, r, &mut stats)?;
            report.redacted += redacted;
            report.passages_pulled += passages;
            report.pulled += 1;
            if rows.peek().is_some_and(|n| n.kind == Kind::Source) {
                row = rows.next();
            }
        }
        stats.flush(&tx)?;
        tx.commit()?;
    }
    Ok(())
}

fn apply_source(
    tx: &rusqlite::Transaction,
    me: &Me,
    row: Row,
    stats: &mut TermDeltas,
) -> Result<(usize, usize)> {
    let path = format!("sync://{}", row.key);
    let (mut redacted, mut passages) = (0, 0);
    match row.body.filter(|_| !row.deleted) {
        None => {
            remove_source_at(tx, &path, stats)?;
            local::set_state(tx, Kind::Source, &row.key, None)?;
        }
        Some(body) => {
            let doc: SourceDoc = serde_json::from_str(&body).map_err(|e| {
                Error::Sync(format!(
                    "a shared source from host {} ({}) is not readable ({e}); upgrade recall on this host",
                    row.host, row.key
                ))
            })?;
            passages = doc.passages();
            redacted = import_source(tx, &path, &row.host, doc, me.now, stats)?;
            local::set_state(tx, Kind::Source, &row.key, Some(&row.hash))?;
        }
    }
    local::set_cursor(tx, row.id)?;
    Ok((redacted, passages))
}

enum Applied {
    /// The new `sync_state` hash (`None`: forget the key).
    State(Option<String>),
    /// The local version stays and will be pushed.
    Kept,
}

fn apply_record(
    conn: &mut Connection,
    dir: &ScopeDir,
    me: &Me,
    row: &Row,
    first: bool,
) -> Result<Applied> {
    let here = local::record_by_key(conn, &row.key)?;
    let known = local::state(conn, Kind::Record, &row.key)?;
    let changed_here = here
        .as_ref()
        .is_some_and(|h| known.as_deref() != Some(h.hash.as_str()) && !(first && known.is_none()));
    let mut store = RecordStore {
        dir,
        conn,
        limits: me.limits,
        gate: None,
    };
    let Some(body) = row.body.as_deref().filter(|_| !row.deleted) else {
        if changed_here {
            return Ok(Applied::Kept);
        }
        if let Some(h) = &here {
            store.delete(&h.id)?;
        }
        // A sync killed here has not moved the cursor: the next one pulls
        // this row (or a newer version of the key) again before it pushes,
        // so the deletion is not taken for one made here.
        fail::fail_point!("sync-pull-deleted");
        return Ok(Applied::State(None));
    };
    let where_ = Path::new("sync").join(&row.host).join(&row.key);
    let mut record = parse_record(body, &where_, &me.limits)?;
    if let Some(h) = &here {
        let (person_here, person_there) = (
            h.source == Source::Manual.as_str(),
            record.meta.source == Source::Manual,
        );
        if person_here && !person_there {
            // A person's record is never replaced by an agent's: keep it
            // and push it again, so it wins on every host.
            let tx = begin_in_turn(store.conn)?;
            local::set_state(&tx, Kind::Record, &row.key, Some(MUST_PUSH))?;
            tx.commit()?;
            return Ok(Applied::Kept);
        }
        // A change made here and not yet pushed stays, unless it is an
        // agent's and a person's version arrives: the server would keep
        // the person's anyway.
        let persons_over_agents = person_there && !person_here;
        if changed_here && !persons_over_agents {
            return Ok(Applied::Kept);
        }
    }
    let origin = record.meta.origin.get_or_insert_with(Origin::default);
    origin
        .extra
        .entry("host".into())
        .or_insert_with(|| row.host.clone().into());
    if let Some(a) = &row.author {
        origin
            .extra
            .entry("author".into())
            .or_insert_with(|| a.clone().into());
    }
    let previous = here.as_ref().map(|h| dir.root.join(&h.path));
    let journal = |c: &Connection, hash: &str| local::journal_pull(c, &row.key, hash);
    store.save_journaled(record, previous.as_ref(), SecretPolicy::Redact, &journal)?;
    fail::fail_point!("sync-pull-saved");
    let now_hash = local::record_by_key(conn, &row.key)?.map(|r| r.hash);
    Ok(Applied::State(now_hash))
}

#[cfg(test)]
mod tests {
    use std::panic::{catch_unwind, AssertUnwindSafe};

    use super::*;
    use crate::index::{sync_records, Progress};
    use crate::records::{render_record, Category, Record};
    use crate::store::{Db, OpenMode, Scope};

    const KEY: &str = "deploy-port";

    /// Host b's version `n` of the record, as the server row `id`.
    fn pulled(id: i64, n: usize) -> Row {
        let now = jiff::Timestamp::from_second(1_767_225_600).unwrap();
        let body = format!("Deploys listen on port 80{n:02}.");
        let r = Record::new(
            KEY,
            Category::Decisions,
            Scope::Project,
            Source::Manual,
            &body,
            now,
        );
        let text = render_record(&r).unwrap();
        Row {
            id,
            kind: Kind::Record,
            key: KEY.into(),
            host: "b".into(),
            author: None,
            hash: blake3::hash(text.as_bytes()).to_hex().to_string(),
            deleted: false,
            body: Some(text),
        }
    }

    fn scope_dir(tmp: &tempfile::TempDir) -> ScopeDir {
        ScopeDir {
            scope: Scope::Project,
            root: tmp.path().join("scope"),
        }
    }

    /// The scope's exchange target: records only.
    fn target(dir: &ScopeDir) -> Target<'_> {
        Target {
            dir,
            project: "p".into(),
            sessions: false,
            tickets: false,
        }
    }

    /// This host, pulling what host b sent.
    fn host_a() -> Me<'static> {
        Me {
            host: "a",
            limits: Limits::default(),
            now: 1_767_225_600,
        }
    }

    fn body_on_disk(dir: &ScopeDir) -> String {
        let folder = dir.records_dir().join("decisions");
        let file = std::fs::read_dir(&folder).unwrap().next().unwrap().unwrap();
        let text = std::fs::read_to_string(file.path()).unwrap();
        text.rsplit("---\n").next().unwrap().trim().to_string()
    }

    /// A sync killed at each point of a pulled record's write must not
    /// leave the pulled file looking like an edit made here: pushed back
    /// with a newer id, it would replace newer versions on every host.
    #[test]
    fn a_pull_killed_mid_write_is_not_taken_for_a_local_edit() {
        let scenario = fail::FailScenario::setup();
        let tmp = tempfile::tempdir().unwrap();
        let dir = scope_dir(&tmp);
        let mut db = Db::open(&dir.index_path(), OpenMode::ReadWrite).unwrap();
        let conn = db.writer().unwrap();
        let (t, me) = (target(&dir), host_a());
        let mut report = ScopeReport::default();
        apply_batch(conn, &t, &me, vec![pulled(1, 0)], true, &mut report).unwrap();
        assert!(local::pending_records(conn).unwrap().is_empty());

        let mut id = 1;
        for point in ["record-journaled", "record-file-written", "sync-pull-saved"] {
            id += 1;
            fail::cfg(point, "panic").unwrap();
            let killed = catch_unwind(AssertUnwindSafe(|| {
                apply_batch(
                    conn,
                    &t,
                    &me,
                    vec![pulled(id, id as usize)],
                    false,
                    &mut report,
                )
            }));
            fail::remove(point);
            assert!(killed.is_err(), "{point}: the fail point was not reached");

            // The next sync: the index reads the files, then pulls (here a
            // newer version of the same row) and pushes what changed.
            sync_records(conn, &dir, &me.limits, false, &Progress::hidden()).unwrap();
            local::settle_pulls(conn).unwrap();
            assert_eq!(
                local::pending_records(conn).unwrap(),
                vec![],
                "{point}: the killed pull's file would be pushed back"
            );
            id += 1;
            let kept = report.kept_local;
            apply_batch(
                conn,
                &t,
                &me,
                vec![pulled(id, id as usize)],
                false,
                &mut report,
            )
            .unwrap();
            assert_eq!(
                report.kept_local, kept,
                "{point}: the newer version was refused"
            );
            assert_eq!(
                body_on_disk(&dir),
                format!("Deploys listen on port 80{id:02}.")
            );
            assert!(local::pending_records(conn).unwrap().is_empty(), "{point}");
        }
        scenario.teardown();
    }

    /// A sync killed after a pulled deletion removed the file, before the
    /// exchange was noted: the next sync pulls the same row again (the
    /// cursor did not move) and nothing is left to push, not even the
    /// deletion back as this host's own.
    #[test]
    fn a_pulled_deletion_killed_before_it_was_noted_is_not_sent_back() {
        let scenario = fail::FailScenario::setup();
        let tmp = tempfile::tempdir().unwrap();
        let dir = scope_dir(&tmp);
        let mut db = Db::open(&dir.index_path(), OpenMode::ReadWrite).unwrap();
        let conn = db.writer().unwrap();
        let (t, me) = (target(&dir), host_a());
        let mut report = ScopeReport::default();
        apply_batch(conn, &t, &me, vec![pulled(1, 0)], true, &mut report).unwrap();
        let tombstone = || Row {
            deleted: true,
            body: None,
            ..pulled(2, 0)
        };

        fail::cfg("sync-pull-deleted", "panic").unwrap();
        let killed = catch_unwind(AssertUnwindSafe(|| {
            apply_batch(conn, &t, &me, vec![tombstone()], false, &mut report)
        }));
        fail::remove("sync-pull-deleted");
        assert!(killed.is_err(), "the fail point was not reached");
        assert_eq!(local::cursor(conn).unwrap(), 1, "the cursor moved");
        assert!(
            !dir.records_dir().join("decisions").exists()
                || std::fs::read_dir(dir.records_dir().join("decisions"))
                    .unwrap()
                    .next()
                    .is_none(),
            "the file was not deleted"
        );

        // The next sync reads the files, pulls from the cursor, then pushes.
        sync_records(conn, &dir, &me.limits, false, &Progress::hidden()).unwrap();
        local::settle_pulls(conn).unwrap();
        apply_batch(conn, &t, &me, vec![tombstone()], false, &mut report).unwrap();
        assert_eq!(local::pending_records(conn).unwrap(), vec![]);
        assert_eq!(local::state(conn, Kind::Record, KEY).unwrap(), None);
        scenario.teardown();
    }
}
