//! Doctor's checks of files: the modes of the home, its logs and the
//! record folders (records are the memory itself), record files holding a
//! secret or that recall cannot parse, and temporary files of killed writes.

use std::path::Path;

use super::Finding;
use crate::index::files_with_secrets;
use crate::records::Limits;
use crate::store::{is_orphan_temp, is_temp_name, ScopeDir};

/// The checks of one scope's files (its index is `index.rs`'s).
pub(super) fn check_scope_files(dir: &ScopeDir, limits: &Limits, out: &mut Vec<Finding>) {
    check_mode(&dir.root, 0o700, out);
    check_records_modes(dir, out);
    check_record_files(dir, limits, out);
}

/// Record files holding a secret (written outside recall: the index has
/// them redacted, the file does not), and temporary files of killed writes.
fn check_record_files(dir: &ScopeDir, limits: &Limits, out: &mut Vec<Finding>) {
    for (path, kinds) in files_with_secrets(dir, limits) {
        out.push(Finding {
            what: format!(
                "{} holds a secret ({}); the index keeps it redacted, the file does not",
                path.display(),
                kinds.join(", ")
            ),
            fix: format!(
                "remove the secret from {} (or `recall record edit` it), then rotate it",
                path.display()
            ),
        });
    }
    // Named where a person edits them (see `store::shown_path`).
    let records = crate::store::shown_path(&dir.records_dir());
    for e in walkdir::WalkDir::new(&records)
        .max_depth(3)
        .into_iter()
        .flatten()
    {
        let name = e.file_name().to_string_lossy();
        let markdown = name.ends_with(".md") || name.ends_with(".markdown");
        let written =
            e.file_type().is_file() && markdown && !is_temp_name(&name) && !name.starts_with('.');
        if written && !in_a_category_folder(&records, e.path()) {
            // Written by hand where recall does not look: never read, so
            // say so (a README beside the folders is the person's own).
            if !(e.depth() == 1 && name.eq_ignore_ascii_case("readme.md")) {
                out.push(Finding {
                    what: format!(
                        "{} is not read: records are read from {}/<category>/<name>.md, the category one of decisions, procedures, principles, incidents, preferences",
                        e.path().display(),
                        records.display()
                    ),
                    fix: format!(
                        "move it into its category's folder under {} (as a .md file), or remove it",
                        records.display()
                    ),
                });
            }
        } else if written {
            // A record recall cannot read (a hand edit gone wrong, a pull
            // that conflicts) is skipped by every read: say which and why.
            let err = match std::fs::read(e.path()) {
                Err(_) => None,
                Ok(bytes) => match String::from_utf8(bytes) {
                    Ok(text) => {
                        match crate::records::parse_record_file(&text, e.path(), dir.scope, limits)
                        {
                            Ok(record) => {
                                check_category_folder(
                                    &records,
                                    e.path(),
                                    record.meta.category,
                                    out,
                                );
                                None
                            }
                            Err(err) => Some(err.to_string()),
                        }
                    }
                    Err(_) => Some(format!(
                        "{}: not UTF-8 text, so it is not read",
                        e.path().display()
                    )),
                },
            };
            if let Some(what) = err {
                out.push(Finding {
                    what,
                    fix: format!(
                        "fix {} (saved as UTF-8; then `recall reindex`), or remove it",
                        e.path().display()
                    ),
                });
            }
        }
        // A write in progress is not damage: only a file no writer holds
        // (with text, or older than a minute) was left by a killed write.
        if is_temp_name(&e.file_name().to_string_lossy()) && is_orphan_temp(e.path()) {
            out.push(Finding {
                what: format!(
                    "{} is a temporary file left by an interrupted write",
                    e.path().display()
                ),
                fix: "run `recall reindex` (it removes those no writer holds)".into(),
            });
        }
    }
}

/// A record whose frontmatter names another category than its folder
/// (a hand edit, a file moved between folders) is read as the frontmatter
/// says and moved to that folder by its next write through recall: say so
/// before that surprises anyone.
fn check_category_folder(
    records: &Path,
    path: &Path,
    category: crate::records::Category,
    out: &mut Vec<Finding>,
) {
    let folder = path.parent().and_then(Path::file_name);
    if folder.is_none_or(|f| f == category.as_str()) {
        return;
    }
    out.push(Finding {
        what: format!(
            "{} says `category: {category}` but is in another category's folder: it is read as {category}, and its next write through recall moves it to {}",
            path.display(),
            records.join(category.as_str()).display()
        ),
        fix: format!(
            "set its `category:` to its folder's, or move it to {}",
            records.join(category.as_str()).display()
        ),
    });
}

