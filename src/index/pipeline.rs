//! The indexing pipeline: stat every source, skip the unchanged ones on the
//! stat alone, prepare the rest on rayon threads, and write them from one
//! thread in batched transactions. A bounded channel between the two keeps
//! memory flat whatever the size of the corpus, and a large transcript
//! arrives as parts of bounded size (see `ingest::stream`), so it does
//! whatever the size of one file. The single writer is the bottleneck, so
//! everything that does not need the database (parsing, chunking, counting
//! terms, encoding JSON columns) happens before it.
//!
//! The writer commits after every part of a source read in parts: each part
//! holds the source state at its end, so a run stopped between parts leaves
//! a source the next run continues by appending, and the write lock is
//! released between parts for other writers (`recall record`, `remember`).
//!
//! A source is known by its stored path, which is the file's path redacted
//! when it holds a secret (`secrets::redact_path`: the same file always
//! gives the same text), so each file's row is found by redacting the path
//! in hand; rows an older version stored with the secret are renamed first
//! (`sources::redact_stored_paths`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};
use std::time::Instant;

use rayon::prelude::*;
use rusqlite::Connection;
use serde::Serialize;

use super::budget::Budget;
use super::sources::{delete_source, load_sources, redact_stored_paths, write_source, Ready};
use super::Progress;
use crate::error::Result;
use crate::ingest::discover::Input;
use crate::ingest::{
    current_parser_version, prepare, source_key, Action, Format, IngestOptions, Job, Prepared,
    SourceState,
};
use crate::store::file_mtime_ns;
use crate::store::TermDeltas;

/// Commit after this many chunks (or sources) are pending, or after this
/// long. The time is what another writer (`recall record`, `remember`)
/// may wait for the lock, plus the part or source being written (issue 26
/// item 7: "well under a second"), and what an interrupted run loses.
/// Each commit also makes FTS5 write its pending terms as a segment to
/// merge: on a 400 MB transcript a commit after every 8 MB part took 1.15x
/// the CPU of one every 250 ms; on a 100 MB corpus of small files, 250 ms
/// costs nothing against 1 s.
const BATCH_CHUNKS: usize = 20_000;
const BATCH_SOURCES: usize = 500;
const BATCH_TIME: std::time::Duration = std::time::Duration::from_millis(250);
/// Prepared sources waiting for the writer, at most.
const CHANNEL_BOUND: usize = 8;
/// Bytes of prepared parts waiting for the writer, at most (counted by the
/// input they came from; see [`Budget`]): two segments of a large
/// transcript. Eight waiting parts were 80 MB of a run's peak memory.
const QUEUED_BYTES: u64 = 2 * crate::ingest::SEGMENT_BYTES as u64;
/// Line problems printed per source before the rest are only counted.
const PROBLEMS_SHOWN: usize = 10;

