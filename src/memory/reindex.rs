//! `recall reindex` in the façade: which scopes a rebuild covers, and the
//! rebuild of one scope's record index from its Markdown files, moving a
//! damaged index aside when nothing else can repair it.

use std::path::PathBuf;

use super::Memory;
use crate::error::{Error, Result};
use crate::index::{sync_records, Progress, SyncReport};
use crate::store::{Db, OpenMode, Scope, ScopeDir};

/// What [`Memory::reindex`] did to one scope.
#[derive(Debug)]
pub struct Reindexed {
    pub report: SyncReport,
    /// Where an unreadable index was moved before it was rebuilt.
    pub moved_aside: Option<PathBuf>,
    /// What was wrong with it: the error its rebuild stopped at.
    pub damage: Option<String>,
}

impl Memory {
    /// The scopes a reindex covers: the user scope, then the current
    /// project (created if needed) or, with `all_projects`, every project
    /// of the home.
    pub fn reindex_scopes(&self, all_projects: bool) -> Result<Vec<ScopeDir>> {
        let mut dirs = vec![self.home.user()];
        if all_projects {
            dirs.extend(self.projects()?.iter().map(|p| self.home.project(&p.id)));
        } else {
            dirs.push(self.ensure_scope(Scope::Project)?);
        }
        Ok(dirs)
    }

    /// Rebuild one scope's record index from its Markdown files, with a
    /// progress bar on a TTY when `progress`. With `full`, an index that is
    /// damaged anywhere (its header, or a page deep inside that only a
    /// write reaches) is moved aside and a new one built: the files are the
    /// truth, so this always ends with a working index. Sessions and
    /// tickets then come back with `recall index`, and team memory with
    /// `recall sync`.
    pub fn reindex(&self, dir: &ScopeDir, full: bool, progress: bool) -> Result<Reindexed> {
        self.home.ensure()?;
        let bar = Progress::new(
            count_record_files(dir),
            &format!("{} records", dir.scope),
            progress,
        );
        let done = match self.reindex_once(dir, full, &bar) {
            Err(e) if full && is_damage(&e) => {
                let aside = self.move_index_aside(dir)?;
                let report = self.reindex_once(dir, full, &bar)?;
                Reindexed {
                    report,
                    moved_aside: Some(aside),
                    damage: Some(match &e {
                        Error::CorruptIndex { detail, .. } => detail.clone(),
                        _ => e.chain(),
                    }),
                }
            }
            other => other.map(|report| Reindexed {
                report,
                moved_aside: None,
                damage: None,
            })?,
        };
        bar.finish();
        Ok(done)
    }

    fn reindex_once(&self, dir: &ScopeDir, full: bool, progress: &Progress) -> Result<SyncReport> {
        let path = dir.index_path();
        self.rebuild(dir, full, progress)
            .map_err(|e| crate::store::damaged(&path, e.at(&path)))
    }

    fn rebuild(&self, dir: &ScopeDir, full: bool, progress: &Progress) -> Result<SyncReport> {
        let mut db = Db::open(&dir.index_path(), OpenMode::ReadWrite)?;
        let report = sync_records(db.writer()?, dir, &self.limits(), full, progress)?;
        if full {
            crate::index::rebuild_source_fts(db.writer()?)?;
            let ok: String = db
                .writer()?
                .query_row("PRAGMA quick_check", [], |r| r.get(0))?;
            if ok != "ok" {
                return Err(Error::CorruptIndex {
                    path: dir.index_path(),
                    detail: ok,
                });
            }
        }
        Ok(report)
    }

    /// Rename `index.db` to `index.db.corrupt-<now>` and drop its WAL.
    fn move_index_aside(&self, dir: &ScopeDir) -> Result<PathBuf> {
        let path = dir.index_path();
        let aside = path.with_extension(format!("db.corrupt-{}", self.now.as_second()));
        std::fs::rename(&path, &aside).map_err(|e| Error::io("cannot move aside", &path, e))?;
        for ext in ["db-wal", "db-shm"] {
            let _ = std::fs::remove_file(path.with_extension(ext));
        }
        Ok(aside)
    }
}

/// The files in a scope's category folders: the length of the bar.
fn count_record_files(dir: &ScopeDir) -> u64 {
    walkdir::WalkDir::new(dir.records_dir())
        .min_depth(2)
        .max_depth(2)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .count() as u64
}

