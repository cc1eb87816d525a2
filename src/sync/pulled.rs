//! Pulled records applied a batch at a time, through the same steps as a
//! local record write (secret scan, validation, the Markdown file, its
//! index row), with one journal note, one flush of the files and one index
//! transaction for the whole batch instead of three commits and two fsyncs
//! per record: a fresh host pulling 20,000 records wrote 2.5 GB for a
//! 27 MB result and ran at a tenth of the speed of indexing them (issue 36
//! item 2).
//!
//! The order of a single write is kept: the hashes the files are about to
//! have are noted first ([`local::journal_pull`]), then the files change,
//! then the index rows, the exchanged hashes and the cursor commit
//! together. A sync killed anywhere in between is settled by the next one
//! as before. When the index transaction fails (a record file clashing
//! with one written here by hand), the files the batch changed are put
//! back and its records are applied one at a time, each with its own
//! error.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::exchange::{Me, Row, ScopeReport, Target};
use super::local::{self, Kind, MUST_PUSH};
use crate::error::{Error, Result};
use crate::index::{
    remove_record, screen_secrets, truncate_wal, upsert_records, RecordStore, SecretPolicy,
};
use crate::records::{parse_record, record_path, render_record, validate, Origin, Record, Source};
use crate::store::{atomic_write_many, begin_in_turn, ScopeDir, Undo};

/// What a pulled record does here.
enum Step {
    /// The local version stays (changed here, to be pushed).
    Keep,
    /// A person's record stays against an agent's, and is pushed again.
    KeepPerson,
    /// A tombstone for a key this host does not hold.
    Forget,
    /// An entry this host cannot take (it does not parse, or breaks a rule
    /// no local setting relaxes), and why: passed over, so one bad entry
    /// never stops the scope's sync; what is here stays.
    Skip(String),
    /// A tombstone over the unchanged record with this id, at this path.
    Delete { id: String, path: PathBuf },
    /// The pulled version replaces what is here (`from`: its old path,
    /// when it moves).
    Save {
        record: Box<Record>,
        text: String,
        path: PathBuf,
        from: Option<PathBuf>,
    },
}