/// How to run a batch.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Re-read every source, ignoring stored state.
    pub full: bool,
    /// Remove sources whose file no longer exists.
    pub prune: bool,
    /// Draw a progress bar (on a TTY).
    pub progress: bool,
    /// Unix seconds, stored as `indexed_at`.
    pub now: i64,
    /// The embedding model (`[semantic] model`): each passage's vector is
    /// computed by the preparers and stored beside its row. `None`: no
    /// vectors.
    pub embedder: Option<std::sync::Arc<crate::semantic::Model>>,
    /// Set (by `recall index`'s Ctrl-C and SIGTERM handler) to stop at the
    /// next commit: no new source is read, what was written is kept, and
    /// the report says [`interrupted`](IndexReport::interrupted).
    pub stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl RunOptions {
    fn stopped(&self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// What a batch did. `failed` sources could not be indexed at all;
/// `problems` are bad lines inside sources that were indexed.
#[derive(Debug, Default, Clone, Serialize)]
pub struct IndexReport {
    pub files: usize,
    pub indexed: usize,
    pub appended: usize,
    pub unchanged: usize,
    /// Files found in folders that are not transcripts or tickets (binary,
    /// another kind of file) and empty files; each is named in the output.
    pub skipped: usize,
    pub removed: usize,
    pub failed: usize,
    pub problems: usize,
    /// Lines of types the parsers do not read (a launcher's newer line
    /// types): skipped and counted, not problems.
    pub unknown_lines: usize,
    /// Sources whose last line was unfinished (a transcript still being
    /// written): reported, left for the next run, and not a failure.
    pub incomplete: usize,
    pub chunks: usize,
    pub tickets: usize,
    pub redactions: usize,
    pub bytes: u64,
    pub elapsed_ms: u64,
    /// Stopped before the end (see [`RunOptions::stop`]): the counts are
    /// of what was done, and the next run does the rest.
    pub interrupted: bool,
}

impl IndexReport {
    /// Whether any source failed or had bad lines.
    pub fn has_failures(&self) -> bool {
        self.failed > 0 || self.problems > 0
    }

    /// The one-line summary printed after every run.
    pub fn summary(&self) -> String {
        let secs = (self.elapsed_ms as f64 / 1000.0).max(1e-3);
        let unknown = match self.unknown_lines {
            0 => String::new(),
            1 => " (1 line of a type recall does not read skipped)".to_string(),
            n => format!(" ({n} lines of types recall does not read skipped)"),
        };
        format!(
            "index: {} files: {} indexed, {} appended, {} unchanged, {} skipped, {} removed, {} failed; {} problems{unknown}, {} unfinished last lines; {} chunks, {} tickets, {} secrets redacted; {:.1} MB in {:.2}s ({:.1} MB/s, {:.0} chunks/s)",
            self.files, self.indexed, self.appended, self.unchanged, self.skipped, self.removed, self.failed, self.problems, self.incomplete,
            self.chunks, self.tickets, self.redactions,
            self.bytes as f64 / 1e6, secs, self.bytes as f64 / 1e6 / secs, self.chunks as f64 / secs
        )
    }
}

/// Index `paths` (files only; discovery happens before) into `conn`.
/// `report_line` receives every `path:line: message` to show the user.
#[tracing::instrument(level = "debug", skip_all, fields(inputs = paths.len(), full = run.full))]
pub fn index_sources(
    conn: &mut Connection,
    paths: &[Input],
    opts: &IngestOptions,
    run: &RunOptions,
    report_line: &mut dyn FnMut(String),
) -> Result<IndexReport> {
    let writer = Writer {
        commit_every: BATCH_TIME,
        watch: &mut |_| Ok(()),
    };
    index_sources_with(conn, paths, opts, run, report_line, writer)
}

/// What the writer just did, for a [`Watch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// A part was written, not yet committed.
    Written,
    /// A transaction was committed: the write lock is free.
    Committed,
}

/// Sees every step of the writer; an error stops the run there as an
/// error of the writer would (tests stop a run between parts with it).
pub(crate) type Watch<'a> = dyn FnMut(Step) -> Result<()> + 'a;

/// How the writer commits, and who watches it.
pub(crate) struct Writer<'w> {
    /// Commit once this long went by since the batch began
    /// ([`BATCH_TIME`]; tests commit after every part).
    pub commit_every: std::time::Duration,
    pub watch: &'w mut Watch<'w>,
}

