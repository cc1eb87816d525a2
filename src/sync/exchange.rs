//! One scope's pull, and what pull and push share ([`Target`], [`Me`],
//! [`ScopeReport`]); the push is in [`super::push`].
//!
//! Pull applies rows in the server's order through the same write paths as
//! local writes (record files through the record store, passages through the
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

use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;
use postgres::Client;
use rusqlite::Connection;

use super::local::{self, Kind};
use super::pulled::{apply_one, apply_records, Applied};
use super::pulled_sources::{apply_sources, sources_only, write_pages, Page};
use super::remote::{describe, RemoteUrl};
use crate::error::Result;
use crate::records::Limits;
use crate::store::{begin_in_turn, ScopeDir};

/// Rows fetched per round trip when pulling, within [`PULL_BYTES`] of
/// bodies: a page is held in memory while it is written (and the next one
/// while it comes). Each run of records in a page is one batch; pages of
/// sources only are written several to a transaction
/// ([`super::pulled_sources`]).
const PULL_ROWS: i64 = 8192;
/// Bytes of bodies per round trip (a batch holds at least one row).
const PULL_BYTES: i64 = 32 << 20;
/// SQLite's page cache while pulling (KiB; the default is 2 MB). A pull's
/// transaction changes some pages again and again (the term counts, index
/// pages) while it writes hundreds of MB: with 2 MB they were written out
/// to the WAL and written again, and the kernel had often flushed them in
/// between. A fresh host pulling 1,000,000 passages wrote 8.3 GB with
/// 2 MB, 8.8 GB with 64 MB and 6.9 GB with 256 MB, for a 2.4 GB index
/// (issue 36 item 2); it holds as much more memory while it pulls, at
/// most.
const PULL_CACHE_KIB: i64 = 256 << 10;

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
    /// Items not pushed, each with why and what to do (a file holding a
    /// secret, a deletion held back).
    pub refused: Vec<String>,
    /// Pulled entries this host could not take, each with why (see
    /// `pulled::Step::Skip`): passed over, the rest synced.
    pub skipped: Vec<String>,
    /// Secrets redacted from what was pulled.
    pub redacted: usize,
    /// Records and sources dropped because the server no longer has them
    /// (deleted while this host could not read the tombstone).
    pub dropped: usize,
    /// Records pushed as an agent's that the server kept a person's
    /// version of, which this host then took.
    pub yielded: usize,
    /// This host's name, when another home was found pushing under it
    /// since this scope's last push: two homes of one name never pull
    /// each other's changes.
    pub shared_name: Option<String>,
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
    pub(super) id: i64,
    pub(super) kind: Kind,
    pub(super) key: String,
    pub(super) host: String,
    pub(super) author: Option<String>,
    pub(super) hash: String,
    pub(super) deleted: bool,
    pub(super) body: Option<String>,
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
    // See [`PULL_CACHE`]; put back however the pull ends.
    let cache: i64 = conn.pragma_query_value(None, "cache_size", |r| r.get(0))?;
    conn.pragma_update(None, "cache_size", -PULL_CACHE_KIB)?;
    let pulled = pull_pages(client, url, conn, t, me, report);
    conn.pragma_update(None, "cache_size", cache)?;
    let before = pulled?;
    super::horizon::catch_up(client, url, conn, t, me, before, report)?;
    fail::fail_point!("sync-pulled");
    Ok(())
}

/// [`pull`]'s pages, applied in order; returns the cursor it started at.
fn pull_pages(
    client: &mut Client,
    url: &RemoteUrl,
    conn: &mut Connection,
    t: &Target,
    me: &Me,
    report: &mut ScopeReport,
) -> Result<i64> {
    let mut cursor = local::cursor(conn)?;
    let (first, before) = (cursor == 0, cursor);
    let never_synced = local::last_sync(conn)?.is_none();
    let mut mine = local::former_names(conn, me.host)?;
    mine.push(me.host.to_string());
    let fetch =
        |client: &mut Client, after: i64| fetch_page(client, url, t, &mine, after, never_synced);
    let mut next = fetch(client, cursor)?;
    while let Some((rows, last)) = next.take() {
        if sources_only(&rows) {
            // Pages of sources only: several to a transaction.
            let mut ahead = |after: i64| fetch(client, after);
            (next, cursor) = write_pages(conn, me, (rows, last), &mut ahead, report)?;
            continue;
        }
        // The next page comes over the network while this one is written.
        let (applied, fetched) = std::thread::scope(|scope| {
            let ahead = scope.spawn(|| fetch(client, last));
            let applied = apply_batch(conn, t, me, rows, first, report);
            let fetched = ahead
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (applied, fetched)
        });
        applied?;
        // Rows of a kind this version does not know are skipped, but the
        // cursor still moves past them.
        let tx = begin_in_turn(conn)?;
        local::set_cursor(&tx, last)?;
        tx.commit()?;
        cursor = last;
        next = fetched?;
    }
    report.cursor = cursor;
    Ok(before)
}

