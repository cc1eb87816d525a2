//! Finding the sources to index: explicit files, folders (recursively),
//! globs, a project's Claude Code transcripts, its Codex rollouts and its
//! Gemini CLI chats.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::store::user_home;

/// File endings considered when walking a folder. Explicit files are always
/// taken, whatever their name.
const WALKED_EXTENSIONS: &[&str] = &["jsonl", "json", "md", "markdown", "txt"];

/// A file to index. `explicit` files were named by the user; files found
/// by walking a folder are skipped quietly when their content is not a
/// transcript or ticket.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Input {
    pub path: PathBuf,
    pub explicit: bool,
}

impl Input {
    /// A file named by the user.
    pub fn explicit(path: impl Into<PathBuf>) -> Input {
        Input {
            path: path.into(),
            explicit: true,
        }
    }

    /// A file found by discovery.
    pub fn found(path: impl Into<PathBuf>) -> Input {
        Input {
            path: path.into(),
            explicit: false,
        }
    }
}

/// Expand files, folders and globs into a sorted, deduplicated file list.
/// A glob that matches nothing is an error naming it; a missing file is
/// kept, for the pipeline to report.
pub fn expand(inputs: &[PathBuf]) -> Result<Vec<Input>> {
    let mut out = Vec::new();
    for input in inputs {
        let s = input.to_string_lossy();
        if input.is_dir() {
            out.extend(walk(input).into_iter().map(Input::found));
        } else if input.exists() {
            out.push(Input::explicit(input.clone()));
        } else if s.contains(['*', '?', '[']) {
            let matches =
                glob::glob(&s).map_err(|e| Error::invalid(format!("invalid glob '{s}': {e}")))?;
            let before = out.len();
            for m in matches.flatten() {
                if m.is_dir() {
                    out.extend(walk(&m).into_iter().map(Input::found));
                } else {
                    out.push(Input::explicit(m));
                }
            }
            if out.len() == before {
                return Err(Error::NotFound(format!("no files match '{s}'")));
            }
        } else {
            // Reported and counted by the pipeline ("cannot read"), so one
            // missing file never aborts a batch.
            out.push(Input::explicit(input.clone()));
        }
    }
    out.sort();
    out.dedup_by(|a, b| a.path == b.path);
    Ok(out)
}

/// The files of `dir` to index. A folder the walk cannot read is given
/// too, for the pipeline to report as a failure (skipped without a word,
/// its files would look deleted to `index --prune`), and so is a linked
/// folder it does not follow, for the pipeline to name as skipped.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let entries = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    for entry in entries {
        let e = match entry {
            Ok(e) => e,
            Err(err) => {
                out.extend(err.path().filter(|p| p.is_dir()).map(Path::to_path_buf));
                continue;
            }
        };
        // Symlinked files are indexed (transcripts are often linked into
        // an export folder); symlinked folders are not followed, so a link
        // loop cannot make the walk endless. The pipeline names each one
        // it passed over.
        if e.depth() > 0 && e.path_is_symlink() && e.path().is_dir() {
            out.push(e.into_path());
            continue;
        }
        let file = e.file_type().is_file() || (e.path_is_symlink() && e.path().is_file());
        let walked = e
            .path()
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| WALKED_EXTENSIONS.contains(&x));
        // A FIFO, socket or device, or a link to nothing, with a
        // transcript's name: handed on, so the pipeline names it and why
        // it is not read, rather than passing it over without a word.
        let other = !file && !e.path().is_dir();
        if walked && (file || other) {
            out.push(e.into_path());
        }
    }
    out
}

/// The folder name Claude Code uses for a project under
/// `~/.claude/projects/`: the absolute root path with every character that
/// is not an ASCII letter or digit replaced by `-`
/// (`/home/me/my.app` -> `-home-me-my-app`).
pub fn claude_project_dir_name(root: &Path) -> String {
    root.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Default Claude Code home: `~/.claude`, with `$HOME` read through `env`.
pub fn default_claude_home(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    user_home(env).map(|h| h.join(".claude"))
}

/// Default Codex home: `$CODEX_HOME` or `~/.codex`, read through `env`.
pub fn default_codex_home(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| user_home(env).map(|h| h.join(".codex")))
}

