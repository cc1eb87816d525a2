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
mod fsutil;
mod hits;
mod home;
mod migrate;
mod project;
mod terms;

pub use db::{bound_wal, configure_process, immutable_uri, Db, OpenMode, WAL_LIMIT};
pub use fsutil::{
    atomic_write, create_private_dir, file_mtime_ns, is_temp_name, remove_orphan_temps, sync_parent,
};
pub use hits::{fold_hits, hits_log, note_hits};
pub use home::resolve_home;
#[cfg(test)]
pub(crate) use migrate::migrate_for_tests;
pub use migrate::{empty_in_memory, MIGRATIONS, SCHEMA_VERSION};
pub use project::{canonical_root, project_id, Project, ProjectInfo};
pub use terms::{
    current_docs, lookup as term_lookup, recount, repair as repair_term_stats, Table, TermDeltas,
};

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

    /// `<scope>/index.db`
    pub fn index_path(&self) -> PathBuf {
        self.root.join("index.db")
    }
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
