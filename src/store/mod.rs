//! Where memory lives on disk: the home folder, the two scopes, project
//! identity, and the SQLite index of each scope.
//!
//! ```text
//! <home>/user/records/<category>/<id>.md
//! <home>/user/index.db
//! <home>/projects/<project-id>/project.json
//! <home>/projects/<project-id>/records/<category>/<id>.md
//! <home>/projects/<project-id>/index.db
//! ```

pub mod bulk;
mod db;
pub mod flat_vectors;
mod fsutil;
mod hits;
mod home;
mod migrate;
mod project;
mod readers;
mod terms;
mod turn;
mod undo;

pub(crate) use db::damaged;
pub use db::{
    bound_wal, checkpoint, configure_process, immutable_uri, Checkpoint, Db, OpenMode, WAL_LIMIT,
};
pub use fsutil::{
    atomic_write, atomic_write_many, create_private_dir, file_mtime_ns, is_orphan_temp,
    is_temp_name, no_space_left, private_file, remove_orphan_temps, replace_cache_file, shown_path,
    sync_parent, Aside, ORPHAN_AGE,
};
pub use hits::{fold_hits, hits_log, note_hits};
pub use home::{resolve_home, user_home};
#[cfg(test)]
pub(crate) use migrate::migrate_for_tests;
pub use migrate::{
    empty_in_memory, schema_version, CHUNK_ROOTS_SCHEMA, MIGRATIONS, SCHEMA_VERSION,
    SESSION_COUNT_SCHEMA, SESSION_DID_SCHEMA, SESSION_WORK_SCHEMA, VECTOR_EPOCHS_SCHEMA,
};
pub use project::{
    canonical_root, check_name, checkout_roots, checkout_top, project_id, Project, ProjectInfo,
    Sharing,
};
pub use readers::ReadPools;
pub use terms::{
    current_docs, lookup_all as term_lookup_all, recount, repair as repair_term_stats,
    root_sessions, stored_root_sessions, Counts as TermCounts, RowTerms, Table, TermDeltas,
};
pub use turn::{begin_in_turn, turn_path, turn_wanted};
pub use undo::Undo;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The two memory scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The memory of one codebase.
    Project,
    /// One person's preferences and rules across all projects.
    User,
}

impl Scope {
    /// The lowercase name used in files, flags and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Scope {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "project" => Ok(Scope::Project),
            "user" => Ok(Scope::User),
            _ => Err(Error::invalid(format!(
                "unknown scope '{s}': expected project or user"
            ))),
        }
    }
}

/// The folder of one scope: its record files and its index.
#[derive(Debug, Clone)]
pub struct ScopeDir {
    pub scope: Scope,
    pub root: PathBuf,
}

impl ScopeDir {
    /// `<scope>/records`
    pub fn records_dir(&self) -> PathBuf {
        self.root.join("records")
    }

    /// `<scope>/records/.undo`: where a record write keeps the files it
    /// changes until it is done (see [`Undo`]).
    pub fn undo_dir(&self) -> PathBuf {
        self.records_dir().join(".undo")
    }

    /// `<scope>/index.db`
    pub fn index_path(&self) -> PathBuf {
        self.root.join("index.db")
    }

    /// Wait for, then hold, the scope's record lock (`<scope>/records.lock`,
    /// an advisory `flock`): one record change at a time across processes,
    /// so the look-up and the write of an upsert are one step, and two
    /// processes adding one new key make one record, not two. Released when
    /// the guard drops (or the process dies). `None` when the scope cannot
    /// be written at all (a read-only home), where no change can race.
    pub fn lock_records(&self) -> Result<Option<ScopeLock>> {
        self.hold("records.lock", &mut |path| {
            // Said before waiting: a holder stopped with Ctrl-Z holds it for
            // as long as it stays stopped.
            tracing::warn!(
                "waiting for {}: another recall process is changing these records \
                 (one stopped with Ctrl-Z holds it until it is resumed or ended)",
                path.display()
            );
        })
    }

    /// Wait for, then hold, the scope's index-run lock (`<scope>/index.lock`):
    /// one `recall index` run of a scope at a time. Two runs over the same
    /// files would each parse and write every changed file (the second about
    /// ten times slower than alone); the one that waits finds them indexed
    /// and has only what is left to do. `waiting` is told, once, before a
    /// wait; `give_up` is asked every tenth of a second while it lasts (a
    /// Ctrl-C must not wait for another run to end), and `Ok(None)` is
    /// returned when it says so. `Ok(None)` too where the scope cannot be
    /// written at all, as for [`lock_records`](Self::lock_records).
    pub fn lock_index(
        &self,
        waiting: &mut dyn FnMut(&Path),
        give_up: &dyn Fn() -> bool,
    ) -> Result<Option<ScopeLock>> {
        let path = self.root.join("index.lock");
        let Some(file) = self.lock_file(&path)? else {
            return Ok(None);
        };
        let mut told = false;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Some(ScopeLock { _file: file })),
                Err(std::fs::TryLockError::WouldBlock) => {
                    if !std::mem::replace(&mut told, true) {
                        waiting(&path);
                    }
                    if give_up() {
                        return Ok(None);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(Error::io("cannot lock", path, e))
                }
            }
        }
    }

    /// The lock file at `path`, opened (the scope's folder made); `None`
    /// where nothing can be written.
    fn lock_file(&self, path: &Path) -> Result<Option<std::fs::File>> {
        let opened = create_private_dir(&self.root).and_then(|()| {
            private_file()
                .truncate(false)
                .write(true)
                .open(path)
                .map_err(|e| Error::io("cannot open", path, e))
        });
        match opened {
            Ok(f) => Ok(Some(f)),
            Err(Error::Io { source, .. }) if read_only(&source) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Hold the advisory lock on `<scope>/name`, telling `waiting` before
    /// waiting for another holder.
    fn hold(&self, name: &str, waiting: &mut dyn FnMut(&Path)) -> Result<Option<ScopeLock>> {
        let path = self.root.join(name);
        let Some(file) = self.lock_file(&path)? else {
            return Ok(None);
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                waiting(&path);
                file.lock()
                    .map_err(|e| Error::io("cannot lock", &path, e))?;
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io("cannot lock", path, e)),
        }
        Ok(Some(ScopeLock { _file: file }))
    }
}

/// Whether `e` says that nothing can be written there.
fn read_only(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    )
}

/// A held [`ScopeDir::lock_records`] or [`ScopeDir::lock_index`] lock.
#[derive(Debug)]
pub struct ScopeLock {
    _file: std::fs::File,
}

/// The resolved home folder.
#[derive(Debug, Clone)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// Use `root` as the home; nothing is created until a write needs it.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Home { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The user scope folder.
    pub fn user(&self) -> ScopeDir {
        ScopeDir {
            scope: Scope::User,
            root: self.root.join("user"),
        }
    }

    /// The folder holding every project.
    pub fn projects_dir(&self) -> PathBuf {
        self.root.join("projects")
    }

    /// The project scope folder for `id`.
    pub fn project(&self, id: &str) -> ScopeDir {
        ScopeDir {
            scope: Scope::Project,
            root: self.projects_dir().join(id),
        }
    }

    /// Create the home (mode 0700) if needed, with a clear error when it
    /// cannot be written.
    pub fn ensure(&self) -> Result<()> {
        create_private_dir(&self.root)
    }
}
