//! A project's records kept in its repository (`<git top>/.recall/records`)
//! instead of the home, so they travel with `git pull` and are reviewed in
//! pull requests. The index stays in the home: the home's `records` folder
//! becomes a link to the repository's, which every reader and writer
//! already follows, and a pull is seen by the next read like any change of
//! the folder.

use std::path::{Path, PathBuf};

use super::Memory;
use crate::error::{Error, Result};
use crate::store::Project;

/// Where a project's records live.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordsPlace {
    /// The folder the records are in.
    pub path: PathBuf,
    /// Whether that is the repository's `.recall/records`.
    pub in_repo: bool,
    /// Record files moved by this call.
    pub moved: usize,
}

/// The repository folder of a project's records.
pub fn repo_records_dir(root: &Path) -> PathBuf {
    root.join(".recall").join("records")
}

impl Memory {
    /// Where the current project's records are.
    pub fn records_place(&self) -> Result<RecordsPlace> {
        let p = self.project()?;
        let home = p.dir.records_dir();
        let in_repo = is_link_to_repo(&home, p.info.root.as_deref());
        let path = match in_repo {
            true => std::fs::read_link(&home).unwrap_or(home),
            false => home,
        };
        Ok(RecordsPlace {
            path,
            in_repo,
            moved: 0,
        })
    }

    /// Keep the project's records in its repository (`in_repo`), moving
    /// the home's there (a file the repository already holds with other
    /// text stops the move before anything moved), or back in the home,
    /// copying the repository's (which stay, for the team). Then the index
    /// is brought in step.
    pub fn move_records(&self, in_repo: bool) -> Result<RecordsPlace> {
        let p = self.project()?;
        let root = p.info.root.clone().ok_or_else(|| {
            Error::invalid(
                "records can live in a repository only for a project tied to a folder: run from the repository or pass --cwd",
            )
        })?;
        p.ensure()?;
        let home = p.dir.records_dir();
        let repo = repo_records_dir(&root);
        let _lock = p.dir.lock_records()?;
        let linked = is_link_to_repo(&home, Some(&root));
        let mut moved = 0;
        match (in_repo, linked) {
            (true, true) | (false, false) => {}
            (true, false) => {
                // What goes into the repository is committed and pushed:
                // a file holding a secret (written by hand, say) stops the
                // move, before anything moved.
                let leaks = crate::index::files_with_secrets(&p.dir, &self.limits());
                if !leaks.is_empty() {
                    let names: Vec<String> = leaks
                        .iter()
                        .map(|(path, kinds)| format!("{} ({})", path.display(), kinds.join(", ")))
                        .collect();
                    return Err(Error::invalid(format!(
                        "these record files hold a secret and would be committed: {}; remove it from them (or `recall record edit` them), then run this again; nothing was moved",
                        names.join("; ")
                    )));
                }
                let files = record_files(&home);
                for (rel, _) in &files {
                    let there = repo.join(rel);
                    if there.exists()
                        && std::fs::read(&there).ok() != std::fs::read(home.join(rel)).ok()
                    {
                        return Err(Error::invalid(format!(
                            "{} already holds {} with other text: merge the two by hand (or remove one), then run this again; nothing was moved",
                            repo.display(),
                            rel.display()
                        )));
                    }
                }
                std::fs::create_dir_all(&repo)
                    .map_err(|e| Error::io("cannot create folder", &repo, e))?;
                for (rel, _) in &files {
                    copy_file(&home.join(rel), &repo.join(rel))?;
                    moved += 1;
                }
                // The home's folder is set aside, not removed, until the
                // link is in place: an interruption leaves one or the other.
                let aside = home.with_file_name(format!("records.moved-{}", self.now.as_second()));
                if home.exists() {
                    std::fs::rename(&home, &aside)
                        .map_err(|e| Error::io("cannot move", &home, e))?;
                }
                if let Err(e) = symlink_dir(&repo, &home) {
                    let _ = std::fs::rename(&aside, &home);
                    return Err(e);
                }
                if aside.exists() {
                    std::fs::remove_dir_all(&aside)
                        .map_err(|e| Error::io("cannot remove", &aside, e))?;
                }
            }
            (false, true) => {
                // Copied beside the link first, then swapped in: an
                // interruption leaves the link, and a re-run starts over.
                let fresh = home.with_file_name(format!("records.new-{}", self.now.as_second()));
                crate::store::create_private_dir(&fresh)?;
                for (rel, _) in record_files(&repo) {
                    copy_file(&repo.join(&rel), &fresh.join(&rel))?;
                    moved += 1;
                }
                std::fs::remove_file(&home).map_err(|e| Error::io("cannot remove", &home, e))?;
                std::fs::rename(&fresh, &home).map_err(|e| Error::io("cannot move", &fresh, e))?;
            }
        }
        drop(self.open_synced(&p.dir)?);
        let mut place = self.records_place()?;
        place.moved = moved;
        Ok(place)
    }
}

