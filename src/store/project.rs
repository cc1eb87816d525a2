//! Project identity: which codebase a command is about, and its stable id.
//!
//! Resolved from `--project NAME`, then `RECALL_PROJECT`, then the git
//! top-level of `--cwd` (or the current folder), then the canonical current
//! folder. The id is a readable slug of the folder name plus a short hash of
//! the canonical path, so two checkouts both called `app` never collide.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{atomic_write, Home, ScopeDir};
use crate::error::{Error, Result};

/// `project.json`: the mapping from project id to where the project lives.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProjectInfo {
    pub id: String,
    pub name: String,
    /// Canonical root folder, or absent for a project named with `--project`.
    pub root: Option<PathBuf>,
    pub created: jiff::Timestamp,
    /// Shared as team memory (`recall sync --share`); absent: local only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<Sharing>,
    /// Folders the project lived in before (`recall project move`): its
    /// sessions recorded there are still its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moved_from: Vec<PathBuf>,
}

/// `alias.json` in the store folder a moved project's new folder would
/// have had: the project it is.
#[derive(Debug, Serialize, Deserialize)]
struct Alias {
    id: String,
}

/// How a project is shared through the sync remote.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Sharing {
    /// The team identity: the same on every host (`github.com/acme/app`).
    pub team: String,
    /// Share indexed sessions (records are always shared).
    #[serde(default = "yes")]
    pub sessions: bool,
    /// Share indexed tickets.
    #[serde(default = "yes")]
    pub tickets: bool,
}

fn yes() -> bool {
    true
}

/// A resolved project: its id, info and scope folder.
#[derive(Debug, Clone)]
pub struct Project {
    pub info: ProjectInfo,
    pub dir: ScopeDir,
}

