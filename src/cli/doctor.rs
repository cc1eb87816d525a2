//! `recall doctor`: check every scope and print the fix for each problem.

use std::path::Path;

use anyhow::Result;
use rusqlite::{Connection, OpenFlags};

use super::context::Ctx;
use crate::index::{drift, files_with_secrets};
use crate::records::Limits;
use crate::store::{
    current_docs, immutable_uri, is_orphan_temp, is_temp_name, ScopeDir, Table, SCHEMA_VERSION,
};

/// SQLite failing because it cannot write beside the file (a read-only
/// folder).
fn is_read_only(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::CannotOpen) | Some(rusqlite::ErrorCode::ReadOnly)
    )
}

/// One problem and its fix.
struct Finding {
    what: String,
    fix: String,
}

pub fn run(ctx: &Ctx) -> Result<u8> {
    let mut dirs = vec![ctx.home.user()];
    if let Ok(p) = ctx.project() {
        dirs.push(p.dir);
    }
    let mut findings = Vec::new();
    check_mode(ctx.home.root(), 0o700, &mut findings);
    check_logs(&ctx.home.root().join("logs"), &mut findings);
    for dir in &dirs {
        if !dir.root.exists() {
            outln!("{}: {} (empty)", dir.scope, dir.root.display());
            continue;
        }
        let before = findings.len();
        if check_scope(dir, &ctx.limits(), &mut findings) {
            outln!(
                "note: {} is read-only: queries and hooks work; writes need a writable home; FTS integrity not checked",
                dir.index_path().display()
            );
        }
        let status = if findings.len() == before {
            "ok"
        } else {
            "problems"
        };
        outln!("{}: {} ({status})", dir.scope, dir.root.display());
    }
    for f in &findings {
        outln!("problem: {}\n  fix: {}", f.what, f.fix);
    }
    // Say what was not checked: other projects of this home.
    let checked = ctx.project().ok().map(|p| p.info.id);
    let others: Vec<String> = ctx
        .projects()?
        .into_iter()
        .filter(|p| Some(&p.id) != checked.as_ref())
        .map(|p| p.name)
        .collect();
    if !others.is_empty() {
        outln!(
            "not checked: {} other project(s) of this home ({}); run `recall doctor --project NAME` for each",
            others.len(),
            others.join(", ")
        );
    }
    if findings.is_empty() {
        outln!("all checks passed");
        Ok(0)
    } else {
        outln!("{} problem(s) found", findings.len());
        Ok(1)
    }
}

/// Check one scope; returns whether its index could only be read (a
/// read-only home).
fn check_scope(dir: &ScopeDir, limits: &Limits, out: &mut Vec<Finding>) -> bool {
    let path = dir.index_path();
    check_mode(&dir.root, 0o700, out);
    check_records_modes(dir, out);
    check_record_files(dir, limits, out);
    if !path.exists() {
        if dir.records_dir().exists() {
            out.push(Finding {
                what: format!("{} is missing", path.display()),
                fix: "run `recall reindex`".into(),
            });
        }
        return false;
    }
    check_mode(&path, 0o600, out);
    // A plain connection: doctor reports, it does not migrate. Read-write
    // because FTS5's integrity-check is spelled as an INSERT.
    let conn = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_WRITE)
        .and_then(|c| c.busy_timeout(std::time::Duration::from_secs(5)).map(|_| c));
    // A read-only home: read the index immutable, and check what a read
    // can (FTS5's integrity-check needs a write).
    let conn = conn.and_then(|c| {
        match c.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())) {
            Err(e) if is_read_only(&e) => Connection::open_with_flags(
                immutable_uri(&path),
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
            ),
            _ => Ok(c),
        }
    });
    let c = match conn {
        Ok(c) => c,
        Err(e) => {
            out.push(Finding {
                what: format!("cannot open {}: {e}", path.display()),
                fix: "run `recall reindex --full`".into(),
            });
            return false;
        }
    };
    let read_only = c.is_readonly(rusqlite::MAIN_DB).unwrap_or(false);
    let res = (|| -> crate::Result<()> {
        check_schema(&c, &path, out)?;
        let c = &c;
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
        let d = drift(c, dir)?;
        snapshot.finish()?;
        if !d.is_clean() {
            out.push(Finding {
                what: format!(
                    "{}: {} record file(s) not indexed, {} indexed record(s) whose file is gone, {} changed since indexing",
                    path.display(),
                    d.unindexed.len(),
                    d.missing.len(),
                    d.stale.len()
                ),
                fix: "run `recall reindex`".into(),
            });
        }
        Ok(())
    })();
    if let Err(e) = res {
        out.push(Finding {
            what: e.to_string(),
            fix: "run `recall reindex --full`".into(),
        });
    }
    read_only
}