/// [`index_sources`], with the writer's commits set by `writer`.
pub(crate) fn index_sources_with(
    conn: &mut Connection,
    paths: &[Input],
    opts: &IngestOptions,
    run: &RunOptions,
    report_line: &mut dyn FnMut(String),
    writer: Writer,
) -> Result<IndexReport> {
    let t0 = Instant::now();
    let mut report = IndexReport {
        files: paths.len(),
        ..IndexReport::default()
    };
    redact_stored_paths(conn)?;
    let mut stored = load_sources(conn)?;
    // The stored sources read again this run, by stored path: one that is
    // now skipped (emptied, or no longer a transcript) loses its rows.
    let mut indexed_before = std::collections::HashMap::new();
    let mut jobs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for input in paths {
        let p = &input.path;
        let key = source_key(p);
        if !seen.insert(key.clone()) {
            report.files -= 1;
            continue;
        }
        // The path as given, redacted when it holds a secret.
        let shown = || crate::secrets::redact_path(&p.to_string_lossy()).into_owned();
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            // Named to be pruned, and gone: what was indexed from it is
            // removed below, which is what was asked, not a failure.
            Err(e)
                if run.prune
                    && e.kind() == std::io::ErrorKind::NotFound
                    && stored.contains_key(crate::secrets::redact_path(&key).as_ref()) =>
            {
                report.files -= 1;
                continue;
            }
            Err(e) => {
                report.failed += 1;
                report_line(format!("{}: cannot read: {e}", shown()));
                continue;
            }
        };
        // A folder here is a linked one the walk does not follow, or one it
        // could not read (`ingest::discover`).
        let linked = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
        if meta.is_dir() && linked {
            report.skipped += 1;
            report_line(format!(
                "{}: skipped: a linked folder is not walked (a link loop would never end); name it on the command line to index it",
                shown()
            ));
            continue;
        }
        if meta.is_dir() {
            let why = std::fs::read_dir(p)
                .err()
                .map_or_else(|| "it could not be listed".to_string(), |e| e.to_string());
            report.failed += 1;
            report_line(format!(
                "{}: cannot read the folder ({why}): its files were not indexed, and --prune keeps what was indexed from it",
                shown()
            ));
            continue;
        }
        if let Some(why) = unreadable_kind(&meta) {
            report.failed += 1;
            report_line(format!("{}: {why}", shown()));
            continue;
        }
        let (size, mtime) = (meta.len() as i64, file_mtime_ns(&meta));
        let old = stored.remove(crate::secrets::redact_path(&key).as_ref());
        if let Some(o) = &old {
            indexed_before.insert(o.path.clone(), o.id);
        }
        // A `--format` or `--kind` other than the one the file was read as
        // reads it again: the user says it is something else.
        let as_told = |stored: &str| {
            let stored = stored.parse::<Format>().ok();
            opts.format.is_none_or(|f| stored == Some(f))
                && opts
                    .kind
                    .is_none_or(|k| stored.map(Format::kind) == Some(k))
        };
        let same = old
            .as_ref()
            .is_some_and(|s| stored_as_it_is(s, size, mtime) && as_told(&s.format));
        if same && !run.full {
            report.unchanged += 1;
            continue;
        }
        jobs.push(Job {
            path: PathBuf::from(key),
            explicit: input.explicit,
            size,
            mtime,
            stored: old.filter(|_| !run.full),
        });
    }
    let total_bytes: u64 = jobs.iter().map(|j| j.size as u64).sum();
    let progress = Progress::bytes(total_bytes, run.progress && !jobs.is_empty());
    // `--full` replaces every source it is given: one rebuild of the FTS
    // indexes at the end instead of a secure delete per row (see
    // `store::bulk`).
    let bulk = run.full && !jobs.is_empty();
    if bulk {
        crate::store::bulk::begin(conn)?;
    }
    let mut out = Output {
        report: &mut report,
        skipped: Vec::new(),
        report_line,
        progress: &progress,
        commit_every: writer.commit_every,
        watch: writer.watch,
    };
    let written = write_all(conn, jobs, opts, run, &mut out);
    if bulk {
        crate::store::bulk::finish(conn)?;
    }
    written?;
    out.report.interrupted = run.stopped();
    // "A changed or truncated file has its rows replaced": one that is
    // now empty or not a transcript has nothing to replace them with, and
    // its old text must not keep answering queries.
    let skipped = std::mem::take(&mut out.skipped);
    let mut dropped = Vec::new();
    for path in &skipped {
        if let Some(&id) = indexed_before.get(path) {
            dropped.push(id);
            (out.report_line)(format!(
                "{path}: what was indexed from it before is removed"
            ));
        }
    }
    drop(out);
    report.removed += delete_sources(conn, &dropped)?;
    progress.finish();
    if run.prune && !report.interrupted {
        report.removed += prune(conn, stored.values().map(|s| (s.id, s.path.as_str())))?;
    }
    report.elapsed_ms = t0.elapsed().as_millis() as u64;
    Ok(report)
}

/// Where the writer reports: the counts, the lines shown, the progress bar
/// and the watch; and how often it commits.
struct Output<'r, 'w> {
    report: &'r mut IndexReport,
    /// The stored paths of the sources skipped this run.
    skipped: Vec<String>,
    report_line: &'r mut dyn FnMut(String),
    progress: &'r Progress,
    commit_every: std::time::Duration,
    watch: &'w mut Watch<'w>,
}

#[tracing::instrument(level = "debug", skip_all, fields(jobs = jobs.len()))]
fn write_all(
    conn: &mut Connection,
    jobs: Vec<Job>,
    opts: &IngestOptions,
    run: &RunOptions,
    out: &mut Output,
) -> Result<()> {
    if jobs.is_empty() {
        return Ok(());
    }
    let (tx, rx) = sync_channel::<Ready>(CHANNEL_BOUND);
    let budget = Budget::new(QUEUED_BYTES);
    std::thread::scope(|scope| -> Result<()> {
        let budget = &budget;
        scope.spawn(move || {
            let send_all = move || {
                jobs.into_par_iter().for_each_with(tx, |tx, job| {
                    if run.stopped() {
                        return;
                    }
                    // `false` when the writer stopped (an error, or told
                    // to): nothing left to do.
                    prepare(&job, opts, &mut |p| {
                        budget.take(p.bytes)
                            && tx
                                .send(Ready::new(p).with_vectors(run.embedder.as_deref()))
                                .is_ok()
                    });
                });
            };
            match preparers() {
                Some(pool) => pool.install(send_all),
                None => send_all(),
            }
        });
        let written = write_each(conn, rx, budget, run, out);
        // Preparers waiting for room would wait forever after an error.
        budget.close();
        written
    })
}