/// A project whose home has no records folder yet, in a repository that
/// keeps its records (`.recall/records`, committed by a teammate), reads
/// and writes them there, as `recall project records --in-repo` would set
/// it up: a fresh clone knows what the team wrote down. A home that has
/// its own records folder is left as it is (`recall doctor` says the
/// repository holds records it does not read). Never fails: the project
/// is used as it is when the link cannot be made.
pub(super) fn adopt(p: &Project) {
    let Some(root) = p.info.root.as_deref() else {
        return;
    };
    let home = p.dir.records_dir();
    if home.symlink_metadata().is_ok() {
        return;
    }
    let repo = repo_records_dir(root);
    if !repo.is_dir() {
        return;
    }
    let linked = crate::store::create_private_dir(&p.dir.root)
        .and_then(|()| p.ensure())
        .and_then(|()| symlink_dir(&repo, &home));
    match linked {
        Ok(()) => tracing::info!(
            "{}: this repository keeps its records here; this project reads and writes them",
            repo.display()
        ),
        // Another process linked it first.
        Err(_) if is_link_to_repo(&home, Some(root)) => {}
        Err(e) => tracing::warn!(
            "{} holds this repository's records, and this project cannot read them ({e}); `recall project records --in-repo` tries again",
            repo.display()
        ),
    }
}

/// Whether `home` (a project's records folder in the home) is a link to
/// its repository's records.
fn is_link_to_repo(home: &Path, root: Option<&Path>) -> bool {
    let (Ok(target), Some(root)) = (std::fs::read_link(home), root) else {
        return false;
    };
    target == repo_records_dir(root)
}

/// The record files under `dir` (`<category>/*.md`, no temp file of a
/// write in progress), relative to it, with their lengths.
fn record_files(dir: &Path) -> Vec<(PathBuf, u64)> {
    walkdir::WalkDir::new(dir)
        .min_depth(2)
        .max_depth(2)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            let name = e.file_name().to_string_lossy();
            name.ends_with(".md") && !crate::store::is_temp_name(&name)
        })
        .filter_map(|e| {
            let rel = e.path().strip_prefix(dir).ok()?.to_path_buf();
            Some((rel, e.metadata().ok()?.len()))
        })
        .collect()
}

/// Copy `from` to `to` atomically (its folder created).
fn copy_file(from: &Path, to: &Path) -> Result<()> {
    let bytes = std::fs::read(from).map_err(|e| Error::io("cannot read", from, e))?;
    crate::store::atomic_write(to, &bytes)
}

#[cfg(unix)]
fn symlink_dir(target: &Path, link: &Path) -> Result<()> {
    std::os::unix::fs::symlink(target, link).map_err(|e| Error::io("cannot link", link, e))
}

#[cfg(not(unix))]
fn symlink_dir(_target: &Path, link: &Path) -> Result<()> {
    Err(Error::invalid(format!(
        "records in the repository need a symbolic link at {}, which this system does not make",
        link.display()
    )))
}
