//! Skills from procedures (see [`crate::skills`]): proposing playbooks
//! from the project's procedures, and promoting one record to a
//! `SKILL.md` the launcher loads, previewed first, never over a person's
//! edits without being told, and never with a secret in it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Memory;
use crate::error::{Error, Result};
use crate::index::ListFilter;
use crate::records::{Category, Status};
use crate::skills::{from_record, propose, render, Proposal, Skill};

/// What a promotion did (or, on a dry run, would do).
#[derive(Debug, Clone, PartialEq)]
pub struct Promoted {
    pub path: PathBuf,
    /// The `SKILL.md` text.
    pub text: String,
    /// Whether the file was written (false: a dry run, or it already
    /// held this text).
    pub written: bool,
    /// Where the replaced file was kept (`--force` over a changed file).
    pub backup: Option<PathBuf>,
}

impl Memory {
    /// Playbooks proposed from the project's active procedures, one per
    /// task, with the records each came from.
    pub fn propose_skills(&self) -> Result<Vec<Proposal>> {
        let dir = self.project()?.dir;
        let filter = ListFilter {
            category: Some(Category::Procedures),
            status: Some(Status::Active),
            source: None,
        };
        let listed = self.list(std::slice::from_ref(&dir), &filter, super::ListOrder::Key)?;
        let mut records = Vec::new();
        for l in listed {
            records.push(self.get(std::slice::from_ref(&dir), &l.id)?.record);
        }
        Ok(propose(&records))
    }

    /// Write the playbook `recall skills` proposed under the name
    /// `name_or_id`, else record `name_or_id` (project scope, then user),
    /// as the skill `<project root>/.claude/skills/<name>/SKILL.md`. A
    /// file recall did not write, or one changed since it did, is replaced
    /// only with `force` (and kept beside it as `SKILL.md.bak-<time>`).
    pub fn promote(&self, name_or_id: &str, dry_run: bool, force: bool) -> Result<Promoted> {
        let project = self.project()?;
        let root = project.info.root.clone().ok_or_else(|| {
            Error::invalid(
                "the project has no folder to hold .claude/skills: run from the project or pass --cwd",
            )
        })?;
        let (skill, sources, from) = self.skill_named(&project.dir, name_or_id)?;
        if skill.name.is_empty() {
            return Err(Error::invalid(format!(
                "{from} has no key a skill can be named after (lowercase letters, digits, hyphens); give it one with `recall record update`"
            )));
        }
        let text = render(&skill, &sources)?;
        if let Some(f) = crate::secrets::scan(&text).first() {
            return Err(Error::invalid(format!(
                "the skill would hold a secret ({}) from {from}; remove it from the record first",
                f.kind,
            )));
        }
        let path = root
            .join(".claude/skills")
            .join(&skill.name)
            .join("SKILL.md");
        // A cloned repository may link any of these elsewhere (to a key in
        // ~/.ssh, say): never write or copy through a link.
        for p in [
            root.join(".claude"),
            root.join(".claude/skills"),
            root.join(".claude/skills").join(&skill.name),
            path.clone(),
        ] {
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(Error::invalid(format!(
                    "{} is a symbolic link: recall writes skills only into real folders of the project; replace the link with a folder or file",
                    p.display()
                )));
            }
        }
        let mut promoted = Promoted {
            path: path.clone(),
            text: text.clone(),
            written: false,
            backup: None,
        };
        let old = match std::fs::read(&path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io("cannot read", &path, e)),
        };
        if old.as_deref() == Some(text.as_bytes()) || dry_run {
            return Ok(promoted);
        }
        let ledger_path = project.dir.root.join("skills.json");
        let mut ledger = read_ledger(&ledger_path);
        let key = path.to_string_lossy().into_owned();
        if let Some(old) = &old {
            let ours = ledger.get(&key) == Some(&hash(old));
            if !ours && !force {
                return Err(Error::invalid(format!(
                    "{} was not written by recall, or was changed since: pass --force to replace it (it is kept as SKILL.md.bak-<time>), or --dry-run to see the new text",
                    path.display()
                )));
            }
            if !ours {
                let backup = path.with_extension(format!("md.bak-{}", self.now.as_second()));
                std::fs::rename(&path, &backup)
                    .map_err(|e| Error::io("cannot back up", &path, e))?;
                promoted.backup = Some(backup);
            }
        }
        write_shared(&path, text.as_bytes())?;
        ledger.insert(key, hash(text.as_bytes()));
        let json = serde_json::to_vec_pretty(&ledger)?;
        crate::store::atomic_write(&ledger_path, &json)?;
        promoted.written = true;
        Ok(promoted)
    }
}

impl Memory {
    /// The skill `promote` writes for `name_or_id`, the ids it came from,
    /// and what it came from in words (for messages): a proposed playbook
    /// by the name `recall skills` prints, else one record by id or key.
    fn skill_named(
        &self,
        project: &crate::store::ScopeDir,
        name_or_id: &str,
    ) -> Result<(Skill, Vec<String>, String)> {
        if let Some(p) = self
            .propose_skills()?
            .into_iter()
            .find(|p| p.skill.name == name_or_id)
        {
            let from = format!("the records {}", p.sources.join(", "));
            return Ok((p.skill, p.sources, from));
        }
        let dirs = [project.clone(), self.home.user()];
        let loc = self.get(&dirs, name_or_id).map_err(|e| match e {
            Error::NoRecord { .. } => Error::NotFound(format!(
                "no proposed skill and no record named '{name_or_id}': `recall skills` lists the playbooks it can write, `recall record list` the records"
            )),
            e => e,
        })?;
        let from = loc.path.display().to_string();
        let id = loc.record.meta.id.clone();
        Ok((from_record(&loc.record), vec![id], from))
    }
}

fn hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// What recall wrote where: `SKILL.md` path → hash of its text.
fn read_ledger(path: &Path) -> BTreeMap<String, String> {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Write a file of the repository: atomically, readable like the other
/// files there (0644), not private like recall's own.
fn write_shared(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().expect("a skill file is in a folder");
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create folder", dir, e))?;
    crate::store::atomic_write(path, bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
            .map_err(|e| Error::io("cannot set the mode of", path, e))?;
    }
    Ok(())
}