/// Whether `path` is `<records>/<category>/<name>.md`, where records are
/// read from.
fn in_a_category_folder(records: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(records) else {
        return false;
    };
    let parts: Vec<_> = rel.components().collect();
    parts.len() == 2
        && path.extension().is_some_and(|x| x == "md")
        && crate::records::Category::ALL
            .iter()
            .any(|c| parts[0].as_os_str() == c.as_str())
}

/// Record folders 0700 and record files 0600: records are the memory
/// itself, so they get the same check as the index.
fn check_records_modes(dir: &ScopeDir, out: &mut Vec<Finding>) {
    let records = dir.records_dir();
    if !records.exists() {
        return;
    }
    // Records kept in the repository (`recall project records --in-repo`)
    // are the team's, shared with the code: their modes are git's.
    let in_repo = std::fs::read_link(&records)
        .is_ok_and(|t| t.ends_with(std::path::Path::new(".recall").join("records")));
    if in_repo {
        return;
    }
    // Links are not followed, `records` itself included: a link's mode is
    // its target's, outside the home. Report the link, never a chmod that
    // would change the target (issue 26 item 16) or a file in a linked
    // folder. Whether it is a folder is what it points to.
    let walk = walkdir::WalkDir::new(&records).follow_root_links(false);
    for e in walk.into_iter().flatten() {
        // An editor's lock or backup (Emacs' `.#name.md`, a link to
        // nothing) is not a record: recall does not read it.
        let hidden = e.depth() > 0 && e.file_name().to_string_lossy().starts_with('.');
        if e.path_is_symlink() && !hidden {
            out.push(linked(e.path(), e.path().is_dir()));
            continue;
        }
        if e.path_is_symlink() {
            continue;
        }
        let want = if e.file_type().is_dir() { 0o700 } else { 0o600 };
        check_mode(e.path(), want, out);
    }
}

/// A record file or folder that is a symbolic link, and the commands that
/// put a private copy of what it points to in its place. A folder is
/// copied whole (`cp --remove-destination` cannot replace a link to a
/// folder: issue 37 item 6), and its copy made private.
fn linked(path: &Path, is_dir: bool) -> Finding {
    let target = std::fs::read_link(path).unwrap_or_default();
    let at = shell_quote(&path.to_string_lossy());
    let fix = if is_dir {
        format!(
            "keep the records in the home: t=\"$(readlink -f {at})\" && rm {at} && cp -R \"$t\" {at} && chmod -R go= {at}"
        )
    } else {
        format!("keep the record in the home: cp --remove-destination \"$(readlink -f {at})\" {at}")
    };
    Finding {
        what: format!(
            "{} is a symbolic link to {}: recall reads it but never changes files outside the home",
            path.display(),
            target.display()
        ),
        fix,
    }
}

/// `s` as one POSIX shell word.
fn shell_quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `logs/` 0700 and its files 0600: hook and sync logs quote paths and
/// errors from your sessions.
pub(super) fn check_logs(logs: &Path, out: &mut Vec<Finding>) {
    if !logs.exists() {
        return;
    }
    check_mode(logs, 0o700, out);
    for e in walkdir::WalkDir::new(logs)
        .min_depth(1)
        .max_depth(1)
        .into_iter()
        .flatten()
    {
        if e.file_type().is_file() {
            check_mode(e.path(), 0o600, out);
        }
    }
}

/// A file or folder others can read, with the `chmod` that makes it
/// `want`; a symbolic link is never followed.
pub(super) fn check_mode(path: &Path, want: u32, out: &mut Vec<Finding>) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The link itself, never what it points to.
        if let Some(m) = std::fs::symlink_metadata(path)
            .ok()
            .filter(|m| !m.file_type().is_symlink())
        {
            let mode = m.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                out.push(Finding {
                    what: format!(
                        "{} has mode {mode:o}: other users can read your memory",
                        path.display()
                    ),
                    fix: format!("chmod {want:o} {}", shell_quote(&path.to_string_lossy())),
                });
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (path, want, out);
}