fn check_schema(c: &Connection, path: &Path, out: &mut Vec<Finding>) -> crate::Result<()> {
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

fn check_integrity(c: &Connection, path: &Path, out: &mut Vec<Finding>) -> crate::Result<()> {
    let ok: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    if ok != "ok" {
        out.push(Finding {
            what: format!("{}: integrity_check says {ok}", path.display()),
            fix: "run `recall reindex --full`".into(),
        });
    }
    for t in ["records_fts", "chunks_fts", "tickets_fts"] {
        let sql = format!("INSERT INTO {t}({t}) VALUES('integrity-check')");
        if let Err(e) = c.execute(&sql, []) {
            let fix = if t == "records_fts" {
                "run `recall reindex --full`".to_string()
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
fn check_term_stats(c: &Connection, path: &Path, out: &mut Vec<Finding>) -> crate::Result<()> {
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

/// Record files holding a secret (written outside recall: the index has
/// them redacted, the file does not), and temporary files of killed writes.
fn check_record_files(dir: &ScopeDir, limits: &Limits, out: &mut Vec<Finding>) {
    for (path, kinds) in files_with_secrets(dir, limits) {
        out.push(Finding {
            what: format!(
                "{} holds a secret ({}); the index keeps it redacted, the file does not",
                path.display(),
                kinds.join(", ")
            ),
            fix: format!(
                "remove the secret from {} (or `recall record edit` it), then rotate it",
                path.display()
            ),
        });
    }
    let records = dir.records_dir();
    for e in walkdir::WalkDir::new(&records)
        .max_depth(2)
        .into_iter()
        .flatten()
    {
        // A record recall cannot read (a hand edit gone wrong, a pull
        // that conflicts) is skipped by every read: say which and why.
        let name = e.file_name().to_string_lossy();
        if e.file_type().is_file() && name.ends_with(".md") && !is_temp_name(&name) {
            if let Ok(text) = std::fs::read_to_string(e.path()) {
                if let Err(err) = crate::records::parse_record(&text, e.path(), limits) {
                    out.push(Finding {
                        what: format!("{err}"),
                        fix: format!(
                            "fix {} (then `recall reindex`), or remove it",
                            e.path().display()
                        ),
                    });
                }
            }
        }
        // A write in progress is not damage: only a file no writer holds,
        // older than a minute, was left by a killed write.
        if is_temp_name(&e.file_name().to_string_lossy()) && is_orphan_temp(e.path()) {
            out.push(Finding {
                what: format!(
                    "{} is a temporary file left by an interrupted write",
                    e.path().display()
                ),
                fix: "run `recall reindex` (it removes those no writer holds)".into(),
            });
        }
    }
}

/// Record folders 0700 and record files 0600: records are the memory
/// itself, so they get the same check as the index.
fn check_records_modes(dir: &ScopeDir, out: &mut Vec<Finding>) {
    let records = dir.records_dir();
    if !records.exists() {
        return;
    }
    // Records kept in the repository (`recall project records --in-repo`)
    // are the team's, shared with the code: their modes are git's.
    let in_repo = std::fs::read_link(&records)
        .is_ok_and(|t| t.ends_with(std::path::Path::new(".recall").join("records")));
    if in_repo {
        return;
    }
    for e in walkdir::WalkDir::new(&records).into_iter().flatten() {
        if e.path_is_symlink() {
            // Its mode is the target's, outside the home: report the link,
            // never a chmod that would change the target (issue 26 item 16).
            let target = std::fs::read_link(e.path()).unwrap_or_default();
            out.push(Finding {
                what: format!(
                    "{} is a symbolic link to {}: recall reads it but never changes files outside the home",
                    e.path().display(),
                    target.display()
                ),
                fix: format!(
                    "keep the record in the home: cp --remove-destination \"$(readlink -f {0})\" {0}",
                    e.path().display()
                ),
            });
            continue;
        }
        let want = if e.file_type().is_dir() { 0o700 } else { 0o600 };
        check_mode(e.path(), want, out);
    }
}

/// `logs/` 0700 and its files 0600: hook and sync logs quote paths and
/// errors from your sessions.
fn check_logs(logs: &Path, out: &mut Vec<Finding>) {
    if !logs.exists() {
        return;
    }
    check_mode(logs, 0o700, out);
    for e in walkdir::WalkDir::new(logs)
        .min_depth(1)
        .max_depth(1)
        .into_iter()
        .flatten()
    {
        if e.file_type().is_file() {
            check_mode(e.path(), 0o600, out);
        }
    }
}

fn check_mode(path: &Path, want: u32, out: &mut Vec<Finding>) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The link itself, never what it points to.
        if let Some(m) = std::fs::symlink_metadata(path)
            .ok()
            .filter(|m| !m.file_type().is_symlink())
        {
            let mode = m.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                out.push(Finding {
                    what: format!(
                        "{} has mode {mode:o}: other users can read your memory",
                        path.display()
                    ),
                    fix: format!("chmod {want:o} {}", path.display()),
                });
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (path, want, out);
}
