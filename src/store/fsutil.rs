//! Filesystem helpers that keep the store safe: private folders, atomic
//! writes (temp file, fsync, rename, fsync of the folder; for a cache, the
//! same without the fsyncs), mtimes.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// Options that create a file with mode 0600 (on Unix): logs, locks and
/// anything else recall keeps in the home is private to the user.
pub fn private_file() -> fs::OpenOptions {
    let mut o = fs::OpenOptions::new();
    o.create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o
}

/// Write `contents` to `path` atomically with mode 0600: a reader sees either
/// the old file or the new one, never a half-written one.
pub fn atomic_write(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| Error::invalid(format!("{} has no parent folder", path.display())))?;
    create_private_dir(dir)?;
    let tmp = locked_temp(path, contents)?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| Error::io("cannot write", tmp.path().to_path_buf(), e))?;
    fail::fail_point!("atomic-write-unpersisted");
    tmp.persist(path)
        .map_err(|e| Error::io("cannot replace", path, e.error))?;
    sync_dir(dir);
    Ok(())
}

/// [`atomic_write`] without its flushes, for state that is only a cache
/// (the prompt hook's record of what a session was given): a reader still
/// sees the old file or the new one, never half of one, but a crash soon
/// after may lose the new one. The two flushes cost the hook, which runs on
/// every prompt, a millisecond or two here and more on a busy disk; losing
/// the state costs one repeated injection.
pub fn replace_cache_file(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| Error::invalid(format!("{} has no parent folder", path.display())))?;
    create_private_dir(dir)?;
    locked_temp(path, contents)?
        .persist(path)
        .map_err(|e| Error::io("cannot replace", path, e.error))?;
    Ok(())
}

/// [`atomic_write`] for many files at once: each is written to a locked
/// temporary file beside it, then one flush makes them all durable (one
/// `syncfs` on Linux instead of an fsync per file; an fsync per file
/// elsewhere), then each replaces its path, and each folder is synced
/// once; 256 files at a time, since each holds a descriptor
/// (and its lock) until it replaces its path. A reader sees each file old
/// or new, never half-written. On an error some files may already be
/// replaced: the caller puts them back.
pub fn atomic_write_many(files: &[(&Path, &[u8])]) -> Result<()> {
    files.chunks(MANY_AT_ONCE).try_for_each(write_chunk)
}

/// Temporary files [`atomic_write_many`] holds open at once.
const MANY_AT_ONCE: usize = 256;

fn write_chunk(files: &[(&Path, &[u8])]) -> Result<()> {
    let mut temps = Vec::with_capacity(files.len());
    let mut dirs: Vec<&Path> = Vec::new();
    for (path, contents) in files {
        let dir = path
            .parent()
            .ok_or_else(|| Error::invalid(format!("{} has no parent folder", path.display())))?;
        if !dirs.contains(&dir) {
            create_private_dir(dir)?;
            dirs.push(dir);
        }
        temps.push((locked_temp(path, contents)?, *path));
    }
    flush_all(temps.iter().map(|(t, _)| t))?;
    fail::fail_point!("atomic-write-unpersisted");
    for (tmp, path) in temps {
        tmp.persist(path)
            .map_err(|e| Error::io("cannot replace", path, e.error))?;
    }
    for dir in dirs {
        sync_dir(dir);
    }
    Ok(())
}

/// A temporary file beside `path` holding `contents`, not yet flushed.
/// tempfile creates it with mode 0600. It is locked before the first byte
/// and the lock is held until the file is persisted and closed: an
/// unlocked temp file belongs to a writer that died (see
/// `remove_orphan_temps`).
fn locked_temp(path: &Path, contents: &[u8]) -> Result<tempfile::NamedTempFile> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(TEMP_SUFFIX)
        .tempfile_in(dir)
        .map_err(|e| Error::io("cannot create a temporary file in", dir, e))?;
    tmp.as_file()
        .lock()
        .map_err(|e| Error::io("cannot lock", tmp.path().to_path_buf(), e))?;
    tmp.write_all(contents)
        .map_err(|e| Error::io("cannot write", tmp.path().to_path_buf(), e))?;
    Ok(tmp)
}