/// Every `*.jsonl` under `<claude_home>/projects/<mapped root>/`, including
/// `<session>/subagents/agent-*.jsonl`, that belongs to `root`.
///
/// The folder name is not enough: `/x/my.app` and `/x/my-app` map to the
/// same folder. Every transcript line carries the session's `cwd`, so a
/// file is taken only when its first `cwd` [belongs](belongs_to) to `root`
/// (a file without any `cwd` is taken on the folder name alone).
pub fn claude_code_transcripts(claude_home: &Path, root: &Path) -> Vec<PathBuf> {
    let dir = claude_home
        .join("projects")
        .join(claude_project_dir_name(root));
    walk(&dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| first_cwd(p).is_none_or(|cwd| belongs_to(Path::new(&cwd), root)))
        .collect()
}

/// Claude Code transcripts that look like this project's from before it
/// moved: recorded in a folder of the same name as `root`'s that no longer
/// exists. Each such folder, with its number of transcripts. Only a hint:
/// the user says whether the project moved (`recall project move`).
pub fn claude_code_moved_away(claude_home: &Path, root: &Path) -> Vec<(PathBuf, usize)> {
    let Some(name) = root.file_name() else {
        return Vec::new();
    };
    let suffix = format!("-{}", claude_project_dir_name(Path::new(name)));
    let own = claude_project_dir_name(root);
    let Ok(entries) = std::fs::read_dir(claude_home.join("projects")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for dir in entries.flatten() {
        let dir_name = dir.file_name().to_string_lossy().into_owned();
        if dir_name == own || !dir_name.ends_with(&suffix) {
            continue;
        }
        let files: Vec<PathBuf> = walk(&dir.path())
            .into_iter()
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        let Some(cwd) = files.iter().find_map(|f| first_cwd(f)) else {
            continue;
        };
        let cwd = PathBuf::from(cwd);
        if cwd.file_name() == Some(name) && cwd != root && !cwd.exists() {
            out.push((cwd, files.len()));
        }
    }
    out.sort();
    out
}

/// Whether a session run in `cwd` belongs to the project at `root`: `cwd`
/// is `root` or inside it, and not inside another git repository nested
/// below `root` (a child repository is a project of its own, and its
/// sessions are indexed there, not in the parent).
///
/// Both paths are resolved first when they exist (a transcript records the
/// path as typed; the project root is canonical).
pub fn belongs_to(cwd: &Path, root: &Path) -> bool {
    let resolve = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (cwd, root) = (resolve(cwd), resolve(root));
    let (cwd, root) = (cwd.as_path(), root.as_path());
    if !cwd.starts_with(root) {
        return false;
    }
    cwd.ancestors()
        .take_while(|a| *a != root)
        .all(|a| !a.join(".git").exists())
}

/// The first `cwd` among a transcript's first lines (Claude Code puts it on
/// every message line; summary lines have none).
fn first_cwd(path: &Path) -> Option<String> {
    let f = std::fs::File::open(path).ok()?;
    let reader = BufReader::new(f).take(4 << 20);
    for line in reader.lines().take(64) {
        let Ok(line) = line else { break };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if let Some(cwd) = v["cwd"].as_str().filter(|c| !c.is_empty()) {
            return Some(cwd.to_string());
        }
    }
    None
}

/// Rollouts under `<codex_home>/sessions/` whose `session_meta.cwd`
/// [belongs](belongs_to) to `root`: `root` or inside it, but not inside a
/// nested repository. Only each file's first line is read.
pub fn codex_rollouts(codex_home: &Path, root: &Path) -> Vec<PathBuf> {
    walk(&codex_home.join("sessions"))
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
        })
        .filter(|p| rollout_cwd(p).is_some_and(|cwd| belongs_to(Path::new(&cwd), root)))
        .collect()
}

