//! What a write of several files undoes when it fails: each file as it
//! was, put back if the write changed it.

use std::fs;
use std::path::{Path, PathBuf};

use super::{atomic_write, Aside};
use crate::error::{Error, Result};

/// The files a write is about to change, as they were.
pub struct Undo {
    files: Vec<Kept>,
}

/// One file as it was before a write.
struct Kept {
    path: PathBuf,
    /// Its bytes, `None` when it did not exist.
    old: Option<Vec<u8>>,
    /// The file itself, kept under a second name: put back by a rename,
    /// which a full disk allows (see [`Aside`]).
    aside: Option<Aside>,
}

impl Undo {
    /// Note `paths`, the files about to be written or removed; each is
    /// kept aside (see [`Aside`]) in the folder `aside`. That folder is not
    /// one whose time says that records changed: a second name made and
    /// removed there leaves the next read no folder to look through again.
    pub fn before<'p>(aside: &Path, paths: impl IntoIterator<Item = &'p Path>) -> Result<Undo> {
        let mut files = Vec::new();
        for p in paths {
            let old = match fs::read(p) {
                Ok(b) => Some(b),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(Error::io("cannot read", p, e)),
            };
            let kept = old.as_ref().and_then(|_| Aside::keep(p, aside));
            files.push(Kept {
                path: p.to_path_buf(),
                old,
                aside: kept,
            });
        }
        Ok(Undo { files })
    }

    /// Put back every file the write changed; a file it never reached is
    /// left alone. Each that cannot be is named in a warning, and the
    /// first such error returned.
    pub fn restore(self) -> Result<()> {
        let mut first = None;
        for kept in self.files {
            let path = kept.path.clone();
            if let Err(r) = kept.put_back() {
                tracing::warn!(
                    "{} holds the failed write's text, not what it held before: {r}",
                    path.display()
                );
                first.get_or_insert(r);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// `result`, after [`Undo::restore`] when it is an error.
    pub fn unless(self, result: Result<()>) -> Result<()> {
        let Err(e) = result else {
            return Ok(());
        };
        // A file not put back is named by `restore`; the write's own
        // error is the one to report.
        let _ = self.restore();
        Err(e)
    }
}

impl Kept {
    fn put_back(self) -> Result<()> {
        let Kept { path, old, aside } = self;
        let untouched = match fs::read(&path) {
            Ok(now) => old.as_deref() == Some(&now[..]),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => old.is_none(),
            // Unreadable now: put back all the same.
            Err(_) => false,
        };
        if untouched {
            return Ok(());
        }
        match (old, aside) {
            // The rename, else (its second name taken by another
            // command's sweep) the bytes.
            (Some(bytes), Some(aside)) => aside
                .put_back(&path)
                .or_else(|_| atomic_write(&path, &bytes)),
            (Some(bytes), None) => atomic_write(&path, &bytes),
            (None, _) => match fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(Error::io("cannot remove", &path, e))
                }
                _ => Ok(()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// The temporary files in `dir` and in its `.undo`.
    fn temps(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .chain(fs::read_dir(dir.join(".undo")).into_iter().flatten())
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| super::super::is_temp_name(n))
            .collect()
    }

    /// Regression (review, stop 61): a write that failed on a full disk
    /// left its new text in the file, since putting the old one back
    /// rewrote it, which needs the space that had run out. The old file is
    /// now put back by a rename of a second name kept for it: the same
    /// inode as before, no byte written.
    #[test]
    fn r_a_failed_write_puts_the_old_file_back_by_a_rename() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.md");
        fs::write(&path, "old text").unwrap();
        let inode = fs::metadata(&path).unwrap().ino();
        let undo = Undo::before(&tmp.path().join(".undo"), [path.as_path()]).unwrap();
        super::atomic_write(&path, b"new text").unwrap();
        assert_ne!(fs::metadata(&path).unwrap().ino(), inode);
        let failed = undo.unless(Err(Error::invalid("the index write failed")));
        assert!(failed.is_err());
        assert_eq!(fs::read_to_string(&path).unwrap(), "old text");
        assert_eq!(fs::metadata(&path).unwrap().ino(), inode);
        assert!(temps(tmp.path()).is_empty(), "{:?}", temps(tmp.path()));

        // A removed file comes back the same way; a new one goes.
        let new = tmp.path().join("b.md");
        let undo =
            Undo::before(&tmp.path().join(".undo"), [new.as_path(), path.as_path()]).unwrap();
        fs::write(&new, "b").unwrap();
        fs::remove_file(&path).unwrap();
        assert!(undo.unless(Err(Error::invalid("failed"))).is_err());
        assert_eq!(fs::metadata(&path).unwrap().ino(), inode);
        assert!(!new.exists());
        assert!(temps(tmp.path()).is_empty(), "{:?}", temps(tmp.path()));
    }

    /// Regression (review, stop 61): a write that failed before it changed
    /// its file (a folder it could not write in) rewrote the file anyway to
    /// "put it back", and warned that it could not.
    #[test]
    fn r_a_write_that_changed_nothing_leaves_the_file_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.md");
        fs::write(&path, "old text").unwrap();
        let inode = fs::metadata(&path).unwrap().ino();
        let undo = Undo::before(&tmp.path().join(".undo"), [path.as_path()]).unwrap();
        assert!(undo.unless(Err(Error::invalid("failed"))).is_err());
        assert_eq!(fs::metadata(&path).unwrap().ino(), inode);
        assert!(temps(tmp.path()).is_empty(), "{:?}", temps(tmp.path()));
        // A success leaves no second name behind either, and the file's
        // folder as the write left it: its time is what tells a read that
        // records changed, and the write indexed its own change.
        let undo = Undo::before(&tmp.path().join(".undo"), [path.as_path()]).unwrap();
        super::atomic_write(&path, b"new text").unwrap();
        let folder_time = fs::metadata(tmp.path()).unwrap().modified().unwrap();
        assert!(undo.unless(Ok(())).is_ok());
        assert_eq!(
            fs::metadata(tmp.path()).unwrap().modified().unwrap(),
            folder_time
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "new text");
        assert!(temps(tmp.path()).is_empty(), "{:?}", temps(tmp.path()));
    }
}
