//! The library's typed error.
//!
//! Every fallible library function returns [`Result<T>`]. Variants are the
//! things a caller can act on; each message says what went wrong, where, and
//! (where there is one) how to fix it. `anyhow` is used only in `cli/`.

use std::path::{Path, PathBuf};

/// Errors returned by the recall library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Input given by the user (a flag, a key, a category, a body) is invalid.
    #[error("{0}")]
    Invalid(String),

    /// A record, project or session named by the user does not exist.
    #[error("{0}")]
    NotFound(String),

    /// No record has this id or key where it was looked for: in `scope`
    /// (`project` or `user`), or in every scope searched (`None`). Its own
    /// variant so each front end can say how to list the records there.
    #[error(
        "no record with id or key '{id_or_key}'{}; list them with `recall record list`",
        in_scope(scope)
    )]
    NoRecord {
        id_or_key: String,
        scope: Option<String>,
    },

    /// The request conflicts with what is stored (a generated record's
    /// text is read-only to this caller).
    #[error("{0}")]
    Conflict(String),

    /// A record file could not be parsed; `line` is 1-based within the file.
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },

    /// Text contains a secret and the caller did not ask for redaction.
    #[error(
        "refusing to store a secret: {kind} at {location}; remove it, or pass --redact to store it as [REDACTED:{kind}]"
    )]
    Secret { kind: String, location: String },

    /// Filesystem failure, with the path involved. The cause is the
    /// `source`, printed by `{:#}` chains.
    #[error("{action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The index database is unreadable or malformed.
    #[error("the index at {} is corrupt or unreadable ({detail}); rebuild it with `recall reindex --full`", path.display())]
    CorruptIndex { path: PathBuf, detail: String },

    /// The index was written by a newer recall.
    #[error("the index at {} has schema version {found}, newer than this recall supports ({supported}); upgrade recall or run `recall reindex --full`", path.display())]
    SchemaTooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },

    /// A write to an index whose folder (or file) recall cannot write.
    #[error("cannot write the index at {}: its folder is read-only ({detail}); reads still work, but to write make the folder writable or use another home with --home or RECALL_HOME", path.display())]
    ReadOnlyIndex { path: PathBuf, detail: String },

    /// The disk holding a file recall writes is full (SQLite's
    /// `SQLITE_FULL`). What the write changed was rolled back.
    #[error("no space left to write {}: free space on that disk or use another home with --home", path.display())]
    NoSpace { path: PathBuf },

    /// The system refused a write (SQLite's `SQLITE_IOERR_WRITE` and kin):
    /// a failing disk, or a file size limit. What it changed was rolled
    /// back.
    #[error("cannot write {}: disk I/O error; check that disk (or a file size limit such as `ulimit -f`), or use another home with --home", path.display())]
    WriteFailed { path: PathBuf },

    /// A write whose caller gave up waiting before it changed anything
    /// (see `index::WriteGate`): nothing was written.
    #[error("the write was cancelled before it changed anything; nothing was written")]
    Cancelled,

    /// Team memory: the PostgreSQL remote is unreachable, refuses the
    /// credentials, has a newer schema, or failed mid-sync. The message
    /// names the server (never its password) and the fix.
    #[error("{0}")]
    Sync(String),

    /// The embedding model `[semantic] model` names cannot be loaded or
    /// run (issue 38). `detail` says what is wrong there and how to fix it.
    #[error("cannot load the embedding model at {}: {detail}", path.display())]
    Model { path: PathBuf, detail: String },

    /// Any other SQLite failure.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),

    /// Failure to get a pooled connection.
    #[error("connection pool: {0}")]
    Pool(#[from] r2d2::Error),

    /// JSON encoding or decoding failure.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
}

/// Shorthand result type for the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// " in the project scope", or nothing when every scope was searched.
fn in_scope(scope: &Option<String>) -> String {
    scope
        .as_ref()
        .map_or_else(String::new, |s| format!(" in the {s} scope"))
}

impl Error {
    /// Whether this is SQLite answering "busy" or "locked": another writer
    /// holds the lock (only seen by connections that do not wait).
    pub fn is_busy(&self) -> bool {
        matches!(self, Error::Sqlite(e) if matches!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy) | Some(rusqlite::ErrorCode::DatabaseLocked)
        ))
    }

    /// Wrap an I/O error with the action and path that failed.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// This error as one that names `path` and the fix, when it is SQLite
    /// failing to write there (a full disk, a refused write); any other
    /// error unchanged. Write paths call it with the database they write,
    /// so the user gets one line with the file, not SQLite's message
    /// repeated by each layer of the error chain.
    pub fn at(self, path: &Path) -> Self {
        let Error::Sqlite(e) = &self else {
            return self;
        };
        match e.sqlite_error() {
            Some(f) if f.code == rusqlite::ErrorCode::DiskFull => Error::NoSpace {
                path: path.to_path_buf(),
            },
            Some(f) if is_write_ioerr(f.extended_code) => Error::WriteFailed {
                path: path.to_path_buf(),
            },
            _ => self,
        }
    }

    /// This error and its causes on one line, as the CLI prints them
    /// (`{:#}`): for a front end that reports errors as text.
    pub fn chain(&self) -> String {
        let mut out = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            out.push_str(": ");
            out.push_str(&c.to_string());
            cause = c.source();
        }
        out
    }

    /// Build an [`Error::Invalid`] from anything printable.
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(msg.into())
    }
}

/// SQLite's extended codes for an I/O error while writing, syncing or
/// growing a file (reads are not write failures). Creating the `-shm`
/// file is a write: a full disk or a file size limit refuses it.
fn is_write_ioerr(code: std::ffi::c_int) -> bool {
    use rusqlite::ffi;
    [
        ffi::SQLITE_IOERR_WRITE,
        ffi::SQLITE_IOERR_SHMOPEN,
        ffi::SQLITE_IOERR_FSYNC,
        ffi::SQLITE_IOERR_DIR_FSYNC,
        ffi::SQLITE_IOERR_TRUNCATE,
        ffi::SQLITE_IOERR_SHMSIZE,
    ]
    .contains(&code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_prints_the_causes_on_one_line() {
        let e = Error::io(
            "cannot read",
            "/x/config.toml",
            std::io::Error::other("permission denied"),
        );
        assert_eq!(e.chain(), "cannot read /x/config.toml: permission denied");
        assert_eq!(Error::invalid("bad").chain(), "bad");
    }
}
