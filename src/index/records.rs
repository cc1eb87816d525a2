//! Keeping the record rows of an index in step with the record files.
//!
//! Incremental by default: a file whose size and mtime match its row is
//! skipped on the stat alone; a changed stat with the same content hash only
//! refreshes the stat. Files are read and parsed in parallel with rayon; one
//! writer commits in batched transactions. A malformed file is reported with
//! `path:line` and skipped; it never aborts the batch and is never touched.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde::Serialize;

use super::Progress;
use crate::error::{Error, Result};
use crate::records::{parse_record, Category, Limits, Record};
use crate::store::{file_mtime_ns, ScopeDir, Table, TermDeltas};

const BATCH: usize = 2000;

/// What a sync did.
#[derive(Debug, Default, Clone, Serialize, PartialEq)]
pub struct SyncReport {
    pub scanned: usize,
    pub added: usize,
    pub updated: usize,
    pub removed: usize,
    pub unchanged: usize,
    /// `path:line: message` for every file that was skipped.
    pub errors: Vec<String>,
}

impl SyncReport {
    /// Add another report's counts to this one.
    pub fn absorb(&mut self, o: SyncReport) {
        self.scanned += o.scanned;
        self.added += o.added;
        self.updated += o.updated;
        self.removed += o.removed;
        self.unchanged += o.unchanged;
        self.errors.extend(o.errors);
    }
}

/// A file on disk, as seen by a stat.
struct Seen {
    rel: String,
    abs: PathBuf,
    size: i64,
    mtime: i64,
}

/// The row currently indexed for a path.
struct Row {
    rowid: i64,
    size: i64,
    mtime: i64,
    hash: String,
}

/// The outcome of reading one changed file.
enum Parsed {
    SameContent { rowid: i64, size: i64, mtime: i64 },
    Record(Box<(Record, String, Seen)>),
    Failed(String),
}

/// Every `*.md` file under the five category folders, plus errors for files
/// in places recall does not read.
fn scan(dir: &ScopeDir) -> (Vec<Seen>, Vec<String>) {
    let root = dir.records_dir();
    let mut seen = Vec::new();
    let mut errors = Vec::new();
    for cat in Category::ALL {
        let cdir = root.join(cat.as_str());
        let Ok(entries) = fs::read_dir(&cdir) else {
            continue;
        };
        for e in entries.flatten() {
            let abs = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || !name.ends_with(".md") {
                continue;
            }
            match e.metadata() {
                Ok(m) if m.is_file() => seen.push(Seen {
                    rel: format!("records/{}/{name}", cat.as_str()),
                    abs,
                    size: m.len() as i64,
                    mtime: file_mtime_ns(&m),
                }),
                Ok(_) => {}
                Err(err) => errors.push(format!("{}: cannot stat: {err}", abs.display())),
            }
        }
    }
    (seen, errors)
}

fn load_rows(conn: &Connection) -> Result<HashMap<String, Row>> {
    let mut st =
        conn.prepare("SELECT path, rowid, file_size, file_mtime, file_hash FROM records")?;
    let rows = st.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            Row {
                rowid: r.get(1)?,
                size: r.get(2)?,
                mtime: r.get(3)?,
                hash: r.get(4)?,
            },
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Read and parse one file. Unless `full`, a file whose bytes hash the same
/// as its row's is not parsed again.
fn read_one(s: Seen, old: Option<&Row>, limits: &Limits, full: bool) -> Parsed {
    let bytes = match fs::read(&s.abs) {
        Ok(b) => b,
        Err(e) => return Parsed::Failed(format!("{}: cannot read: {e}", s.abs.display())),
    };
    let hash = blake3::hash(&bytes).to_hex().to_string();
    if let Some(o) = old.filter(|o| !full && o.hash == hash) {
        return Parsed::SameContent {
            rowid: o.rowid,
            size: s.size,
            mtime: s.mtime,
        };
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let line = 1 + e.as_bytes()[..e.utf8_error().valid_up_to()]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            return Parsed::Failed(format!("{}:{line}: invalid UTF-8", s.abs.display()));
        }
    };
    match parse_record(&text, &s.abs, limits) {
        Ok(r) => Parsed::Record(Box::new((r, hash, s))),
        Err(e) => Parsed::Failed(e.to_string()),
    }
}