/// The rows other hosts sent after `after`, in the server's order, up to
/// [`PULL_ROWS`] rows and [`PULL_BYTES`] of bodies (at least one row), and
/// the id of the last; `None` when there are none. A host does not pull
/// what its own names (`mine`: this one, and one it was renamed from
/// while its sources under it are withdrawn) pushed, which it has, except
/// until its first sync ends (`never_synced`): then its names' records
/// come too, since a home that never synced (a reinstalled machine under
/// its old name) has none of them. Its names' sources stay on the server:
/// they are the old home's transcripts.
fn fetch_page(
    client: &mut Client,
    url: &RemoteUrl,
    t: &Target,
    mine: &[String],
    after: i64,
    never_synced: bool,
) -> Result<Option<Page>> {
    let err = |e: postgres::Error| describe(&e, url);
    let params: [&(dyn ToSql + Sync); 6] = [
        &t.project,
        &after,
        &mine,
        &PULL_ROWS,
        &PULL_BYTES,
        &never_synced,
    ];
    // Streamed: each row is read as it arrives, so a page is held once.
    let mut stream = client
        .query_raw(
            &format!(
                "SELECT {ROW_COLUMNS} FROM (
                     SELECT *, sum(coalesce(octet_length(body), 0)) OVER (ORDER BY id) AS upto
                     FROM (SELECT {ROW_COLUMNS} FROM recall_entries
                           WHERE project=$1 AND id > $2
                             AND (host <> ALL($3) OR ($6 AND kind = 'record'))
                           ORDER BY id LIMIT $4) page) w
                 WHERE upto - coalesce(octet_length(body), 0) < $5 ORDER BY id"
            ),
            params,
        )
        .map_err(err)?;
    let (mut rows, mut last) = (Vec::new(), None);
    while let Some(r) = stream.next().map_err(err)? {
        last = Some(r.get::<_, i64>(0));
        rows.extend(Row::read(&r));
    }
    Ok(last.map(|last| (rows, last)))
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
        let applied = apply_one(conn, t.dir, me, &row, false)?;
        let tx = begin_in_turn(conn)?;
        match applied {
            Applied::State(h) => {
                local::set_state(&tx, Kind::Record, &row.key, h.as_deref())?;
                report.yielded += 1;
            }
            Applied::Skipped(why) => report.skipped.push(why),
            Applied::Kept => {}
        }
        local::forget_pull(&tx, &row.key)?;
        tx.commit()?;
    }
    Ok(())
}

