//! Doctor's checks of a scope's `index.db`: that it opens, its schema
//! version, SQLite's and FTS5's integrity checks, the planner's term
//! statistics, and drift between record files and their rows. It opens a
//! plain connection: doctor reports, it does not migrate.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::Finding;
use crate::error::{Error, Result};
use crate::index::drift;
use crate::records::Limits;
use crate::store::{current_docs, immutable_uri, ScopeDir, Table, SCHEMA_VERSION};

/// The fix for an index only a rebuild repairs.
pub(super) const REBUILD: &str = "run `recall reindex --full`";

/// SQLite failing because it cannot write beside the file (a read-only
/// folder).
fn is_read_only(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::CannotOpen) | Some(rusqlite::ErrorCode::ReadOnly)
    )
}

/// Check one scope's index; returns whether it could only be read (a
/// read-only home). A scope with records but no index is told to reindex.
pub(super) fn check_index(dir: &ScopeDir, limits: &Limits, out: &mut Vec<Finding>) -> bool {
    let path = dir.index_path();
    if !path.exists() {
        if dir.records_dir().exists() {
            out.push(Finding {
                what: format!("{} is missing", path.display()),
                // The records are files; what was indexed is not.
                fix: "run `recall reindex` (it rebuilds the records from their files), then `recall index` on the sessions and tickets this project had indexed (for example `recall index --claude-code`), and `recall sync` for team memory".into(),
            });
        }
        return false;
    }
    super::files::check_mode(&path, 0o600, out);
    let c = match open(&path) {
        Ok(c) => c,
        Err(e) => {
            out.push(failed(&path, "cannot open", e.into()));
            return false;
        }
    };
    let read_only = c.is_readonly(rusqlite::MAIN_DB).unwrap_or(false);
    if let Err(e) = check_open_index(&c, dir, limits, read_only, out) {
        out.push(failed(&path, "cannot check", e));
    }
    read_only
}

/// The one finding of an index whose check failed with `e`. A disk that
/// refuses writes (full, or a file size limit) fails every check that
/// needs one, the first read of a WAL index included (its `-shm`): that
/// is one problem with the disk's fix, not the index's, since `reindex
/// --full` would fail the same way (issue 37 item 5). Anything else names
/// the index, and a rebuild is its fix.
fn failed(path: &Path, doing: &str, e: Error) -> Finding {
    let full = crate::store::no_space_left(path);
    match e.at(path) {
        Error::NoSpace { .. } => disk_full(path, doing),
        Error::WriteFailed { .. } if full => disk_full(path, doing),
        Error::WriteFailed { .. } => Finding {
            what: format!(
                "{doing} {}: the system refuses writes beside it (disk I/O error)",
                path.display()
            ),
            fix: "check that disk (or a file size limit such as `ulimit -f`), then run `recall doctor` again".into(),
        },
        e => Finding {
            what: format!("{doing} {}: {e}", path.display()),
            fix: REBUILD.into(),
        },
    }
}

fn disk_full(path: &Path, doing: &str) -> Finding {
    Finding {
        what: format!(
            "{doing} {}: no space left on its disk",
            path.display()
        ),
        fix: "free space on that disk (or use another home with --home), then run `recall doctor` again".into(),
    }
}

/// Which model made the vectors of the index at `path`
/// (`meta.semantic_model`); `None` when it has none, or cannot be read
/// (which [`check_index`] reports on its own).
pub(super) fn semantic_model(path: &Path) -> Option<String> {
    crate::index::vectors_model(&open(path).ok()?).ok()?
}

/// A plain connection, read-write because FTS5's integrity-check is
/// spelled as an INSERT; in a read-only home the index read immutable, to
/// check what a read can.
fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
        .and_then(|c| c.busy_timeout(std::time::Duration::from_secs(5)).map(|_| c));
    conn.and_then(
        |c| match c.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())) {
            Err(e) if is_read_only(&e) => Connection::open_with_flags(
                immutable_uri(path),
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
            ),
            _ => Ok(c),
        },
    )
}