/// Bring the record rows of `conn` in step with the files of `dir`.
/// `full` re-reads every file instead of trusting stats.
pub fn sync_records(
    conn: &mut Connection,
    dir: &ScopeDir,
    limits: &Limits,
    full: bool,
    progress: &Progress,
) -> Result<SyncReport> {
    let (seen, mut errors) = scan(dir);
    let rows = load_rows(conn)?;
    let mut report = SyncReport {
        scanned: seen.len(),
        ..SyncReport::default()
    };
    let on_disk: std::collections::HashSet<&str> = seen.iter().map(|s| s.rel.as_str()).collect();
    let gone: Vec<i64> = rows
        .iter()
        .filter(|(p, _)| !on_disk.contains(p.as_str()))
        .map(|(_, r)| r.rowid)
        .collect();
    let changed: Vec<Seen> = seen
        .into_iter()
        .filter(|s| {
            full || rows
                .get(&s.rel)
                .is_none_or(|r| r.size != s.size || r.mtime != s.mtime)
        })
        .collect();
    report.unchanged = report.scanned - changed.len();

    let tx = conn.transaction()?;
    let mut stats = TermDeltas::default();
    for rowid in &gone {
        delete_row(&tx, *rowid, &mut stats)?;
    }
    report.removed = gone.len();
    stats.flush(&tx)?;
    tx.commit()?;

    progress.inc(report.unchanged as u64);
    let mut stats = TermDeltas::default();
    for batch in changed
        .chunks(BATCH)
        .map(|c| c.iter().map(clone_seen).collect::<Vec<_>>())
    {
        let parsed: Vec<Parsed> = batch
            .into_par_iter()
            .map(|s| {
                let old = rows.get(&s.rel);
                read_one(s, old, limits, full)
            })
            .collect();
        let tx = conn.transaction()?;
        for p in parsed {
            progress.inc(1);
            apply(&tx, p, &rows, &mut report, &mut errors, &mut stats)?;
        }
        stats.flush(&tx)?;
        tx.commit()?;
    }
    if full {
        // Every row was rewritten from its file; now rebuild the inverted
        // index from those rows, so damage to it (what `doctor` reports as
        // a malformed FTS5 index) is repaired too.
        conn.execute("INSERT INTO records_fts(records_fts) VALUES('rebuild')", [])?;
        crate::store::recount(conn, Table::Records)?;
    }
    remember_dirs(conn, dir)?;
    report.errors = errors;
    Ok(report)
}

fn clone_seen(s: &Seen) -> Seen {
    Seen {
        rel: s.rel.clone(),
        abs: s.abs.clone(),
        size: s.size,
        mtime: s.mtime,
    }
}