/// Make the temporary files' contents durable before they replace anything.
fn flush_all<'a>(temps: impl Iterator<Item = &'a tempfile::NamedTempFile>) -> Result<()> {
    let temps: Vec<_> = temps.collect();
    #[cfg(target_os = "linux")]
    if let Some(first) = temps.first() {
        use std::os::fd::AsRawFd;
        // SAFETY: the descriptor is open for the call (the file lives in
        // `temps`); syncfs reads nothing from memory.
        if unsafe { libc::syncfs(first.as_file().as_raw_fd()) } == 0 {
            return Ok(());
        }
    }
    for t in temps {
        t.as_file()
            .sync_all()
            .map_err(|e| Error::io("cannot write", t.path().to_path_buf(), e))?;
    }
    Ok(())
}

/// Whether `name` is one of [`atomic_write`]'s temporary files.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX)
}

const TEMP_PREFIX: &str = ".recall-";
const TEMP_SUFFIX: &str = ".tmp";

/// How old an unlocked, empty temporary file must be before it counts as a
/// dead writer's. A writer locks its file right after creating it, before
/// it writes a byte; the age rule closes that window, so no live writer's
/// file is ever taken for an orphan (issue 26 items 7 and 9).
pub const ORPHAN_AGE: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether the temporary file at `path` was left by a writer that died: no
/// process holds its lock, and it holds something (a live writer locks it
/// before writing, so a file with text and no lock is a dead writer's:
/// removed by the next command, not a minute later, since it may hold
/// text deleted since, issue 36 item 6) or is older than [`ORPHAN_AGE`].
pub fn is_orphan_temp(path: &Path) -> bool {
    let Ok(meta) = fs::metadata(path) else {
        return false;
    };
    let old = meta
        .modified()
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age >= ORPHAN_AGE);
    (meta.len() > 0 || old) && fs::File::open(path).is_ok_and(|f| f.try_lock().is_ok())
}

/// Remove the temporary files that writers killed mid-write left in `dir`,
/// returning them. Only orphans go (see [`is_orphan_temp`]): a file a live
/// writer holds, or one just created, stays.
pub fn remove_orphan_temps(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if is_temp_name(&e.file_name().to_string_lossy())
            && is_orphan_temp(&path)
            && fs::remove_file(&path).is_ok()
        {
            removed.push(path);
        }
    }
    if !removed.is_empty() {
        sync_dir(dir);
    }
    removed
}

/// A second name for a file about to be replaced or removed: a hard link
/// in `aside` (a folder on the same disk), so putting the file back is a
/// rename, which needs no free space (rewriting its bytes on a full disk
/// fails just when it is needed). Named as a temporary file; dropped, it
/// is removed. One left by a killed command is a second name of a file
/// that stayed valid: nothing is lost, and the next sweep of temporary
/// files removes it. The caller keeps the bytes as well, for a filesystem
/// without hard links or a link another command swept.
#[derive(Debug)]
pub struct Aside(tempfile::TempPath);

impl Aside {
    /// Keep `path` aside in the folder `aside`, made if need be; `None`
    /// when it cannot be (no such file, another disk, no hard links).
    pub fn keep(path: &Path, aside: &Path) -> Option<Aside> {
        create_private_dir(aside).ok()?;
        let link = tempfile::Builder::new()
            .prefix(TEMP_PREFIX)
            .suffix(TEMP_SUFFIX)
            .make_in(aside, |tmp| fs::hard_link(path, tmp))
            .ok()?;
        Some(Aside(link.into_temp_path()))
    }