impl Project {
    /// Resolve the project for a command. `name` comes from `--project` or
    /// `RECALL_PROJECT`; `cwd` from `--cwd` or the current folder.
    pub fn resolve(home: &Home, name: Option<&str>, cwd: &Path) -> Result<Project> {
        let info = match name.filter(|n| !n.trim().is_empty()) {
            Some(name) => named(home, name)?,
            None => {
                let root = canonical_root(cwd)?;
                let name = root
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "root".to_string());
                ProjectInfo {
                    id: project_id(&name, &root.to_string_lossy()),
                    name,
                    root: Some(root),
                    created: jiff::Timestamp::now(),
                    sync: None,
                    moved_from: Vec::new(),
                }
            }
        };
        let dir = home.project(&info.id);
        // Keep the original creation time when the project already exists.
        match read_info(&dir) {
            Ok(Some(existing)) => Ok(Project {
                info: existing,
                dir,
            }),
            // A folder a project moved to is that project.
            _ => match read_alias(&dir).and_then(|id| read_info(&home.project(&id)).ok()?) {
                Some(moved) => Ok(Project {
                    dir: home.project(&moved.id),
                    info: moved,
                }),
                None => Ok(Project { info, dir }),
            },
        }
    }

    /// Make this project the one of `root` (a clone moved there): its
    /// folder becomes `root`, the old one is kept in `moved_from` (its
    /// sessions stay the project's), and `root` resolves to it from now
    /// on. Refused when `root` already has a memory of its own.
    pub fn move_to(&mut self, home: &Home, root: &Path) -> Result<()> {
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "root".to_string());
        let there = home.project(&project_id(&name, &root.to_string_lossy()));
        if there.root == self.dir.root {
            return Ok(());
        }
        if let Ok(Some(other)) = read_info(&there) {
            return Err(Error::invalid(format!(
                "{} already has a memory of its own (project {}); move from a folder whose project has no memory here, or keep both and query the old one with --project {}",
                root.display(),
                other.id,
                self.info.id
            )));
        }
        let mut info = self.info.clone();
        if let Some(old) = info.root.replace(root.to_path_buf()) {
            if old != root && !info.moved_from.contains(&old) {
                info.moved_from.push(old);
            }
        }
        crate::store::create_private_dir(&there.root)?;
        let alias = serde_json::to_vec_pretty(&Alias {
            id: info.id.clone(),
        })?;
        atomic_write(&there.root.join("alias.json"), &alias)?;
        self.save_info(info)
    }

    /// Where the project's sessions ran: its checkout, that checkout's
    /// linked worktrees, and the folders it moved from.
    pub fn session_roots(&self) -> Vec<PathBuf> {
        let mut out = self
            .info
            .root
            .as_deref()
            .map(checkout_roots)
            .unwrap_or_default();
        out.extend(self.info.moved_from.iter().cloned());
        out
    }

    /// Write `project.json` if it does not exist yet.
    pub fn ensure(&self) -> Result<()> {
        let path = self.dir.root.join("project.json");
        if path.exists() {
            return Ok(());
        }
        let json = serde_json::to_vec_pretty(&self.info)?;
        atomic_write(&path, &json)
    }

    /// Rewrite `project.json` with `info` (how it is shared).
    pub fn save_info(&mut self, info: ProjectInfo) -> Result<()> {
        crate::store::create_private_dir(&self.dir.root)?;
        let json = serde_json::to_vec_pretty(&info)?;
        atomic_write(&self.dir.root.join("project.json"), &json)?;
        self.info = info;
        Ok(())
    }

    /// The project folders of the home whose `project.json` cannot be
    /// read (bad JSON, unreadable), with why: [`list`](Self::list) and a
    /// lookup by name pass over them.
    pub fn unreadable(home: &Home) -> Vec<(PathBuf, Error)> {
        let Ok(entries) = fs::read_dir(home.projects_dir()) else {
            return vec![];
        };
        let mut out: Vec<(PathBuf, Error)> = entries
            .flatten()
            .filter_map(|entry| {
                let sd = home.project(&entry.file_name().to_string_lossy());
                let e = read_info(&sd).err()?;
                Some((sd.root.join("project.json"), e))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Every project under the home, sorted by name.
    pub fn list(home: &Home) -> Result<Vec<ProjectInfo>> {
        let dir = home.projects_dir();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
            Err(e) => return Err(Error::io("cannot list", dir, e)),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let sd = home.project(&entry.file_name().to_string_lossy());
            if let Ok(Some(info)) = read_info(&sd) {
                out.push(info);
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
        Ok(out)
    }
}

/// Whether `name` may name a project: one path component (no slashes, not
/// `.` or `..`) with nothing invisible in it (controls, text-direction
/// overrides, zero-width characters), the rule the REST API and record
/// keys follow too. A name is shown in lists and prompts, and its id is a
/// folder of the home.
pub fn check_name(name: &str) -> Result<()> {
    let t = name.trim();
    let bad = if t.is_empty() {
        Some("it is empty".to_string())
    } else if t == "." || t == ".." {
        Some(format!("'{t}' is a folder reference"))
    } else if t.contains(['/', '\\']) {
        Some("it contains a slash".to_string())
    } else {
        t.chars()
            .find(|c| crate::records::is_hidden_char(*c))
            .map(|c| format!("it contains the invisible character U+{:04X}", u32::from(c)))
    };
    match bad {
        None => Ok(()),
        Some(why) => Err(Error::invalid(format!(
            "'{}' cannot name a project: {why}; use letters, digits and - _ . (list the projects with `recall project list`)",
            name.escape_debug()
        ))),
    }
}

/// A project named explicitly: an existing id, or an existing project's name,
/// or a new project whose id hashes the name.
fn named(home: &Home, name: &str) -> Result<ProjectInfo> {
    if let Ok(Some(info)) = read_info(&home.project(name)) {
        return Ok(info);
    }
    let matches: Vec<_> = Project::list(home)?
        .into_iter()
        .filter(|p| p.name == name)
        .collect();
    match matches.len() {
        0 => check_name(name).map(|()| ProjectInfo {
            id: project_id(name, &format!("name:{name}")),
            name: name.to_string(),
            root: None,
            created: jiff::Timestamp::now(),
            sync: None,
            moved_from: Vec::new(),
        }),
        1 => Ok(matches.into_iter().next().expect("one match")),
        _ => Err(Error::invalid(format!(
            "project name '{name}' is ambiguous ({}); pass one of those ids to --project",
            matches
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The project a moved project's new folder resolves to, if `dir` is one.
fn read_alias(dir: &ScopeDir) -> Option<String> {
    let bytes = fs::read(dir.root.join("alias.json")).ok()?;
    serde_json::from_slice::<Alias>(&bytes).ok().map(|a| a.id)
}

fn read_info(dir: &ScopeDir) -> Result<Option<ProjectInfo>> {
    let path = dir.root.join("project.json");
    match fs::read(&path) {
        Ok(bytes) => Ok(Some(serde_json::from_slice(&bytes)?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("cannot read", path, e)),
    }
}

/// The git top-level containing `cwd`, or `cwd` itself, canonicalized. A
/// linked worktree (`git worktree add`: its `.git` is a file naming a
/// folder under the main repository's `.git/worktrees/`) is the same
/// project as its main checkout, whose top-level this returns: parallel
/// agents each in a worktree share one memory.
pub fn canonical_root(cwd: &Path) -> Result<PathBuf> {
    let top = checkout_top(cwd)?;
    let git = top.join(".git");
    if git.is_file() {
        return Ok(main_checkout(&git).unwrap_or(top));
    }
    Ok(top)
}

/// The git top-level containing `cwd` (a linked worktree's own folder, not
/// its main checkout's), or `cwd` itself, canonicalized: the folder whose
/// settings a launcher started in `cwd` reads.
pub fn checkout_top(cwd: &Path) -> Result<PathBuf> {
    let canon = fs::canonicalize(cwd).map_err(|e| Error::io("cannot resolve", cwd, e))?;
    let mut dir: &Path = &canon;
    loop {
        if dir.join(".git").exists() {
            return Ok(dir.to_path_buf());
        }
        match dir.parent() {
            Some(p) => dir = p,
            None => return Ok(canon),
        }
    }
}

/// A checkout's top-level and those of its linked worktrees (from
/// `<root>/.git/worktrees/*/gitdir`, which name each worktree's `.git`
/// file), canonical, the worktrees that no longer exist left out: where
/// the launchers ran the project's sessions.
pub fn checkout_roots(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    let Ok(entries) = fs::read_dir(root.join(".git").join("worktrees")) else {
        return out;
    };
    // `gitdir` names the worktree's `.git` file, relative to the folder
    // holding it when git writes relative paths (`worktree.useRelativePaths`).
    let mut linked: Vec<PathBuf> = entries
        .flatten()
        .filter_map(|e| {
            let gitdir = fs::read_to_string(e.path().join("gitdir")).ok()?;
            let git = e.path().join(gitdir.trim());
            fs::canonicalize(git.parent()?).ok()
        })
        .filter(|p| p != root)
        .collect();
    linked.sort();
    linked.dedup();
    out.extend(linked);
    out
}

/// The main checkout of the linked worktree whose `.git` file is `git`:
/// the file says `gitdir: <path>`, and that folder's `commondir` file names
/// the repository's own `.git`, whose parent is the main checkout. `None`
/// for anything else (a submodule's `.git` file names a folder without
/// `commondir`; a bare repository's common folder is not called `.git`).
fn main_checkout(git: &Path) -> Option<PathBuf> {
    let text = fs::read_to_string(git).ok()?;
    let gitdir = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let gitdir = git.parent()?.join(gitdir);
    let common = fs::read_to_string(gitdir.join("commondir")).ok()?;
    let common = fs::canonicalize(gitdir.join(common.trim())).ok()?;
    if common.file_name()? != ".git" {
        return None;
    }
    Some(common.parent()?.to_path_buf())
}

/// `<slug>-<8 hex of blake3(path)>`.
pub fn project_id(name: &str, canonical: &str) -> String {
    let mut slug = crate::text::slug(name, 40);
    if slug.is_empty() {
        slug.push_str("project");
    }
    let hash = blake3::hash(canonical.as_bytes()).to_hex();
    format!("{slug}-{}", &hash[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_name_different_paths_never_collide() {
        let a = project_id("app", "/home/a/app");
        let b = project_id("app", "/home/b/app");
        assert_ne!(a, b);
        assert!(a.starts_with("app-"));
        assert_eq!(a, project_id("app", "/home/a/app"));
    }

    /// Issue 39 item 5: a linked worktree is its main checkout's project,
    /// laid out as `git worktree add` lays it out; a submodule (a `.git`
    /// file without `commondir`) stays its own.
    #[test]
    fn a_worktree_is_the_main_checkouts_project() -> Result<()> {
        let t = tempfile::tempdir().unwrap();
        let main = t.path().join("app");
        let admin = main.join(".git/worktrees/feature");
        fs::create_dir_all(&admin).unwrap();
        fs::write(admin.join("commondir"), "../..\n").unwrap();
        let wt = t.path().join("app-feature");
        fs::create_dir_all(wt.join("src")).unwrap();
        fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
        let main_root = canonical_root(&main)?;
        assert_eq!(canonical_root(&wt.join("src"))?, main_root);
        // Where its sessions ran: the main checkout and the worktree.
        assert_eq!(checkout_roots(&main_root), std::slice::from_ref(&main_root));
        fs::write(
            admin.join("gitdir"),
            format!("{}\n", wt.join(".git").display()),
        )
        .unwrap();
        assert_eq!(
            checkout_roots(&main_root),
            [main_root.clone(), fs::canonicalize(&wt).unwrap()]
        );
        // A relative gitdir, as `git worktree add --relative-paths` writes.
        fs::write(wt.join(".git"), "gitdir: ../app/.git/worktrees/feature\n").unwrap();
        assert_eq!(canonical_root(&wt)?, main_root);
        // And the other way (regression, review of stop 60: read against
        // the current folder, the worktree was left out, so `hook install`
        // there wrote the main checkout's settings).
        fs::write(admin.join("gitdir"), "../../../../app-feature/.git\n").unwrap();
        assert_eq!(
            checkout_roots(&main_root),
            [main_root.clone(), fs::canonicalize(&wt).unwrap()]
        );
        // A submodule: its own project.
        let sub = main.join("vendor/lib");
        fs::create_dir_all(main.join(".git/modules/lib")).unwrap();
        fs::create_dir_all(&sub).unwrap();
        fs::write(sub.join(".git"), "gitdir: ../../.git/modules/lib\n").unwrap();
        assert_eq!(canonical_root(&sub)?, fs::canonicalize(&sub).unwrap());
        Ok(())
    }

    #[test]
    fn git_toplevel_wins_over_subfolder() -> Result<()> {
        let t = tempfile::tempdir().unwrap();
        fs::create_dir_all(t.path().join("repo/.git")).unwrap();
        fs::create_dir_all(t.path().join("repo/src/deep")).unwrap();
        let root = canonical_root(&t.path().join("repo/src/deep"))?;
        assert_eq!(root, fs::canonicalize(t.path().join("repo")).unwrap());
        Ok(())
    }

    #[test]
    fn named_project_is_stable_and_listed() -> Result<()> {
        let t = tempfile::tempdir().unwrap();
        let home = Home::new(t.path());
        let p = Project::resolve(&home, Some("demo"), t.path())?;
        p.ensure()?;
        let again = Project::resolve(&home, Some("demo"), Path::new("/"))?;
        assert_eq!(p.info, again.info);
        let by_id = Project::resolve(&home, Some(&p.info.id), Path::new("/"))?;
        assert_eq!(by_id.info.id, p.info.id);
        assert_eq!(Project::list(&home)?.len(), 1);
        Ok(())
    }
}