fn apply(
    tx: &Transaction,
    p: Parsed,
    rows: &HashMap<String, Row>,
    report: &mut SyncReport,
    errors: &mut Vec<String>,
    stats: &mut TermDeltas,
) -> Result<()> {
    match p {
        Parsed::Failed(msg) => errors.push(msg),
        Parsed::SameContent { rowid, size, mtime } => {
            tx.prepare_cached("UPDATE records SET file_size=?2, file_mtime=?3 WHERE rowid=?1")?
                .execute(params![rowid, size, mtime])?;
            report.unchanged += 1;
        }
        Parsed::Record(b) => {
            let (record, hash, seen) = *b;
            let existed = rows.contains_key(&seen.rel);
            let stat = FileStat {
                rel: &seen.rel,
                size: seen.size,
                mtime: seen.mtime,
                hash: &hash,
            };
            match write_row(tx, &record, &stat, stats) {
                Ok(()) if existed => report.updated += 1,
                Ok(()) => report.added += 1,
                Err(Error::Invalid(msg)) => errors.push(format!("{}:1: {msg}", seen.abs.display())),
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// The file facts stored beside a record row.
pub(crate) struct FileStat<'a> {
    pub rel: &'a str,
    pub size: i64,
    pub mtime: i64,
    pub hash: &'a str,
}

/// Insert or replace the row (and FTS row) of one record file. A key or id
/// already used by another file is an [`Error::Invalid`].
fn write_row(tx: &Transaction, r: &Record, f: &FileStat, stats: &mut TermDeltas) -> Result<()> {
    let m = &r.meta;
    let by_path: Option<i64> = tx
        .prepare_cached("SELECT rowid FROM records WHERE path=?1")?
        .query_row([f.rel], |x| x.get(0))
        .optional()?;
    let clash: Option<String> = tx
        .prepare_cached("SELECT path FROM records WHERE (key=?1 OR id=?2) AND path<>?3")?
        .query_row(params![m.key, m.id, f.rel], |x| x.get(0))
        .optional()?;
    if let Some(other) = clash {
        return Err(Error::invalid(format!(
            "duplicate record: key '{}' or id '{}' is also used by {other}; give one of them a new key and id",
            m.key, m.id
        )));
    }
    if let Some(rowid) = by_path {
        delete_row(tx, rowid, stats)?;
    }
    tx.prepare_cached(
        "INSERT INTO records(id, key, category, source, path, created, updated, pinned,
            importance, status, temporal, expires, confidence, file_size, file_mtime, file_hash)
         VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)",
    )?
    .execute(params![
        m.id,
        m.key,
        m.category.as_str(),
        m.source.as_str(),
        f.rel,
        m.created.as_second(),
        m.updated.as_second(),
        m.pinned,
        m.importance,
        m.status.as_str(),
        m.temporal.as_str(),
        m.expires.map(|t| t.as_second()),
        m.confidence,
        f.size,
        f.mtime,
        f.hash,
    ])?;
    let rowid = tx.last_insert_rowid();
    let mut tags = m.keywords.join(" ");
    for a in &m.aliases {
        tags.push(' ');
        tags.push_str(a);
    }
    let aux = crate::text::aux_terms(&format!("{} {} {}", m.key, tags, r.body));
    tx.prepare_cached(
        "INSERT INTO records_fts(rowid, key, body, tags, aux) VALUES(?1,?2,?3,?4,?5)",
    )?
    .execute(params![rowid, m.key, r.body, tags, aux])?;
    stats.add(Table::Records, &[&m.key, &r.body, &tags, &aux]);
    Ok(())
}

fn delete_row(tx: &Connection, rowid: i64, stats: &mut TermDeltas) -> Result<()> {
    stats.remove_rows(tx, Table::Records, "SELECT ?1", rowid)?;
    tx.prepare_cached("DELETE FROM records_fts WHERE rowid=?1")?
        .execute([rowid])?;
    tx.prepare_cached("DELETE FROM records WHERE rowid=?1")?
        .execute([rowid])?;
    Ok(())
}

/// Index one record just written to `path` (used by `record add` and friends,
/// so a write and its index update happen in the same command).
pub fn upsert_record(conn: &mut Connection, dir: &ScopeDir, r: &Record, path: &Path) -> Result<()> {
    let meta = fs::metadata(path).map_err(|e| Error::io("cannot stat", path, e))?;
    let bytes = fs::read(path).map_err(|e| Error::io("cannot read", path, e))?;
    let rel = relative(dir, path);
    let hash = blake3::hash(&bytes).to_hex().to_string();
    let stat = FileStat {
        rel: &rel,
        size: meta.len() as i64,
        mtime: file_mtime_ns(&meta),
        hash: &hash,
    };
    let tx = conn.transaction()?;
    let mut stats = TermDeltas::default();
    write_row(&tx, r, &stat, &mut stats)?;
    stats.flush(&tx)?;
    tx.commit()?;
    remember_dirs(conn, dir)
}

/// Drop the row of a record file that was deleted or moved.
pub fn remove_record(conn: &mut Connection, dir: &ScopeDir, path: &Path) -> Result<()> {
    let rel = relative(dir, path);
    let tx = conn.transaction()?;
    let rowid: Option<i64> = tx
        .query_row("SELECT rowid FROM records WHERE path=?1", [&rel], |r| {
            r.get(0)
        })
        .optional()?;
    if let Some(rowid) = rowid {
        let mut stats = TermDeltas::default();
        delete_row(&tx, rowid, &mut stats)?;
        stats.flush(&tx)?;
    }
    tx.commit()?;
    remember_dirs(conn, dir)
}

fn relative(dir: &ScopeDir, path: &Path) -> String {
    path.strip_prefix(&dir.root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The folders whose mtimes tell whether a record was added, removed or
/// replaced (every write in recall is a rename, as are most editors' saves
/// and git checkouts).
fn watched_dirs(dir: &ScopeDir) -> Vec<PathBuf> {
    let root = dir.records_dir();
    let mut v = vec![root.clone()];
    v.extend(Category::ALL.iter().map(|c| root.join(c.as_str())));
    v
}

fn dir_mtime(p: &Path) -> i64 {
    fs::metadata(p).map(|m| file_mtime_ns(&m)).unwrap_or(0)
}

fn remember_dirs(conn: &mut Connection, dir: &ScopeDir) -> Result<()> {
    let tx = conn.transaction()?;
    for d in watched_dirs(dir) {
        tx.prepare_cached("INSERT OR REPLACE INTO record_dirs(path, mtime) VALUES(?1, ?2)")?
            .execute(params![relative(dir, &d), dir_mtime(&d)])?;
    }
    tx.commit()?;
    Ok(())
}

/// The cheap check run before a query: six `stat` calls compared with the
/// mtimes stored at the last sync. In-place edits that keep the folder's
/// mtime are caught by `recall reindex`.
pub fn records_changed(conn: &Connection, dir: &ScopeDir) -> Result<bool> {
    let mut st = conn.prepare_cached("SELECT mtime FROM record_dirs WHERE path=?1")?;
    for d in watched_dirs(dir) {
        let stored: Option<i64> = st.query_row([relative(dir, &d)], |r| r.get(0)).optional()?;
        if stored.unwrap_or(0) != dir_mtime(&d) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Differences between the record files and their rows.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Drift {
    /// Files with no row.
    pub unindexed: Vec<String>,
    /// Rows whose file is gone.
    pub missing: Vec<String>,
    /// Files whose size or mtime differs from their row.
    pub stale: Vec<String>,
}

impl Drift {
    pub fn is_clean(&self) -> bool {
        self.unindexed.is_empty() && self.missing.is_empty() && self.stale.is_empty()
    }
}

/// Compare files and rows by stat alone, changing nothing.
pub fn drift(conn: &Connection, dir: &ScopeDir) -> Result<Drift> {
    let (seen, _) = scan(dir);
    let rows = load_rows(conn)?;
    let mut d = Drift::default();
    let on_disk: std::collections::HashSet<&str> = seen.iter().map(|s| s.rel.as_str()).collect();
    for s in &seen {
        match rows.get(&s.rel) {
            None => d.unindexed.push(s.rel.clone()),
            Some(r) if r.size != s.size || r.mtime != s.mtime => d.stale.push(s.rel.clone()),
            Some(_) => {}
        }
    }
    d.missing = rows
        .keys()
        .filter(|p| !on_disk.contains(p.as_str()))
        .cloned()
        .collect();
    d.missing.sort();
    Ok(d)
}