/// Whether `e`, from rebuilding a scope, says the index file holds what
/// recall did not write (or a newer recall did), rather than something a
/// person must fix first. Damage is not only what SQLite calls corrupt: a
/// flipped byte inside a row's text passes every check SQLite makes and
/// fails as text that is not UTF-8 (issue 37 item 3), one in a column of
/// numbers as a value of the wrong type, one in the schema as a table
/// that is missing. So any SQLite failure is damage, except those that
/// come from outside the file: a lock, a full disk, a failing read or
/// write, a file or folder that cannot be opened or written.
fn is_damage(e: &Error) -> bool {
    match e {
        Error::CorruptIndex { .. } | Error::SchemaTooNew { .. } => true,
        Error::Sqlite(e) => !from_outside(e),
        _ => false,
    }
}

/// SQLite failing for a reason outside the index file's bytes.
fn from_outside(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode as C;
    matches!(
        e.sqlite_error_code(),
        Some(
            C::DatabaseBusy
                | C::DatabaseLocked
                | C::DiskFull
                | C::SystemIoFailure
                | C::CannotOpen
                | C::ReadOnly
                | C::PermissionDenied
                | C::OutOfMemory
                | C::OperationInterrupted
                | C::FileLockingProtocolFailed
                | C::NoLargeFileSupport
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::test_memory_with_record;

    fn setup() -> (tempfile::TempDir, Memory, ScopeDir) {
        let tmp = tempfile::tempdir().unwrap();
        let (mem, _) = test_memory_with_record(tmp.path());
        let dir = mem.scope_dir(Scope::Project).unwrap();
        (tmp, mem, dir)
    }

    #[test]
    fn the_scopes_are_the_user_and_the_project_or_every_project() -> Result<()> {
        let (_tmp, mem, dir) = setup();
        mem.with_project("web").ensure_scope(Scope::Project)?;
        let roots = |dirs: Vec<ScopeDir>| dirs.into_iter().map(|d| d.root).collect::<Vec<_>>();
        let user = mem.home.user().root;
        assert_eq!(roots(mem.reindex_scopes(false)?), [user.clone(), dir.root]);
        let all = mem.reindex_scopes(true)?;
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].root, user);
        Ok(())
    }

    #[test]
    fn a_full_reindex_reads_every_record_file() -> Result<()> {
        let (_tmp, mem, dir) = setup();
        let done = mem.reindex(&dir, true, false)?;
        assert_eq!(done.report.scanned, 1);
        assert!(done.report.errors.is_empty(), "{:?}", done.report.errors);
        assert!(done.moved_aside.is_none());
        Ok(())
    }

    #[test]
    fn a_full_reindex_moves_a_broken_index_aside() -> Result<()> {
        let (_tmp, mem, dir) = setup();
        std::fs::write(dir.index_path(), vec![b'x'; 8192]).unwrap();
        let err = mem.reindex(&dir, false, false).unwrap_err();
        assert!(is_damage(&err), "{err}");
        let done = mem.reindex(&dir, true, false)?;
        let aside = done.moved_aside.expect("moved aside");
        assert_eq!(aside, dir.root.join("index.db.corrupt-1700000000"));
        assert_eq!(std::fs::read(&aside).unwrap(), vec![b'x'; 8192]);
        assert_eq!(done.report.added, 1);
        let listed = mem.list(&[dir], &Default::default(), Default::default())?;
        assert_eq!(listed.len(), 1);
        Ok(())
    }

    #[test]
    fn only_damage_to_the_index_moves_it() {
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        assert!(!is_damage(&Error::Sqlite(busy)));
        assert!(!is_damage(&Error::invalid("bad")));
        let full = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            None,
        );
        assert!(!is_damage(&Error::Sqlite(full)));
        // Issue 37 item 3: a flipped byte in a row's text.
        let mut bytes = b"ab".to_vec();
        bytes[1] = 0xff;
        let text = std::str::from_utf8(&bytes).unwrap_err();
        assert!(is_damage(&Error::Sqlite(rusqlite::Error::Utf8Error(
            1, text
        ))));
        let mismatch =
            rusqlite::Error::InvalidColumnType(0, "size".into(), rusqlite::types::Type::Text);
        assert!(is_damage(&Error::Sqlite(mismatch)));
        let newer = Error::SchemaTooNew {
            path: "index.db".into(),
            found: 99,
            supported: 1,
        };
        assert!(is_damage(&newer));
    }
}