/// Apply rows in order: each run of consecutive records as one batch,
/// each run of consecutive sources in one transaction, each with the
/// cursor.
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
        let kind = row.kind;
        let mut run = vec![row];
        while let Some(next) = rows.next_if(|n| n.kind == kind) {
            run.push(next);
        }
        let last = run.last().map_or(0, |r| r.id);
        match kind {
            Kind::Record => apply_records(conn, t, me, &run, first, last, report)?,
            Kind::Source => apply_sources(conn, me, run, last, report)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::panic::{catch_unwind, AssertUnwindSafe};

    use super::*;
    use crate::index::{sync_records, PassageDoc, Progress, SessionDoc, SourceDoc};
    use crate::records::{render_record, Category, Record, Source};
    use crate::store::{Db, OpenMode, Scope};
    use crate::sync::pulled_sources::{adds_only, write_pages};

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

    /// A record pulled under `key` with the id `id`, in `category`.
    fn pulled_as(id: i64, key: &str, record_id: &str, category: Category) -> Row {
        let now = jiff::Timestamp::from_second(1_767_225_600).unwrap();
        let mut r = Record::new(key, category, Scope::Project, Source::Manual, "A fact", now);
        r.meta.id = record_id.into();
        let text = render_record(&r).unwrap();
        Row {
            key: key.into(),
            hash: blake3::hash(text.as_bytes()).to_hex().to_string(),
            body: Some(text),
            ..pulled(id, 0)
        }
    }

    /// Host b's session `key` with one passage, as the server row `id`.
    fn pulled_source(id: i64, key: &str, text: &str) -> Row {
        let doc = SourceDoc {
            format: "claude-code".into(),
            session: Some(SessionDoc {
                session_id: key.into(),
                launcher: "claude-code".into(),
                parent_id: None,
                title: None,
                cwd: None,
                git_branch: None,
                first_ts: None,
                did: vec![],
                passages: vec![PassageDoc {
                    msg: 0,
                    text: text.into(),
                    message_ids: vec!["m0".into()],
                    roles: vec!["user".into()],
                    speakers: vec![],
                    first_ts: None,
                    last_ts: None,
                    spans: vec![],
                }],
            }),
            tickets: vec![],
        };
        let body = serde_json::to_string(&doc).unwrap();
        Row {
            id,
            kind: Kind::Source,
            key: key.into(),
            host: "b".into(),
            author: None,
            hash: blake3::hash(body.as_bytes()).to_hex().to_string(),
            deleted: false,
            body: Some(body),
        }
    }

    fn secure_delete(conn: &Connection) -> i64 {
        conn.query_row("PRAGMA secure_delete", [], |r| r.get(0))
            .unwrap()
    }

    /// A fresh host wrote 3.9x the index it built pulling 1,000,000
    /// passages, much of it the pages FTS5's merges freed written again as
    /// zeros. A batch that only adds sources not held here runs with
    /// `secure_delete = FAST`; one with a tombstone or a new version of a
    /// source here keeps it on, and the writer has it on again after.
    #[test]
    fn r36_a_pull_that_only_adds_sources_leaves_freed_pages_unzeroed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = scope_dir(&tmp);
        let mut db = Db::open(&dir.index_path(), OpenMode::ReadWrite).unwrap();
        let conn = db.writer().unwrap();
        let (t, me) = (target(&dir), host_a());
        let mut report = ScopeReport::default();
        let rows = vec![
            pulled_source(1, "b/one", "alpha deploys on port 8080"),
            pulled_source(2, "b/two", "beta rolls back the canary"),
        ];
        assert!(adds_only(conn, &rows).unwrap());
        apply_batch(conn, &t, &me, rows, true, &mut report).unwrap();
        assert_eq!(report.passages_pulled, 2);
        assert_eq!(secure_delete(conn), 1, "secure_delete is not back on");

        let newer = pulled_source(3, "b/one", "alpha moved to port 9090");
        assert!(!adds_only(conn, std::slice::from_ref(&newer)).unwrap());
        let tombstone = Row {
            deleted: true,
            body: None,
            ..pulled_source(4, "b/two", "")
        };
        assert!(!adds_only(conn, std::slice::from_ref(&tombstone)).unwrap());
        let third = pulled_source(5, "b/three", "gamma");
        assert!(adds_only(conn, std::slice::from_ref(&third)).unwrap());
        apply_batch(conn, &t, &me, vec![newer, tombstone], false, &mut report).unwrap();
        assert_eq!(secure_delete(conn), 1);
        let text: String = conn
            .query_row(
                "SELECT group_concat(c1, ' | ') FROM chunks_fts_content",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(
            text.contains("port 9090") && !text.contains("8080") && !text.contains("canary"),
            "{text}"
        );
    }

    /// Pages of host b's sources `b/<id>`, one source to a page.
    fn source_pages(ids: std::ops::RangeInclusive<i64>) -> Vec<Page> {
        ids.map(|id| {
            let text = format!("passage {id} deploys the canary");
            (vec![pulled_source(id, &format!("b/{id}"), &text)], id)
        })
        .collect()
    }

    fn automerge_rows(conn: &Connection) -> Vec<(String, i64)> {
        let mut st = conn
            .prepare(
                "SELECT 'chunks', v FROM chunks_fts_config WHERE k = 'automerge'
                 UNION ALL SELECT 'tickets', v FROM tickets_fts_config WHERE k = 'automerge'",
            )
            .unwrap();
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        rows.map(Result::unwrap).collect()
    }

    fn passages(conn: &Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))
            .unwrap()
    }

    /// A pull writes pages of sources several to a transaction with FTS5's
    /// `automerge` raised inside it, and puts the setting back before each
    /// commit: after a pull, and after a pull killed mid-transaction, the
    /// tables' settings are what they were (none stored, or the value a
    /// user set), and the next pull finishes from the last commit.
    #[test]
    fn r36_a_pull_restores_fts5_merge_settings_even_when_killed() {
        let scenario = fail::FailScenario::setup();
        let tmp = tempfile::tempdir().unwrap();
        let dir = scope_dir(&tmp);
        let mut db = Db::open(&dir.index_path(), OpenMode::ReadWrite).unwrap();
        let conn = db.writer().unwrap();
        let me = host_a();
        let mut report = ScopeReport::default();

        // Killed writing the second page: the transaction held both.
        let mut pages = source_pages(1..=3).into_iter();
        let first = pages.next().unwrap();
        fail::cfg("sync-pull-page-written", "1*off->panic").unwrap();
        let killed = catch_unwind(AssertUnwindSafe(|| {
            let mut fetch = |_after: i64| Ok(pages.next());
            write_pages(conn, &me, first, &mut fetch, &mut report)
        }));
        fail::remove("sync-pull-page-written");
        assert!(killed.is_err(), "the fail point was not reached");
        assert_eq!(automerge_rows(conn), vec![]);
        assert_eq!((local::cursor(conn).unwrap(), passages(conn)), (0, 0));

        // The next pull writes all three in one transaction.
        let mut pages = source_pages(1..=3).into_iter();
        let first = pages.next().unwrap();
        let mut fetch = |_after: i64| Ok(pages.next());
        let (rest, cursor) = write_pages(conn, &me, first, &mut fetch, &mut report).unwrap();
        assert!(rest.is_none());
        assert_eq!(
            (cursor, local::cursor(conn).unwrap(), passages(conn)),
            (3, 3, 3)
        );
        assert_eq!(automerge_rows(conn), vec![]);

        // A value stored before is put back as it was.
        conn.execute(
            "INSERT INTO chunks_fts(chunks_fts, rank) VALUES('automerge', 8)",
            [],
        )
        .unwrap();
        let mut pages = source_pages(4..=5).into_iter();
        let first = pages.next().unwrap();
        let mut fetch = |_after: i64| Ok(pages.next());
        write_pages(conn, &me, first, &mut fetch, &mut report).unwrap();
        assert_eq!(automerge_rows(conn), vec![("chunks".to_string(), 8)]);
        assert_eq!(passages(conn), 5);
        scenario.teardown();
    }

    /// A pull holding the write lock across pages commits after the page
    /// it is writing as soon as another writer waits for its turn, so that
    /// writer waits one page at most.
    #[test]
    fn r36_a_pull_commits_when_another_writer_waits() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = scope_dir(&tmp);
        let mut db = Db::open(&dir.index_path(), OpenMode::ReadWrite).unwrap();
        let conn = db.writer().unwrap();
        let me = host_a();
        let mut report = ScopeReport::default();
        // A writer waiting for the write lock holds the turn.
        let turn = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(crate::store::turn_path(&dir.index_path()))
            .unwrap();
        turn.try_lock().unwrap();
        let mut pages = source_pages(1..=3).into_iter();
        let first = pages.next().unwrap();
        let mut fetch = |_after: i64| Ok(pages.next());
        let (rest, cursor) = write_pages(conn, &me, first, &mut fetch, &mut report).unwrap();
        assert_eq!(rest.map(|p| p.1), Some(2), "it went on writing");
        assert_eq!((cursor, local::cursor(conn).unwrap()), (1, 1));
        turn.unlock().unwrap();
    }

    /// A batch of pulled records that cannot be applied whole (one uses the
    /// id of a record written here under another key) is undone and
    /// applied one at a time: the records before the clash land, the clash
    /// is the single write's error, and nothing of it is left on disk.
    #[test]
    fn a_batch_that_fails_is_undone_and_applied_one_at_a_time() {
        // Fail points are global: wait for the tests that set them.
        let scenario = fail::FailScenario::setup();
        let tmp = tempfile::tempdir().unwrap();
        let dir = scope_dir(&tmp);
        let mut db = Db::open(&dir.index_path(), OpenMode::ReadWrite).unwrap();
        let conn = db.writer().unwrap();
        let (t, me) = (target(&dir), host_a());
        let mine = pulled_as(0, "mine", "shared-id", Category::Decisions);
        let mine_path = dir.records_dir().join("decisions/shared-id.md");
        std::fs::create_dir_all(mine_path.parent().unwrap()).unwrap();
        std::fs::write(&mine_path, mine.body.as_deref().unwrap()).unwrap();
        sync_records(conn, &dir, &me.limits, false, &Progress::hidden()).unwrap();

        let rows = vec![
            pulled_as(1, "first", "first-id", Category::Decisions),
            pulled_as(2, "theirs", "shared-id", Category::Procedures),
            pulled_as(3, "later", "later-id", Category::Decisions),
        ];
        let mut report = ScopeReport::default();
        let err = apply_batch(conn, &t, &me, rows, false, &mut report).unwrap_err();
        assert!(err.to_string().contains("duplicate record"), "{err}");
        assert!(local::state(conn, Kind::Record, "first").unwrap().is_some());
        assert!(dir.records_dir().join("decisions/first-id.md").exists());
        assert!(!dir.records_dir().join("procedures/shared-id.md").exists());
        assert!(!dir.records_dir().join("decisions/later-id.md").exists());
        assert_eq!(
            std::fs::read_to_string(&mine_path).unwrap(),
            mine.body.unwrap()
        );
        assert_eq!(
            local::cursor(conn).unwrap(),
            1,
            "the cursor passed the clash"
        );
        let temps = walkdir::WalkDir::new(dir.records_dir())
            .into_iter()
            .flatten()
            .filter(|e| crate::store::is_temp_name(&e.file_name().to_string_lossy()))
            .count();
        assert_eq!(temps, 0);
        scenario.teardown();
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