impl Step {
    /// The files this step writes or removes.
    fn paths(&self) -> Vec<&Path> {
        match self {
            Step::Delete { path, .. } => vec![path],
            Step::Save { path, from, .. } => std::iter::once(path)
                .chain(from)
                .map(PathBuf::as_path)
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// Apply `rows` (records, in the server's order, each key once) and move
/// the cursor to `last` in the same transaction.
pub(super) fn apply_records(
    conn: &mut Connection,
    t: &Target,
    me: &Me,
    rows: &[Row],
    first: bool,
    last: i64,
    report: &mut ScopeReport,
) -> Result<()> {
    // The scope's record lock, held from the look-ups to the commit: a
    // concurrent `record add` waits for this batch, never for the network.
    let _lock = t.dir.lock_records()?;
    let steps = rows
        .iter()
        .map(|r| step(conn, t.dir, me, r, first))
        .collect::<Result<Vec<Step>>>()?;
    let tx = begin_in_turn(conn)?;
    for (row, s) in rows.iter().zip(&steps) {
        if let Step::Save { text, .. } = s {
            local::journal_pull(&tx, &row.key, &hash(text))?;
        }
    }
    tx.commit()?;
    fail::fail_point!("record-journaled");
    let undo = Undo::before(&t.dir.undo_dir(), steps.iter().flat_map(Step::paths))?;
    let done = write(conn, t.dir, rows, &steps, last);
    if let Err(e) = done {
        undo.restore()?;
        tracing::debug!("a batch of pulled records failed ({e}); applying them one at a time");
        return one_at_a_time(conn, t, me, rows, first, last, report);
    }
    fail::fail_point!("sync-pull-saved");
    if steps
        .iter()
        .any(|s| matches!(s, Step::Delete { .. } | Step::Save { from: Some(_), .. }))
    {
        // The deleted text's old page images leave the WAL.
        truncate_wal(conn);
    }
    for s in &steps {
        match s {
            Step::Keep | Step::KeepPerson => report.kept_local += 1,
            Step::Skip(why) => report.skipped.push(why.clone()),
            _ => {}
        }
    }
    report.pulled += rows.len();
    Ok(())
}

/// The files, then the index rows, exchanged hashes and cursor in one
/// transaction.
fn write(
    conn: &mut Connection,
    dir: &ScopeDir,
    rows: &[Row],
    steps: &[Step],
    last: i64,
) -> Result<()> {
    let files: Vec<(&Path, &[u8])> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Save { text, path, .. } => Some((path.as_path(), text.as_bytes())),
            _ => None,
        })
        .collect();
    // Begun before any file changes, as a single write is: waiting for the
    // write lock is the only wait.
    let tx = begin_in_turn(conn)?;
    atomic_write_many(&files)?;
    fail::fail_point!("record-file-written");
    for s in steps {
        let gone = match s {
            Step::Delete { path, .. } => path,
            Step::Save { from: Some(p), .. } => p,
            _ => continue,
        };
        std::fs::remove_file(gone).map_err(|e| Error::io("cannot remove", gone, e))?;
    }
    if steps.iter().any(|s| matches!(s, Step::Delete { .. })) {
        // A sync killed here has not moved the cursor: the next one pulls
        // these rows again before it pushes, so the deletions are not taken
        // for ones made here.
        fail::fail_point!("sync-pull-deleted");
    }
    for (row, s) in rows.iter().zip(steps) {
        let state = match s {
            Step::Keep | Step::Skip(_) => {
                local::forget_pull(&tx, &row.key)?;
                continue;
            }
            Step::KeepPerson => Some(MUST_PUSH.to_string()),
            Step::Forget => None,
            Step::Delete { path, .. } => {
                remove_record(&tx, dir, path)?;
                None
            }
            Step::Save { text, from, .. } => {
                if let Some(old) = from {
                    remove_record(&tx, dir, old)?;
                }
                Some(hash(text))
            }
        };
        local::set_state(&tx, Kind::Record, &row.key, state.as_deref())?;
        local::forget_pull(&tx, &row.key)?;
    }
    upsert_records(
        &tx,
        dir,
        steps.iter().filter_map(|s| match s {
            Step::Save {
                record, text, path, ..
            } => Some((&**record, path.as_path(), text.as_bytes())),
            _ => None,
        }),
    )?;
    local::set_cursor(&tx, last)?;
    tx.commit()?;
    Ok(())
}

/// The rows of a batch that failed, each as a single write (its own error,
/// if it has one). The caller holds the record lock.
fn one_at_a_time(
    conn: &mut Connection,
    t: &Target,
    me: &Me,
    rows: &[Row],
    first: bool,
    last: i64,
    report: &mut ScopeReport,
) -> Result<()> {
    for row in rows {
        let applied = apply_one(conn, t.dir, me, row, first)?;
        let tx = begin_in_turn(conn)?;
        match applied {
            Applied::State(h) => local::set_state(&tx, Kind::Record, &row.key, h.as_deref())?,
            Applied::Kept => report.kept_local += 1,
            Applied::Skipped(why) => report.skipped.push(why),
        }
        local::forget_pull(&tx, &row.key)?;
        local::set_cursor(&tx, row.id)?;
        tx.commit()?;
        report.pulled += 1;
    }
    let tx = begin_in_turn(conn)?;
    local::set_cursor(&tx, last)?;
    tx.commit()?;
    Ok(())
}

/// What one pulled record did here.
pub(super) enum Applied {
    /// The new `sync_state` hash (`None`: forget the key).
    State(Option<String>),
    /// The local version stays and will be pushed.
    Kept,
    /// Passed over, and why (see [`Step::Skip`]).
    Skipped(String),
}

/// Apply one pulled record as a single write through the record store
/// (its own journal note, file and transaction). The caller holds the
/// record lock and records the outcome.
pub(super) fn apply_one(
    conn: &mut Connection,
    dir: &ScopeDir,
    me: &Me,
    row: &Row,
    first: bool,
) -> Result<Applied> {
    let mut store = RecordStore {
        dir,
        conn,
        limits: me.limits,
        gate: None,
    };
    match step(store.conn, dir, me, row, first)? {
        Step::Keep => Ok(Applied::Kept),
        Step::Skip(why) => Ok(Applied::Skipped(why)),
        Step::KeepPerson => {
            // A person's record is never replaced by an agent's: keep it
            // and push it again, so it wins on every host.
            let tx = begin_in_turn(store.conn)?;
            local::set_state(&tx, Kind::Record, &row.key, Some(MUST_PUSH))?;
            tx.commit()?;
            Ok(Applied::Kept)
        }
        Step::Forget => Ok(Applied::State(None)),
        Step::Delete { id, .. } => {
            store.delete(&id)?;
            // A sync killed here has not moved the cursor: the next one
            // pulls this row (or a newer version of the key) again before
            // it pushes, so the deletion is not taken for one made here.
            fail::fail_point!("sync-pull-deleted");
            Ok(Applied::State(None))
        }
        Step::Save {
            record, path, from, ..
        } => {
            let journal = |c: &Connection, hash: &str| local::journal_pull(c, &row.key, hash);
            let previous = from.or(Some(path));
            store.save_journaled(*record, previous.as_ref(), SecretPolicy::Redact, &journal)?;
            fail::fail_point!("sync-pull-saved");
            let now_hash = local::record_by_key(conn, &row.key)?.map(|r| r.hash);
            Ok(Applied::State(now_hash))
        }
    }
}

/// What one pulled record does here, and the file it writes, screened and
/// validated as a local write's is. A change made here and not yet pushed
/// stays, unless it is an agent's and a person's version arrives (the
/// server would keep the person's anyway); a person's record stays
/// against an agent's version. A deletion made here and not yet pushed is
/// such a change: the tombstone goes next, after the pulled version.
fn step(conn: &Connection, dir: &ScopeDir, me: &Me, row: &Row, first: bool) -> Result<Step> {
    let here = local::record_by_key(conn, &row.key)?;
    let known = local::state(conn, Kind::Record, &row.key)?;
    let changed_here = match &here {
        Some(h) => known.as_deref() != Some(h.hash.as_str()) && !(first && known.is_none()),
        None => known.is_some(),
    };
    let Some(body) = row.body.as_deref().filter(|_| !row.deleted) else {
        return Ok(match (&here, changed_here) {
            (Some(_), true) => Step::Keep,
            (Some(h), false) => Step::Delete {
                id: h.id.clone(),
                path: dir.root.join(&h.path),
            },
            // Deleted here too, or never here: nothing is left to push.
            (None, _) => Step::Forget,
        });
    };
    if here.is_none() && changed_here {
        return Ok(Step::Keep);
    }
    let where_ = Path::new("sync").join(&row.host).join(&row.key);
    let skip = |e: Error| {
        Step::Skip(format!(
            "{e}; passed over, the rest is synced: this host takes its next version, once the host that wrote it ({}) fixes it (or, for a limit, once this host's is raised)",
            row.host
        ))
    };
    let limits = &me.limits;
    let mut record = match parse_record(body, &where_, limits) {
        Ok(r) => r,
        Err(e) => return Ok(skip(e)),
    };
    if let Some(h) = &here {
        let person_here = h.source == Source::Manual.as_str();
        let person_there = record.meta.source == Source::Manual;
        if person_here && !person_there {
            return Ok(Step::KeepPerson);
        }
        let persons_over_agents = person_there && !person_here;
        if changed_here && !persons_over_agents {
            return Ok(Step::Keep);
        }
    }
    // Provenance is the server's row, never the sender's file: a host
    // cannot sign as someone else by writing `origin:` by hand, and a
    // record edited on another host names who edited it last.
    let origin = record.meta.origin.get_or_insert_with(Origin::default);
    origin.extra.insert("host".into(), row.host.clone().into());
    match &row.author {
        Some(a) => origin.extra.insert("author".into(), a.clone().into()),
        None => origin.extra.remove("author"),
    };
    screen_secrets(&mut record, SecretPolicy::Redact)?;
    if let Err((_, e)) = validate(&record, limits) {
        return Ok(skip(e));
    }
    let text = render_record(&record)?;
    let path = record_path(dir, record.meta.category, &record.meta.id);
    let from = here
        .map(|h| dir.root.join(h.path))
        .filter(|old| *old != path);
    Ok(Step::Save {
        record: Box::new(record),
        text,
        path,
        from,
    })
}

/// The hash the index computes from a record file's bytes.
fn hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}
