//! File paths that hold a secret: a transcript named after a token, a
//! folder named `PASSWORD=...`, a record file written by hand.
//!
//! A path is text recall stores (`sources.path`, `records.path`) and prints
//! (query output, the prompt hook, the REST API, `extract --status`), so
//! [`redact_path`] redacts it like any text: each part between `/` on its
//! own, so a secret never reaches across a folder, and the whole again in
//! case one does. A path that held a secret also gets `#` and a hash of the
//! real path, so two files whose names differ only in their secret stay
//! two rows; the same path always gives the same text, so it still keys
//! incremental indexing: a file's row is found again by redacting the
//! path of the file in hand. The real path is stored nowhere.
//!
//! Going the other way (pruning a source whose file is gone, extracting a
//! session, re-reading a record) needs the file itself: [`find_path`] walks
//! the stored path, listing the folder of each redacted part and keeping
//! the entries that redact to it, and takes the candidate whose hash is
//! the stored one. A secret that reaches across a `/` (the path of a Slack
//! webhook, say) is redacted in the whole path, and such a path is not
//! found again: its source counts as gone.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::{contains_secret, redact};

/// Hex digits of the hash that keeps redacted paths apart.
const PATH_HASH_CHARS: usize = 12;

/// Most paths a walk keeps at once: a folder with more entries that
/// redact the same way is not searched further.
const MAX_CANDIDATES: usize = 64;

/// `path` unchanged when it holds no secret; otherwise every secret
/// replaced by `[REDACTED:<kind>]` and `#<hash of the path>` added, as in
/// `/work/d1/[REDACTED:github-token].jsonl#3fa9c0d1e2b4`.
pub fn redact_path(path: &str) -> Cow<'_, str> {
    if !contains_secret(path) {
        return Cow::Borrowed(path);
    }
    let parts: Vec<Cow<str>> = path.split('/').map(|p| redact(p).0).collect();
    let mut clean = parts.join("/");
    if contains_secret(&clean) {
        clean = redact(&clean).0.into_owned();
    }
    if contains_secret(&clean) {
        clean = "[REDACTED:path]".into();
    }
    Cow::Owned(format!("{clean}#{}", path_hash(path)))
}

/// The real path of the file stored as `stored` (by [`redact_path`]),
/// relative to `base` as `stored` is, when that file exists.
pub fn find_path(base: &Path, stored: &str) -> Option<PathBuf> {
    let direct = base.join(stored);
    if direct.exists() {
        return Some(direct);
    }
    let (body, hash) = stored.rsplit_once('#')?;
    let redacted = hash.len() == PATH_HASH_CHARS
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
        && body.contains("[REDACTED:");
    if !redacted {
        return None;
    }
    walk(base, body)
        .into_iter()
        .find(|real| path_hash(real) == hash && base.join(real).exists())
        .map(|real| base.join(real))
}

/// The paths whose parts redact to those of `body`: each part without a
/// redaction is taken as it is, and each with one is matched against the
/// entries of the folder the walk has reached.
fn walk(base: &Path, body: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for (i, part) in body.split('/').enumerate() {
        let join = |prefix: &str, name: &str| match i {
            0 => name.to_owned(),
            _ => format!("{prefix}/{name}"),
        };
        if !part.contains("[REDACTED:") {
            found = match i {
                0 => vec![part.to_owned()],
                _ => found.iter().map(|p| join(p, part)).collect(),
            };
            continue;
        }
        let prefixes = if i == 0 {
            vec![None]
        } else {
            found.iter().map(Some).collect()
        };
        let mut next = Vec::new();
        for prefix in prefixes {
            let dir = match prefix {
                None if base.as_os_str().is_empty() => PathBuf::from("."),
                None => base.to_path_buf(),
                // An absolute path: its first part is the root.
                Some(p) if p.is_empty() => PathBuf::from("/"),
                Some(p) => base.join(p),
            };
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if redact(&name).0 == part {
                    next.push(join(prefix.map_or("", String::as_str), &name));
                }
            }
        }
        next.truncate(MAX_CANDIDATES);
        found = next;
        if found.is_empty() {
            break;
        }
    }
    found
}

/// The first hex digits of the path's blake3 hash.
fn path_hash(path: &str) -> String {
    let hash = blake3::hash(path.as_bytes()).to_hex();
    hash[..PATH_HASH_CHARS].to_owned()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn clean_paths_are_borrowed() {
        let p = "/home/dev/.claude/projects/-home-dev-app/0c1d2e3f.jsonl";
        assert!(matches!(redact_path(p), Cow::Borrowed(_)));
        assert!(matches!(
            redact_path("records/decisions/use-pnpm.md"),
            Cow::Borrowed(_)
        ));
    }

    /// Regression (issue #37: a transcript's file name kept its token in
    /// `sources.path` and everything that prints it). The secret goes; the
    /// same path gives the same text, two paths two texts.
    #[test]
    fn r37_a_path_holding_a_secret_is_redacted_with_a_stable_hash() {
        let token = github();
        let a = format!("/work/d1/{token}.jsonl");
        let b = format!("/work/d1/{}.jsonl", aws_key());
        let ra = redact_path(&a);
        assert!(
            ra.starts_with("/work/d1/[REDACTED:github-token].jsonl#"),
            "{ra}"
        );
        assert_eq!(ra, redact_path(&a), "stable");
        assert_ne!(ra, redact_path(&b), "distinct");
        assert!(!contains_secret(&ra) && !ra.contains(&token[4..]), "{ra}");
        // Redacting again changes nothing: a stored path is its own key.
        assert!(matches!(redact_path(&ra), Cow::Borrowed(_)));
        let folder = format!("/work/PASSWORD={}/s.jsonl", "hunter2-Xy");
        let rf = redact_path(&folder);
        assert!(
            rf.starts_with("/work/PASSWORD=[REDACTED:password-assignment]/s.jsonl#"),
            "{rf}"
        );
    }

    #[test]
    fn r37_a_redacted_path_finds_its_file_again() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let dir = root.join(format!("PASSWORD={}", "hunter2-Xy"));
        std::fs::create_dir(&dir).unwrap();
        let token = github();
        let real = dir.join(format!("{token}.jsonl"));
        let twin = dir.join(format!("ghp_{}.jsonl", mixed(40)));
        std::fs::write(&real, "x").unwrap();
        std::fs::write(&twin, "y").unwrap();
        let stored = redact_path(real.to_str().unwrap()).into_owned();
        assert_eq!(find_path(Path::new(""), &stored), Some(real.clone()));
        // Relative to a base, as records are stored.
        let rel = format!("PASSWORD={}/{token}.jsonl", "hunter2-Xy");
        let stored_rel = redact_path(&rel).into_owned();
        assert_eq!(find_path(&root, &stored_rel), Some(root.join(&rel)));
        // A clean path is found as it is; a gone file is not found.
        assert_eq!(find_path(&root, "missing.jsonl"), None);
        std::fs::remove_file(&real).unwrap();
        assert_eq!(find_path(Path::new(""), &stored), None);
    }
}