/// The writer: write every prepared part as it comes, in batched
/// transactions, giving its bytes back to `budget` once written.
///
/// A transaction is open only for a batch: the writer waits for the first
/// part of a batch holding no lock, and commits when the batch is full,
/// when `commit_every` has gone by since the batch began, or when no part
/// arrives before then. Before, the next transaction began right after a
/// commit and stayed open however long the preparers took (a niced
/// `recall index` on a busy machine held the lock 540 ms for 250 ms of
/// writing), and a record write waited behind it.
fn write_each(
    conn: &mut Connection,
    rx: Receiver<Ready>,
    budget: &Budget,
    run: &RunOptions,
    out: &mut Output,
) -> Result<()> {
    let mut stats = TermDeltas::default();
    // Blocks for the first part of each batch with no transaction open.
    while let Ok(first) = rx.recv() {
        if run.stopped() {
            break;
        }
        let Some(first) = to_write(first, budget, out) else {
            continue;
        };
        let since_commit = Instant::now();
        let txn = crate::store::begin_in_turn(conn)?;
        let mut pending = (0usize, 0usize);
        let mut next = Some(first);
        while let Some(ready) = next.take() {
            let weight = ready.prepared.bytes;
            let w = write_source(&txn, ready, run.now, &mut stats)?;
            budget.give(weight);
            (out.watch)(Step::Written)?;
            out.report.chunks += w.chunks;
            out.report.tickets += w.tickets;
            out.progress
                .set_message(format!("{} chunks", out.report.chunks));
            pending = (pending.0 + w.chunks, pending.1 + 1);
            // Every commit lets a waiting writer in, and is a point a
            // stopped run keeps what it wrote up to: between two sources or
            // between two parts of one, each part carrying its source's
            // state.
            if pending.0 >= BATCH_CHUNKS || pending.1 >= BATCH_SOURCES || run.stopped() {
                break;
            }
            while next.is_none() {
                let Some(left) = out.commit_every.checked_sub(since_commit.elapsed()) else {
                    break;
                };
                match rx.recv_timeout(left) {
                    Ok(r) => next = to_write(r, budget, out),
                    Err(_) => break,
                }
            }
        }
        stats.flush(&txn)?;
        txn.commit()?;
        tracing::debug!(
            chunks = pending.0,
            sources = pending.1,
            held_ms = since_commit.elapsed().as_millis() as u64,
            "committed a batch"
        );
        crate::store::bound_wal(conn);
        (out.watch)(Step::Committed)?;
    }
    Ok(())
}

/// Count `ready` in the report; `None` when it has nothing to write (a
/// failed or skipped source), its bytes given back to `budget`.
fn to_write(ready: Ready, budget: &Budget, out: &mut Output) -> Option<Ready> {
    let p = &ready.prepared;
    out.progress.inc(p.part.read);
    account(p, out.report, out.report_line);
    if p.action == Action::Skipped && p.part.last {
        out.skipped.push(p.path.clone());
    }
    if matches!(p.action, Action::Failed | Action::Skipped) {
        budget.give(p.bytes);
        return None;
    }
    Some(ready)
}

/// The threads that prepare sources: every core but one, which is left to
/// the writer. The single writer is the bottleneck, and with a preparer on
/// every core it shared its core with one: on 2 cores, 100 MB of
/// transcripts took 1.04 s with two preparers and 0.97 s with one (median
/// of 8). `None` (use rayon's global pool) when the pool cannot be built.
fn preparers() -> Option<rayon::ThreadPool> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    rayon::ThreadPoolBuilder::new()
        .num_threads(cores.saturating_sub(1).max(1))
        .thread_name(|i| format!("recall-prepare-{i}"))
        .build()
        .map_err(|e| tracing::debug!("no preparer pool: {e}"))
        .ok()
}

/// Count a prepared part and show its problems: a source counts once, at
/// its last part, and shows at most [`PROBLEMS_SHOWN`] problems over all
/// its parts.
fn account(p: &Prepared, report: &mut IndexReport, report_line: &mut dyn FnMut(String)) {
    report.bytes += p.bytes;
    report.redactions += p.redactions;
    if p.part.last {
        count(p, report, report_line);
    }
    let (cut, real): (Vec<_>, Vec<_>) = p
        .problems
        .iter()
        .partition(|x| x.message.starts_with("truncated last line"));
    report.problems += real.len();
    report.unknown_lines += p.unknown_lines;
    report.incomplete += usize::from(!cut.is_empty());
    let room = PROBLEMS_SHOWN.saturating_sub(p.part.problems_before);
    for x in p.problems.iter().take(room) {
        report_line(format!("{}:{}: {}", p.path, x.line, x.message));
    }
    let all = p.part.problems_before + p.problems.len();
    if p.part.last && all > PROBLEMS_SHOWN {
        report_line(format!(
            "{}: {} more problems not shown",
            p.path,
            all - PROBLEMS_SHOWN
        ));
    }
}

