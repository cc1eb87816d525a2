//! Looking into a home the suite ran `recall` on: a project's index, its
//! integrity, a count, and the temporary files killed writers leave.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The index of `project` in `home`, if it has one.
pub fn index_db(home: &Path, project: &str) -> Option<PathBuf> {
    let projects = home.join("projects");
    std::fs::read_dir(projects).ok()?.flatten().find_map(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        name.starts_with(&format!("{project}-"))
            .then(|| e.path().join("index.db"))
    })
}

/// Whether `PRAGMA integrity_check` passes on `db`.
pub fn integrity_ok(db: &Path) -> bool {
    let Ok(c) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return false;
    };
    let _ = c.busy_timeout(Duration::from_secs(10));
    c.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
        .is_ok_and(|s| s == "ok")
}

/// The one number `sql` returns on `db` (-1 on an error).
pub fn count(db: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| c.query_row(sql, [], |r| r.get(0)))
        .unwrap_or(-1)
}

/// Move every temp file's mtime `by` into the past.
pub fn age_temp_files(dir: &Path, by: Duration) {
    for e in walkdir::WalkDir::new(dir).into_iter().flatten() {
        if recall::store::is_temp_name(&e.file_name().to_string_lossy()) {
            if let Ok(f) = std::fs::OpenOptions::new().write(true).open(e.path()) {
                let _ = f.set_modified(std::time::SystemTime::now() - by);
            }
        }
    }
}

/// Temp files left under `dir`.
pub fn temp_files(dir: &Path) -> usize {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| recall::store::is_temp_name(&e.file_name().to_string_lossy()))
        .count()
}