    /// Put the kept file back at `path`, whatever is there now.
    pub fn put_back(self, path: &Path) -> Result<()> {
        self.0
            .persist(path)
            .map_err(|e| Error::io("cannot put back", path, e.error))?;
        sync_parent(path);
        Ok(())
    }
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

/// Whether the disk holding `path` has no space left for this user (no
/// available blocks, as `df` counts them); `false` when it cannot tell.
/// SQLite answers a full disk with "disk I/O error" when the write it
/// could not make was to grow its `-shm` file, so this tells the two apart
/// for messages that must say "free space first".
pub fn no_space_left(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return false;
        };
        let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
        // SAFETY: `c` is a NUL-terminated path and `st` a buffer of the
        // size statvfs fills.
        let rc = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
        // SAFETY: statvfs returned 0, so it filled `st` (zeroed before).
        rc == 0 && unsafe { st.assume_init() }.f_bavail == 0
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
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

/// Where a record file really is, for printing: a project whose records
/// live in its repository has a home `records` folder that links to
/// `<git top>/.recall/records`, and a path through that link is shown as
/// the repository's path (the one a person edits, commits and reviews).
/// Any other path is returned as it is. Only the nearest ancestors named
/// `records` are looked at (the path itself included: the link is shown
/// as the folder it names), so this costs a few `lstat` calls.
pub fn shown_path(path: &Path) -> PathBuf {
    for dir in path.ancestors() {
        if dir.file_name().is_none_or(|n| n != "records") {
            continue;
        }
        let is_link = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
        let (Ok(rest), true) = (path.strip_prefix(dir), is_link) else {
            continue;
        };
        if let Ok(target) = std::fs::read_link(dir) {
            // A relative link is relative to the folder holding it.
            let target = match (target.is_relative(), dir.parent()) {
                (true, Some(parent)) => parent.join(target),
                _ => target,
            };
            return target.join(rest);
        }
    }
    path.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_is_private() -> Result<()> {
        type Write = fn(&Path, &[u8]) -> Result<()>;
        for write in [atomic_write as Write, replace_cache_file] {
            replaces_and_is_private(write)?;
        }
        Ok(())
    }

    fn replaces_and_is_private(write: fn(&Path, &[u8]) -> Result<()>) -> Result<()> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/c.md");
        write(&p, b"one")?;
        write(&p, b"two")?;
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

    /// Regression (issue probe: 16 of 195 `kill -9` during `record add` left
    /// `.recall-*.tmp` files that nothing removed): an unlocked temporary
    /// file is an orphan and goes; a live writer's locked one stays.
    #[test]
    fn r_temp_files_of_killed_writers_are_removed_and_live_ones_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let orphan = tmp.path().join(".recall-abc123.tmp");
        fs::write(&orphan, "half a rec").unwrap();
        age(&orphan);
        let live = tmp.path().join(".recall-def456.tmp");
        let held = fs::File::create(&live).unwrap();
        held.lock().unwrap();
        age(&live);
        let other = tmp.path().join("note.tmp");
        fs::write(&other, "not ours").unwrap();
        age(&other);
        assert_eq!(
            remove_orphan_temps(tmp.path()),
            std::slice::from_ref(&orphan)
        );
        assert!(!orphan.exists());
        assert!(live.exists() && other.exists());
        drop(held);
        assert_eq!(remove_orphan_temps(tmp.path()), [live]);
    }

    /// Issue 26 item 7: a writer between creating its temp file and
    /// locking it lost the file to a concurrent sync ("cannot replace …: No
    /// such file or directory"). A file younger than ORPHAN_AGE is never
    /// taken for an orphan, locked or not.
    #[test]
    fn r26_a_temp_file_just_created_is_never_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let young = tmp.path().join(".recall-young1.tmp");
        // Created and not yet locked: nothing is written before the lock.
        fs::write(&young, "").unwrap();
        assert!(remove_orphan_temps(tmp.path()).is_empty());
        assert!(young.exists());
        age(&young);
        assert_eq!(remove_orphan_temps(tmp.path()), [young]);
    }

    /// Issue 36 item 6: a writer killed after it wrote its temp file left
    /// text (a pulled record, deleted since) that stayed until a scan a
    /// minute later. A file with text that no writer holds goes at once;
    /// one a live writer holds stays.
    #[test]
    fn r36_a_dead_writers_temp_file_with_text_goes_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dead = tmp.path().join(".recall-dead01.tmp");
        fs::write(&dead, "a pulled record's text").unwrap();
        let live = tmp.path().join(".recall-live01.tmp");
        let held = fs::File::create(&live).unwrap();
        held.lock().unwrap();
        fs::write(&live, "being written").unwrap();
        assert_eq!(remove_orphan_temps(tmp.path()), [dead]);
        assert!(live.exists());
    }

    /// Move a file's mtime past ORPHAN_AGE.
    fn age(path: &Path) {
        let f = fs::OpenOptions::new().write(true).open(path).unwrap();
        f.set_modified(std::time::SystemTime::now() - ORPHAN_AGE * 2)
            .unwrap();
    }

    #[test]
    fn atomic_write_many_writes_them_all_and_leaves_no_temp_file() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("x/a.md"), tmp.path().join("y/b.md"));
        fs::create_dir_all(a.parent().unwrap()).unwrap();
        fs::write(&a, "old").unwrap();
        atomic_write_many(&[(&a, b"one"), (&b, b"two")]).unwrap();
        assert_eq!(fs::read(&a).unwrap(), b"one");
        assert_eq!(fs::read(&b).unwrap(), b"two");
        for d in ["x", "y"] {
            assert_eq!(fs::read_dir(tmp.path().join(d)).unwrap().count(), 1);
        }
    }

    #[test]
    fn atomic_write_leaves_no_temp_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("r.md");
        atomic_write(&path, b"one").unwrap();
        atomic_write(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["r.md"]);
    }
}