/// The `cwd` of a rollout's `session_meta` line.
fn rollout_cwd(path: &Path) -> Option<String> {
    let f = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    BufReader::new(f).take(1 << 20).read_line(&mut line).ok()?;
    let v: serde_json::Value = serde_json::from_str(&line).ok()?;
    let payload = if v["type"] == "session_meta" {
        &v["payload"]
    } else {
        &v
    };
    payload["cwd"].as_str().map(str::to_string)
}

/// Default Gemini CLI folder: `.gemini` in `$GEMINI_CLI_HOME`, which Gemini
/// CLI reads as the home folder (`homedir()` in its `utils/paths.ts`), else
/// in `$HOME`; both read through `env`.
pub fn default_gemini_home(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("GEMINI_CLI_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| user_home(env))
        .map(|h| h.join(".gemini"))
}

/// The name Gemini CLI gave a project's folder under `~/.gemini/tmp/`
/// before v0.29: the SHA-256 of the project's path, in hex (its
/// `getProjectHash`). The chats still carry it as `projectHash`.
pub fn gemini_project_hash(root: &Path) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(root.as_os_str().as_encoded_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The folders under `<gemini_home>/tmp/` that hold `root`'s sessions, or
/// those of a folder inside it (Gemini CLI's project is the folder it was
/// started in; one inside a nested repository is that repository's, see
/// [`belongs_to`]):
/// - since v0.29 a short name (`my-app`, `my-app-1`) whose folder holds a
///   `.project_root` file naming the project's path, and which
///   `~/.gemini/projects.json` maps the path to;
/// - before, [`gemini_project_hash`] of the path; Gemini CLI renames that
///   folder when it next starts in the project. Only `root`'s own hash can
///   be found this way (a hash names no path), not a subfolder's.
pub fn gemini_project_dirs(gemini_home: &Path, root: &Path) -> Vec<PathBuf> {
    let tmp = gemini_home.join("tmp");
    let mut dirs = vec![tmp.join(gemini_project_hash(root))];
    for entry in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        let marker = entry.path().join(".project_root");
        if let Some(owner) = read_small(&marker) {
            if belongs_to(Path::new(owner.trim()), root) {
                dirs.push(entry.path());
            }
        }
    }
    for (path, short) in gemini_registry(gemini_home) {
        let dir = tmp.join(&short);
        // A folder whose marker names another project is not this one's,
        // whatever the registry says.
        let owner = read_small(&dir.join(".project_root"));
        if belongs_to(Path::new(&path), root)
            && owner.is_none_or(|o| belongs_to(Path::new(o.trim()), root))
        {
            dirs.push(dir);
        }
    }
    dirs.retain(|d| d.is_dir());
    dirs.sort();
    dirs.dedup();
    dirs
}

/// `projects.json`'s `path -> short name` pairs; names that are not plain
/// folder names (`^[a-z0-9-]+$`, as Gemini CLI writes them) are ignored.
fn gemini_registry(gemini_home: &Path) -> Vec<(String, String)> {
    #[derive(serde::Deserialize)]
    struct Registry {
        #[serde(default)]
        projects: std::collections::BTreeMap<String, serde_json::Value>,
    }
    let Some(text) = read_small(&gemini_home.join("projects.json")) else {
        return vec![];
    };
    let Ok(registry) = serde_json::from_str::<Registry>(&text) else {
        return vec![];
    };
    let plain = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    registry
        .projects
        .into_iter()
        .filter_map(|(path, v)| Some((path, v.as_str().filter(|s| plain(s))?.to_string())))
        .collect()
}

/// A small text file (a marker, the registry): at most 4 MB is read.
fn read_small(path: &Path) -> Option<String> {
    let f = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    f.take(4 << 20).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The Gemini CLI chats of `root` (see [`gemini_project_dirs`]):
/// `chats/session-*.json` and `chats/session-*.jsonl`, and sub-agents'
/// `chats/<parent session>/*.jsonl`. A `.json` chat that Gemini CLI has
/// since carried over into a `.jsonl` of the same name (it does when a
/// session is resumed) is left out: the log holds all of it.
pub fn gemini_chats(gemini_home: &Path, root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in gemini_project_dirs(gemini_home, root) {
        let chats = dir.join("chats");
        for path in walk(&chats) {
            let ext = path.extension().and_then(|x| x.to_str()).unwrap_or("");
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let top = path.parent() == Some(chats.as_path());
            let chat = match (top, ext) {
                (true, "json") => {
                    name.starts_with("session-") && !path.with_extension("jsonl").exists()
                }
                (true, "jsonl") => name.starts_with("session-"),
                (false, "jsonl") => true,
                _ => false,
            };
            if chat {
                out.push(path);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The launchers' homes come from the environment the caller passes,
    /// not the process's (`dirs` read the process's own).
    #[test]
    fn launcher_homes_follow_the_given_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let home = env(&[("HOME", "/h")]);
        assert_eq!(default_claude_home(home), Some(PathBuf::from("/h/.claude")));
        assert_eq!(default_codex_home(home), Some(PathBuf::from("/h/.codex")));
        let codex = env(&[("HOME", "/h"), ("CODEX_HOME", "/c")]);
        assert_eq!(default_codex_home(codex), Some(PathBuf::from("/c")));
        assert_eq!(default_gemini_home(home), Some(PathBuf::from("/h/.gemini")));
        let gemini = env(&[("HOME", "/h"), ("GEMINI_CLI_HOME", "/g")]);
        assert_eq!(
            default_gemini_home(gemini),
            Some(PathBuf::from("/g/.gemini"))
        );
        let none = env(&[("HOME", ""), ("CODEX_HOME", ""), ("GEMINI_CLI_HOME", "")]);
        assert_eq!(default_claude_home(none), None);
        assert_eq!(default_codex_home(none), None);
        assert_eq!(default_gemini_home(none), None);
    }

    /// The hash is the SHA-256 of the project's path: the real chat in
    /// `testdata/gemini/entireio-cli/` carries `projectHash` 7e8989f7...,
    /// and its tool output names the project's path.
    #[test]
    fn gemini_project_hash_is_the_sha256_of_the_path() {
        let root = Path::new("/Users/peytonmontei/Documents/entire/devenv/entireio/cli");
        assert_eq!(
            gemini_project_hash(root),
            "7e8989f71805c3147f6be9b7a71de2a156f8face69f9380beeeb8a777414f21c"
        );
        let real = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/gemini/entireio-cli/session-2026-01-10T02-08-faff42ab.json"
        ))
        .unwrap();
        assert!(real.contains(&gemini_project_hash(root)));
        assert!(real.contains(root.to_str().unwrap()));
    }

    /// A project's chats are found in its hash folder (before v0.29), in
    /// every short-name folder whose `.project_root` names it or a folder
    /// inside it, and through `projects.json`; not in another project's
    /// folder, not in a nested repository's, and a `.json` carried over
    /// into a `.jsonl` is taken once.
    #[test]
    fn gemini_chats_of_a_project() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("app");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(root.join("vendor/lib/.git")).unwrap();
        let root = std::fs::canonicalize(root).unwrap();
        let home = t.path().join(".gemini");
        let tmp = home.join("tmp");
        let folder = |name: &str, owner: Option<&Path>, files: &[&str]| {
            let chats = tmp.join(name).join("chats");
            for f in files {
                let p = chats.join(f);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, "{}").unwrap();
            }
            std::fs::create_dir_all(tmp.join(name)).unwrap();
            if let Some(o) = owner {
                std::fs::write(tmp.join(name).join(".project_root"), o.to_str().unwrap()).unwrap();
            }
        };
        let hash = gemini_project_hash(&root);
        folder(
            &hash,
            None,
            &["session-2025-09-01T10-00-aaaaaaaa.json", "notes.txt"],
        );
        folder(
            "app",
            Some(&root),
            &[
                "session-2026-03-01T10-00-bbbbbbbb.json",
                "session-2026-03-01T10-00-bbbbbbbb.jsonl",
                "session-2026-04-01T10-00-cccccccc.json.tmp-12",
                "bbbbbbbb-full-id/dddddddd-sub.jsonl",
                "logs.json",
            ],
        );
        folder(
            "sub",
            Some(&root.join("sub")),
            &["session-2026-05-01T10-00-eeeeeeee.jsonl"],
        );
        folder(
            "lib",
            Some(&root.join("vendor/lib")),
            &["session-2026-05-01T10-00-ffffffff.jsonl"],
        );
        folder(
            "other",
            Some(Path::new("/elsewhere/app")),
            &["session-2026-05-01T10-00-99999999.jsonl"],
        );
        folder("app-1", None, &["session-2026-06-01T10-00-12121212.jsonl"]);
        let registry = serde_json::json!({"projects": {
            root.to_str().unwrap(): "app", root.join("x").to_str().unwrap(): "app-1",
            "/elsewhere": "../../escape"
        }});
        std::fs::write(home.join("projects.json"), registry.to_string()).unwrap();
        let mut got: Vec<String> = gemini_chats(&home, &root)
            .iter()
            .map(|p| p.strip_prefix(&tmp).unwrap().to_string_lossy().into_owned())
            .collect();
        got.sort();
        let mut want = vec![
            format!("{hash}/chats/session-2025-09-01T10-00-aaaaaaaa.json"),
            "app-1/chats/session-2026-06-01T10-00-12121212.jsonl".to_string(),
            "app/chats/bbbbbbbb-full-id/dddddddd-sub.jsonl".to_string(),
            "app/chats/session-2026-03-01T10-00-bbbbbbbb.jsonl".to_string(),
            "sub/chats/session-2026-05-01T10-00-eeeeeeee.jsonl".to_string(),
        ];
        want.sort();
        assert_eq!(got, want);
        assert!(gemini_chats(&t.path().join("none"), &root).is_empty());
    }

    #[test]
    fn claude_folder_name_mapping() {
        assert_eq!(
            claude_project_dir_name(Path::new("/home/me/my.app")),
            "-home-me-my-app"
        );
        assert_eq!(
            claude_project_dir_name(Path::new("/tmp/private")),
            "-tmp-private"
        );
        assert_eq!(claude_project_dir_name(Path::new("/a/b_c d")), "-a-b-c-d");
    }

    #[test]
    fn expand_walks_folders_and_globs_and_rejects_missing() -> Result<()> {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("a/.hidden")).unwrap();
        for f in [
            "a/x.jsonl",
            "a/y.md",
            "a/z.bin",
            "a/.hidden/h.jsonl",
            "b.txt",
        ] {
            std::fs::write(t.path().join(f), "x").unwrap();
        }
        let got = expand(&[t.path().join("a")])?;
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got.iter().all(|i| !i.explicit));
        let got = expand(&[t.path().join("*.txt")])?;
        assert_eq!(got, vec![Input::explicit(t.path().join("b.txt"))]);
        assert_eq!(
            expand(&[t.path().join("missing")])?,
            vec![Input::explicit(t.path().join("missing"))]
        );
        assert!(expand(&[t.path().join("nomatch*.x")]).is_err());
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn walk_takes_symlinked_files_but_not_symlinked_folders() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real");
        std::fs::create_dir_all(real.join("sub")).unwrap();
        std::fs::write(real.join("sub/a.jsonl"), "{}").unwrap();
        let walked = t.path().join("walked");
        std::fs::create_dir_all(&walked).unwrap();
        std::os::unix::fs::symlink(real.join("sub/a.jsonl"), walked.join("link.jsonl")).unwrap();
        std::os::unix::fs::symlink(&real, walked.join("loop")).unwrap();
        // The linked folder itself is handed on, for the pipeline to name
        // as skipped; nothing inside it is walked.
        assert_eq!(
            walk(&walked),
            vec![walked.join("link.jsonl"), walked.join("loop")]
        );
    }

    #[test]
    fn codex_rollouts_filtered_by_cwd() {
        let t = tempfile::tempdir().unwrap();
        let day = t.path().join("sessions/2026/01/02");
        std::fs::create_dir_all(&day).unwrap();
        let line = |cwd: &str| {
            format!("{{\"timestamp\":\"2026-01-02T00:00:00Z\",\"type\":\"session_meta\",\"payload\":{{\"id\":\"s\",\"cwd\":\"{cwd}\"}}}}\n")
        };
        std::fs::write(day.join("rollout-a.jsonl"), line("/work/app/sub")).unwrap();
        std::fs::write(day.join("rollout-b.jsonl"), line("/work/other")).unwrap();
        std::fs::write(day.join("notes.jsonl"), line("/work/app")).unwrap();
        let got = codex_rollouts(t.path(), Path::new("/work/app"));
        assert_eq!(got, vec![day.join("rollout-a.jsonl")]);
    }

    /// Regression (issue probe: `index --claude-code` in `my-app` indexed
    /// the sessions of `my.app`, which maps to the same Claude Code folder).
    #[test]
    fn r_claude_code_sessions_of_a_colliding_repo_are_not_taken() {
        let t = tempfile::tempdir().unwrap();
        let (dotted, dashed) = (t.path().join("my.app"), t.path().join("my-app"));
        let folder = t
            .path()
            .join("claude/projects")
            .join(claude_project_dir_name(&dashed));
        assert_eq!(
            claude_project_dir_name(&dotted),
            claude_project_dir_name(&dashed)
        );
        std::fs::create_dir_all(&folder).unwrap();
        let session = |cwd: &Path| {
            format!(
                "{{\"type\":\"summary\",\"summary\":\"x\"}}\n{{\"type\":\"user\",\"cwd\":{:?},\"message\":{{\"role\":\"user\",\"content\":\"hi\"}}}}\n",
                cwd.to_str().unwrap()
            )
        };
        std::fs::write(folder.join("mine.jsonl"), session(&dashed)).unwrap();
        std::fs::write(folder.join("theirs.jsonl"), session(&dotted)).unwrap();
        std::fs::write(folder.join("old.jsonl"), "{\"type\":\"summary\"}\n").unwrap();
        let mut got = claude_code_transcripts(&t.path().join("claude"), &dashed);
        got.sort();
        assert_eq!(got, [folder.join("mine.jsonl"), folder.join("old.jsonl")]);
        let got = claude_code_transcripts(&t.path().join("claude"), &dotted);
        assert!(got.contains(&folder.join("theirs.jsonl")));
        assert!(!got.contains(&folder.join("mine.jsonl")));
    }

    /// A session run inside a git repository nested in the project is the
    /// nested repository's, not the parent's.
    #[test]
    fn sessions_in_a_nested_repository_belong_to_it() {
        let t = tempfile::tempdir().unwrap();
        let parent = t.path().join("parent");
        let child = parent.join("libs/child");
        std::fs::create_dir_all(child.join(".git")).unwrap();
        std::fs::create_dir_all(parent.join("src")).unwrap();
        assert!(belongs_to(&parent.join("src"), &parent));
        assert!(belongs_to(&parent, &parent));
        assert!(!belongs_to(&child, &parent));
        assert!(!belongs_to(&child.join("src"), &parent));
        assert!(belongs_to(&child.join("src"), &child));
        assert!(!belongs_to(t.path(), &parent));
    }
}