fn check_open_index(
    c: &Connection,
    dir: &ScopeDir,
    limits: &Limits,
    read_only: bool,
    out: &mut Vec<Finding>,
) -> Result<()> {
    let path = dir.index_path();
    if is_empty(c)? {
        out.push(empty(&path));
        return Ok(());
    }
    check_schema(c, &path, out)?;
    if !read_only {
        check_integrity(c, &path, out)?;
    }
    // What a write in flight would make look wrong is read as one
    // snapshot: a recall record write holds the records lock from its
    // file to its row, and one read transaction sees each commit whole
    // (term counts and rows together).
    let _writes = dir.lock_records().ok().flatten();
    let snapshot = c.unchecked_transaction()?;
    check_term_stats(c, &path, out)?;
    let d = drift(c, dir, limits)?;
    snapshot.finish()?;
    // A file whose key or id another file holds: a reindex skips it again.
    let taken = [
        ("key", "its `key:` line", &d.same_key),
        (
            "id",
            "its `id:` line, and the file the same name",
            &d.same_id,
        ),
    ];
    for (field, line, clashes) in taken {
        for (file, value, holder) in clashes {
            out.push(Finding {
                what: format!(
                    "{}: {field} '{value}' is already the {field} of {}, so this file is not indexed",
                    dir.root.join(file).display(),
                    dir.root.join(holder).display()
                ),
                fix: format!("give one of them another {field} ({line}), or remove the one that is not wanted, then run `recall reindex`"),
            });
        }
    }
    if !d.is_clean() {
        // Which files, so a person can tell an edit of their own from
        // something else (the first few of each kind).
        let named = |kind: &str, files: &[String]| {
            const SHOWN: usize = 3;
            let mut s = files
                .iter()
                .take(SHOWN)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if files.len() > SHOWN {
                s.push_str(&format!(" and {} more", files.len() - SHOWN));
            }
            (!files.is_empty()).then(|| format!("{kind}: {s}"))
        };
        let which: Vec<String> = [
            named("not indexed", &d.unindexed),
            named("gone", &d.missing),
            named("changed", &d.stale),
        ]
        .into_iter()
        .flatten()
        .collect();
        out.push(Finding {
            what: format!(
                "{}: {} record file(s) not indexed, {} indexed record(s) whose file is gone, {} changed since indexing ({})",
                path.display(),
                d.unindexed.len(),
                d.missing.len(),
                d.stale.len(),
                which.join("; ")
            ),
            fix: "run `recall reindex`".into(),
        });
    }
    Ok(())
}

/// Whether the index holds nothing: no schema and no table (a file of
/// zero bytes, or one whose header only was written). A writer that
/// opens it creates its tables, as for a new index.
fn is_empty(c: &Connection) -> Result<bool> {
    let v: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let tables: i64 = c.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    Ok(v == 0 && tables == 0)
}

/// The one finding of an empty index: every other check would fail on its
/// missing tables (issue 37 item 5: eleven findings, one of them "no such
/// table" with no path, each fixed by a `reindex --full` that a full disk
/// refused).
fn empty(path: &Path) -> Finding {
    let fix = if crate::store::no_space_left(path) {
        "free space on that disk (or use another home with --home), then run `recall reindex`"
    } else {
        "run `recall reindex`"
    };
    Finding {
        what: format!(
            "{} is empty: it was created but never written (a full disk, or a crash while it was created), so nothing in it is found",
            path.display()
        ),
        fix: fix.into(),
    }
}

fn check_schema(c: &Connection, path: &Path, out: &mut Vec<Finding>) -> Result<()> {
    let v: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if v > SCHEMA_VERSION {
        out.push(Finding {
            what: format!(
                "{} has schema version {v}, newer than this recall ({SCHEMA_VERSION})",
                path.display()
            ),
            fix: "upgrade recall, or run `recall reindex --full` to rebuild it".into(),
        });
    } else if v != SCHEMA_VERSION {
        out.push(Finding {
            what: format!(
                "{} has schema version {v}; this recall uses {SCHEMA_VERSION}",
                path.display()
            ),
            fix: "run any writing command (e.g. `recall reindex`) to migrate it".into(),
        });
    }
    Ok(())
}

fn check_integrity(c: &Connection, path: &Path, out: &mut Vec<Finding>) -> Result<()> {
    let ok: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    if ok != "ok" {
        out.push(Finding {
            what: format!("{}: integrity_check says {ok}", path.display()),
            fix: REBUILD.into(),
        });
    }
    for t in ["records_fts", "chunks_fts", "tickets_fts"] {
        let sql = format!("INSERT INTO {t}({t}) VALUES('integrity-check')");
        if let Err(e) = c.execute(&sql, []) {
            let fix = if t == "records_fts" {
                REBUILD.to_string()
            } else {
                "run `recall reindex --full` (rebuilds the index from the stored text), then \
                 `recall index --full` on your transcripts and tickets if their text is wrong"
                    .to_string()
            };
            out.push(Finding {
                what: format!(
                    "{}: FTS5 integrity-check of {t} failed: {e}",
                    path.display()
                ),
                fix,
            });
        }
    }
    Ok(())
}

/// The planner's term statistics must be current and agree with the rows
/// (see `store::terms`); stale ones only make queries slower, never wrong.
fn check_term_stats(c: &Connection, path: &Path, out: &mut Vec<Finding>) -> Result<()> {
    let v: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if v < SCHEMA_VERSION {
        return Ok(()); // check_schema already says to migrate
    }
    for t in Table::ALL {
        let rows: i64 = c.query_row(&format!("SELECT count(*) FROM {}", t.meta()), [], |r| {
            r.get(0)
        })?;
        match current_docs(c, t)? {
            Some(docs) if docs == rows => {}
            Some(docs) => out.push(Finding {
                what: format!(
                    "{}: term statistics of {} count {docs} rows, the table has {rows}",
                    path.display(),
                    t.fts()
                ),
                fix: "run `recall reindex --full` to recount them".into(),
            }),
            None => out.push(Finding {
                what: format!(
                    "{}: term statistics of {} are missing or stale; queries count terms the slow way",
                    path.display(),
                    t.fts()
                ),
                fix: "run any writing command (e.g. `recall reindex`) to recount them".into(),
            }),
        }
    }
    Ok(())
}
