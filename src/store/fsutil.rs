//! Filesystem helpers that keep the store safe: private folders, atomic
//! writes (temp file, fsync, rename, fsync of the folder), mtimes.

use std::fs;
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Create `dir` and its parents with mode 0700 (on Unix).
pub fn create_private_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(dir)
        .map_err(|e| Error::io("cannot create folder", dir, e))
}

/// Write `contents` to `path` atomically with mode 0600: a reader sees either
/// the old file or the new one, never a half-written one.
pub fn atomic_write(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| Error::invalid(format!("{} has no parent folder", path.display())))?;
    create_private_dir(dir)?;
    // tempfile creates the file with mode 0600.
    let mut tmp = tempfile::Builder::new()
        .prefix(".recall-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io("cannot create a temporary file in", dir, e))?;
    tmp.write_all(contents)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| Error::io("cannot write", tmp.path().to_path_buf(), e))?;
    tmp.persist(path)
        .map_err(|e| Error::io("cannot replace", path, e.error))?;
    sync_dir(dir);
    Ok(())
}

/// fsync a folder so a rename in it is durable. Best effort: some
/// filesystems refuse to open folders for sync.
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(f) = fs::File::open(dir) {
        let _ = f.sync_all();
    }
}

/// fsync the folder holding `path`, after a rename or removal in it.
pub fn sync_parent(path: &Path) {
    if let Some(d) = path.parent() {
        sync_dir(d);
    }
}

/// A file's modification time in nanoseconds since the epoch (0 if unknown).
pub fn file_mtime_ns(meta: &fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos().min(i64::MAX as u128) as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_is_private() -> Result<()> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/c.md");
        atomic_write(&p, b"one")?;
        atomic_write(&p, b"two")?;
        assert_eq!(fs::read_to_string(&p).unwrap(), "two");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            let dmode = fs::metadata(p.parent().unwrap())
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(dmode, 0o700);
        }
        // No temp files are left behind.
        let left: Vec<_> = fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(left.len(), 1);
        Ok(())
    }
}