/// Whether the source stored as `s` is the file of `size` and `mtime` (ns)
/// read by today's parser: a run finds it unchanged.
fn stored_as_it_is(s: &SourceState, size: i64, mtime: i64) -> bool {
    s.size == size
        && s.mtime == mtime
        && current_parser_version(&s.format) == Some(s.parser_version)
}

/// Whether the file at `path` is indexed as it is now (of the sources
/// [`load_sources`] gave): `recall index` would find it unchanged.
pub fn indexed_as_it_is(stored: &HashMap<String, SourceState>, path: &Path) -> bool {
    let key = source_key(path);
    let Some(s) = stored.get(crate::secrets::redact_path(&key).as_ref()) else {
        return false;
    };
    std::fs::metadata(path).is_ok_and(|m| stored_as_it_is(s, m.len() as i64, file_mtime_ns(&m)))
}

/// Count a source by what it was: indexed, appended, unchanged, failed or
/// skipped.
fn count(p: &Prepared, report: &mut IndexReport, report_line: &mut dyn FnMut(String)) {
    match p.part.counts_as {
        Action::Failed => {
            report.failed += 1;
            report_line(format!(
                "{}: {}",
                p.path,
                p.error.as_deref().unwrap_or("failed")
            ));
        }
        Action::Skipped => {
            // Never silent: a file a folder walk passes over is named with
            // the reason, so a transcript taken for something else shows.
            report.skipped += 1;
            let why = p.error.as_deref().unwrap_or("not a transcript or ticket");
            report_line(format!("{}: skipped: {why}", p.path));
        }
        // A file touched but not grown: its stored prefix checked, nothing
        // after it to read. It is stored with its new time, and unchanged.
        Action::Append if p.part.index == 0 && p.bytes == 0 => report.unchanged += 1,
        Action::Append => report.appended += 1,
        Action::Replace => report.indexed += 1,
    }
}

/// Delete the given sources whose files are gone. Returns how many. A
/// stored path that was redacted is looked for by its parts. A file that
/// cannot be told to be there or not (a folder on its path that cannot
/// be read) is not gone: its rows may be the only copy left.
fn prune<'a>(
    conn: &mut Connection,
    candidates: impl Iterator<Item = (i64, &'a str)>,
) -> Result<usize> {
    let gone = |stored: &str| match std::path::Path::new(stored).try_exists() {
        Ok(false) => crate::secrets::find_path(std::path::Path::new(""), stored).is_none(),
        Ok(true) | Err(_) => false,
    };
    let gone: Vec<i64> = candidates
        .filter(|(_, path)| gone(path))
        .map(|(id, _)| id)
        .collect();
    delete_sources(conn, &gone)
}

/// Delete the sources `ids` and their rows in one transaction; returns
/// how many.
fn delete_sources(conn: &mut Connection, ids: &[i64]) -> Result<usize> {
    if ids.is_empty() {
        return Ok(0);
    }
    let tx = crate::store::begin_in_turn(conn)?;
    let mut stats = TermDeltas::default();
    for id in ids {
        delete_source(&tx, *id, &mut stats)?;
    }
    stats.flush(&tx)?;
    tx.commit()?;
    Ok(ids.len())
}

/// The largest source file read. A ticket or chat log is held in memory
/// whole; a transcript is read in segments (`ingest::stream`), but the
/// limit is checked on the stat, before the format is known.
pub const MAX_SOURCE_BYTES: u64 = 1 << 30;

/// Why a path cannot be indexed as a source, if it cannot: a FIFO or a
/// device (`/dev/zero`) would be read forever, and a file past
/// [`MAX_SOURCE_BYTES`] would be held in memory whole.
fn unreadable_kind(meta: &std::fs::Metadata) -> Option<String> {
    if !meta.is_file() {
        return Some(
            "not a regular file (a FIFO, device or socket is never indexed); pass a transcript or ticket file"
                .into(),
        );
    }
    (meta.len() > MAX_SOURCE_BYTES).then(|| {
        format!(
            "{:.1} GB is over the {} GB limit for one source; split the file",
            meta.len() as f64 / 1e9,
            MAX_SOURCE_BYTES >> 30
        )
    })
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
